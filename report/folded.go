package report

import (
	"bufio"
	"io"
	"slices"
	"strconv"
	"strings"
)

func init() { Register("folded", foldedRenderer{}) }

// foldedRenderer writes folded stacks, the text flamegraph.pl, inferno and
// speedscope read: one line per distinct stack, its frames outermost first
// separated by ';', a space and the value of the report's quantity (self
// values: each context's own allocations, calls or time). Threads are
// merged; lines are sorted by stack.
type foldedRenderer struct{}

// foldedEscape keeps a label one frame: ';' separates frames.
var foldedEscape = strings.NewReplacer(";", ":", "\n", " ")

func (foldedRenderer) Render(w io.Writer, r *Report) error {
	sums := map[string]int64{}
	var b strings.Builder
	r.WalkStacks(func(_ int, frames []StackFrame, v *Values) {
		n := v.Get(r.Quantity)
		if n == 0 {
			return
		}
		b.Reset()
		for i := range frames {
			if i > 0 {
				b.WriteByte(';')
			}
			b.WriteString(foldedEscape.Replace(frames[i].Label))
		}
		sums[b.String()] += n
	})
	keys := make([]string, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	bw := bufio.NewWriter(w)
	for _, k := range keys {
		bw.WriteString(k)
		bw.WriteByte(' ')
		bw.WriteString(strconv.FormatInt(sums[k], 10))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
