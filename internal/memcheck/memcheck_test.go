package memcheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

func TestParse(t *testing.T) {
	text := "==12== HEAP SUMMARY:\n==12==     in use at exit: 1,024 bytes in 3 blocks\n" +
		"==12==   total heap usage: 10 allocs, 7 frees, 2,048,000 bytes allocated\n"
	got, ok := Parse(text)
	if want := (Totals{1024, 3, 10, 7, 2048000}); !ok || got != want {
		t.Errorf("Parse = %+v %v, want %+v", got, ok, want)
	}
	if _, ok := Parse("==12== in use at exit: 0 bytes in 0 blocks\n"); ok {
		t.Error("Parse accepted half a summary")
	}
}

// TestRun: a program that forks counts its own allocations, not its
// child's, and leaks what it leaks.
func TestRun(t *testing.T) {
	testtool.Need(t, "gcc", "valgrind")
	dir := t.TempDir()
	src := filepath.Join(dir, "p.c")
	err := os.WriteFile(src, []byte(`#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
int main(void)
{
	void *a = malloc(100), *b = malloc(28);
	free(a);
	if (fork() == 0) {
		malloc(5000);
		return 0;
	}
	wait(0);
	return b == 0 ? 1 : 3;
}
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O0", "-o", filepath.Join(dir, "p"), src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	if got, want := Run(t, dir, nil, filepath.Join(dir, "p")), (Totals{28, 1, 2, 1, 128}); got != want {
		t.Errorf("Run = %+v, want %+v", got, want)
	}
}
