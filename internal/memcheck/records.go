package memcheck

import (
	"regexp"
	"strings"
	"testing"
)

// Record is a loss record of a leak check: blocks of one kind allocated
// at one stack.
type Record struct {
	Bytes, Blocks uint64   // the blocks' own bytes (not those of blocks lost through them)
	Kind          string   // "definitely lost", ..., as the summary's words
	Frames        []string // "function (file:line)", innermost first, the allocator included
}

// Check is one leak check's output: its loss records and summary.
type Check struct {
	Records []Record
	Kinds   Kinds
}

var (
	recordRE = regexp.MustCompile(`^([\d,]+)(?: \(([\d,]+) direct, [\d,]+ indirect\))? bytes in ([\d,]+) blocks are (definitely lost|indirectly lost|possibly lost|still reachable) in loss record`)
	frameRE  = regexp.MustCompile(`^\s+(?:at|by) 0x[0-9A-Fa-f]+: (.*)$`)
)

// RunChecks runs argv under memcheck with every leak kind shown and
// returns each leak check of its first process in order: those the
// program asks for (VALGRIND_DO_LEAK_CHECK) and the one at exit. The
// weave runtime writes nothing and does not scan.
func RunChecks(t testing.TB, dir string, env []string, argv ...string) []Check {
	t.Helper()
	out := valgrind(t, dir, append([]string{"WEAVE_SUMMARY=0", "WEAVE_OUT=", "WEAVE_LEAK_SCAN=0"}, env...),
		[]string{"--leak-check=full", "--show-leak-kinds=all"}, argv)
	return ParseChecks(out)
}

// ParseChecks splits memcheck's output into its leak checks, each ending
// at its LEAK SUMMARY (or its "All heap blocks were freed" line).
func ParseChecks(out string) []Check {
	var checks []Check
	var cur Check
	var rec *Record
	var summary []string
	for _, l := range strings.Split(out, "\n") {
		l = pidRE.ReplaceAllString(l, "")
		if m := recordRE.FindStringSubmatch(l); m != nil {
			bytes := m[1]
			if m[2] != "" {
				bytes = m[2] // the blocks' own bytes; the indirect ones have their own records
			}
			cur.Records = append(cur.Records, Record{Bytes: num(bytes), Blocks: num(m[3]), Kind: m[4]})
			rec = &cur.Records[len(cur.Records)-1]
			continue
		}
		if m := frameRE.FindStringSubmatch(l); m != nil && rec != nil {
			rec.Frames = append(rec.Frames, m[1])
			continue
		}
		rec = nil
		switch {
		case strings.Contains(l, "LEAK SUMMARY:"):
			summary = []string{}
		case summary != nil && kindRE.MatchString(l):
			summary = append(summary, l)
			if len(summary) == 4 {
				cur.Kinds, _ = ParseKinds(strings.Join(summary, "\n"))
				checks = append(checks, cur)
				cur, summary = Check{}, nil
			}
		case strings.Contains(l, "All heap blocks were freed"):
			checks = append(checks, cur)
			cur = Check{}
		}
	}
	return checks
}
