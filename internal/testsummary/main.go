// Command testsummary reads `go test -json` on standard input, prints the
// package results and the output of failed tests as they come, and ends
// with how many tests ran, passed, failed and skipped, naming the skipped
// and failed ones. It exits 1 if a test or package failed.
//
//	go test -json ./... | go run ./internal/testsummary
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// summary is what the events said so far.
type summary struct {
	out     io.Writer
	output  map[string][]string // package+test -> output lines
	passed  int
	failed  []string
	skipped []string // "pkg Test/sub: reason"
	pkgFail []string // packages that failed outside any test (build errors, TestMain)
}

func main() {
	s := &summary{out: os.Stdout, output: map[string][]string{}}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		s.line(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
	if !s.print() {
		os.Exit(1)
	}
}

// line handles one input line: an event, or text go test printed itself
// (a build failure), which is passed through.
func (s *summary) line(b []byte) {
	var e event
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &e) != nil {
		fmt.Fprintf(s.out, "%s\n", b)
		return
	}
	key := e.Package + " " + e.Test
	switch e.Action {
	case "build-output": // a compile error of a package or its tests
		fmt.Fprint(s.out, e.Output)
	case "output":
		s.output[key] = append(s.output[key], e.Output)
	case "pass", "fail", "skip":
		lines := s.output[key]
		delete(s.output, key)
		if e.Test == "" { // the package's result line
			if e.Action == "fail" {
				fmt.Fprint(s.out, strings.Join(lines, ""))
				s.pkgFail = append(s.pkgFail, e.Package)
			}
			if e.Action == "skip" {
				fmt.Fprintf(s.out, "-    %s (no tests)\n", e.Package)
			} else {
				fmt.Fprintf(s.out, "%-4s %s %.1fs\n", e.Action, e.Package, e.Elapsed)
			}
			return
		}
		name := e.Package + " " + e.Test
		switch e.Action {
		case "pass":
			s.passed++
		case "fail":
			s.failed = append(s.failed, name)
			fmt.Fprint(s.out, strings.Join(lines, ""))
		case "skip":
			s.skipped = append(s.skipped, name+": "+skipReason(lines))
		}
	}
}

// logLine matches the first line of a t.Log or t.Skip message.
var logLine = regexp.MustCompile(`^\s+[\w./-]+\.go:\d+: (.*)$`)

// skipReason is the first line of the message a skipped test logged last:
// its t.Skip argument, without the file:line prefix.
func skipReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if m := logLine.FindStringSubmatch(strings.TrimRight(lines[i], "\n")); m != nil {
			return m[1]
		}
	}
	return "(no reason given)"
}

// print writes the totals and the names of the skipped and failed tests,
// and reports whether everything passed.
func (s *summary) print() bool {
	sort.Strings(s.skipped)
	sort.Strings(s.failed)
	ran := s.passed + len(s.failed) + len(s.skipped)
	fmt.Fprintf(s.out, "\ntests (subtests included): %d ran, %d passed, %d failed, %d skipped\n",
		ran, s.passed, len(s.failed), len(s.skipped))
	for _, n := range s.skipped {
		fmt.Fprintf(s.out, "skipped: %s\n", n)
	}
	for _, n := range s.failed {
		fmt.Fprintf(s.out, "FAILED: %s\n", n)
	}
	for _, p := range s.pkgFail {
		fmt.Fprintf(s.out, "FAILED package: %s\n", p)
	}
	return len(s.failed) == 0 && len(s.pkgFail) == 0
}
