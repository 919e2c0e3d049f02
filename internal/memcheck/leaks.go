package memcheck

import (
	"regexp"
	"strings"
	"testing"
)

// Kind is one line of a LEAK SUMMARY.
type Kind struct {
	Bytes, Blocks uint64
}

// Kinds are a LEAK SUMMARY's lines: definitely lost, indirectly lost,
// possibly lost, still reachable, in that order (profile.LeakKind's).
type Kinds [4]Kind

// KindWords are the summary's words for the kinds.
var KindWords = [4]string{"definitely lost", "indirectly lost", "possibly lost", "still reachable"}

var kindRE = regexp.MustCompile(`(definitely lost|indirectly lost|possibly lost|still reachable): ([\d,]+) bytes in ([\d,]+) blocks`)

// ParseKinds returns the first LEAK SUMMARY in text (valgrind's or the
// runtime's, which uses the same words). A summary that says every block
// was freed is all zeros.
func ParseKinds(text string) (Kinds, bool) {
	var k Kinds
	seen := 0
	for _, m := range kindRE.FindAllStringSubmatch(text, -1) {
		for i, w := range KindWords {
			if m[1] == w && seen&(1<<i) == 0 {
				k[i] = Kind{num(m[2]), num(m[3])}
				seen |= 1 << i
			}
		}
	}
	if seen == 0 && strings.Contains(text, "no leaks are possible") {
		return k, true
	}
	return k, seen == 15
}

// RunLeaks runs argv under memcheck with a full leak check (the C
// library's buffers left as the program leaves them, as Run) and returns
// its first process's LEAK SUMMARY. The weave runtime writes nothing and
// does not scan (env, added last, may change that).
func RunLeaks(t testing.TB, dir string, env []string, argv ...string) Kinds {
	t.Helper()
	out := valgrind(t, dir, append([]string{"WEAVE_SUMMARY=0", "WEAVE_OUT=", "WEAVE_LEAK_SCAN=0"}, env...),
		[]string{"--leak-check=full", "--show-leak-kinds=all"}, argv)
	k, ok := ParseKinds(out)
	if !ok {
		t.Fatalf("valgrind %v: no leak summary in:\n%s", argv, out)
	}
	return k
}
