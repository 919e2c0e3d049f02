package main

// Profiles written while the program runs (WEAVE_CHECKPOINT) and into a
// stream (WEAVE_OUT=/dev/stdout).

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weave-profiler/weave/profile"
)

// TestCheckpoint: WEAVE_CHECKPOINT=1 writes the profile every second
// while the program runs; a run killed by SIGKILL leaves its last
// checkpoint (a whole profile, marked as such), a run that ends normally
// leaves its final profile in its place.
func TestCheckpoint(t *testing.T) {
	dir := t.TempDir()
	exe, _ := buildLeaks(t, dir, "checkpoint")
	prof := filepath.Join(dir, "c.prof")
	cmd := exec.Command(exe, "30")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WEAVE_OUT="+prof, "WEAVE_CHECKPOINT=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	allocs := func(p *profile.Profile) (n uint64) {
		for _, x := range p.Nodes {
			if x.Kind == profile.KindAlloc {
				n += x.Heap.TotalAllocs()
			}
		}
		return n
	}
	// The first checkpoint, then a later one replacing it (counting more).
	var first, last uint64
	for i := 0; i < 300 && (first == 0 || last <= first); i++ {
		time.Sleep(100 * time.Millisecond)
		if p, err := profile.ReadFile(prof); err == nil {
			if first == 0 {
				first = allocs(p)
			}
			last = allocs(p)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	if first == 0 || last <= first {
		t.Fatalf("checkpoints within 30 s: first counts %d allocations, last %d", first, last)
	}
	p, err := profile.ReadFile(prof)
	if err != nil {
		t.Fatalf("the last checkpoint: %v", err)
	}
	if end, _ := p.MetaValue("end"); end != "checkpoint" || p.Scanned() {
		t.Errorf("checkpoint: end %q, scanned %v", end, p.Scanned())
	}
	rep := mustRun(t, dir, nil, weaveBin, "report", "--tables", "leaks", prof)
	if !regexp.MustCompile(`CHECKPOINT: written while the program ran, \d+\.\d+ s after it started`).MatchString(rep.stdout) {
		t.Errorf("report of a checkpoint:\n%s", rep.stdout)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.prof")); len(files) != 1 {
		t.Errorf("files %v", files)
	}
	// the HTML page too (it said INCOMPLETE: ... crashed or aborted)
	page := mustRun(t, dir, nil, weaveBin, "report", "--format", "html", prof).stdout
	if !strings.Contains(page, "CHECKPOINT: written while the program ran") || strings.Contains(page, "INCOMPLETE") {
		t.Errorf("the HTML page of a checkpoint does not say it is one")
	}
	// weave check says why a checkpoint has no leak kinds (it said
	// WEAVE_LEAK_SCAN=0, or valgrind)
	if c := run(t, dir, nil, weaveBin, "check", prof); c.code != 2 || !strings.Contains(c.stderr, "a checkpoint, written while the program ran") {
		t.Errorf("weave check of a checkpoint: exit %d\n%s", c.code, c.stderr)
	}

	// A run that ends: the final profile replaces the checkpoints.
	r := mustRun(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_CHECKPOINT=1"}, exe, "2")
	p, err = profile.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if end, _ := p.MetaValue("end"); end != "exit" || !p.Scanned() || strings.Count(r.stderr, "HEAP SUMMARY") != 1 {
		t.Errorf("final profile: end %q scanned %v\n%s", end, p.Scanned(), r.stderr)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.prof")); len(files) != 1 {
		t.Errorf("files %v", files)
	}
}

// TestCheckpointIntoStream: with the profile going into a stream
// (WEAVE_OUT=/dev/stdout, a pipe), WEAVE_CHECKPOINT is declined with one
// line, and the stream holds the final profile alone. Before, each
// checkpoint was one more profile in it, and weave report - refused the
// stream ("record after the E record").
func TestCheckpointIntoStream(t *testing.T) {
	dir := t.TempDir()
	exe, _ := buildLeaks(t, dir, "checkpoint")
	r := mustRun(t, dir, []string{"WEAVE_OUT=/dev/stdout", "WEAVE_CHECKPOINT=1"}, exe, "3")
	// The program's "done" is flushed at its exit, after the profile.
	text, done := strings.CutSuffix(r.stdout, "done\n")
	if n := strings.Count(text, "weave profile "); !done || n != 1 || !strings.HasPrefix(text, "weave profile ") {
		t.Fatalf("stdout holds %d profiles (want the final one), then the program's output: %v", n, done)
	}
	p, err := profile.Read(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if end, _ := p.MetaValue("end"); end != "exit" || !strings.Contains(r.stderr, "WEAVE_CHECKPOINT: the profile goes into a stream") {
		t.Errorf("end %q; stderr:\n%s", end, r.stderr)
	}
}

// TestReportFromStream: the documented WEAVE_OUT=/dev/stdout ./prog |
// weave report - works for a program that prints: its output, flushed
// after the profile at exit, is skipped. Before, weave report refused the
// stream ("record after the E record").
func TestReportFromStream(t *testing.T) {
	dir := t.TempDir()
	exe, _ := buildLeaks(t, dir, "checkpoint")
	r := mustRun(t, dir, nil, "sh", "-c", `WEAVE_OUT=/dev/stdout WEAVE_SUMMARY=0 "$0" 1 | "$1" report --tables leaks -`, exe, weaveBin)
	mustRun(t, dir, []string{"WEAVE_OUT=f.prof"}, exe, "1")
	f := mustRun(t, dir, nil, weaveBin, "report", "--tables", "leaks", "f.prof")
	allocated := regexp.MustCompile(`(?m)^allocated .*$`)
	if got, want := allocated.FindString(r.stdout), allocated.FindString(f.stdout); got == "" || got != want {
		t.Errorf("report of the stream: %q, of the file: %q\n%s", got, want, r.stdout)
	}
}

// linkerBlocks counts the live blocks the dynamic linker allocated for
// itself (hidden sites of file "(dynamic linker)").
