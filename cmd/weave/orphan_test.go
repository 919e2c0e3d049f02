package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
)

// orphanSource: main leaves by pthread_exit, or by the exit system call
// itself (argv[1] "raw"); the process must end with its last thread, as
// without weave, though the runtime's own threads (sampler, control
// channel, checkpoint writer) are still there.
const orphanSource = `#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static char *keep;

static void bye(void) { printf("atexit ran\n"); }

static void *work(void *arg)
{
	usleep(50000);
	keep = malloc(24);
	strcpy(keep, "made by the last thread");
	printf("%s\n", keep);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t;
	atexit(bye);
	if (argc > 1 && strcmp(argv[1], "raw") == 0) {
		char *lost = malloc(10);
		lost[0] = 1;
		fflush(stdout);
		syscall(SYS_exit, 3 + lost[0]);
	}
	pthread_create(&t, NULL, work, NULL);
	pthread_exit(NULL);
}
`

// TestOrphanedRuntimeThreads: a woven process whose program threads have
// all ended ends, with the plain build's output and exit status, soon
// after (it went on forever, unkillable by SIGTERM); when the last one
// left through the C library, exit's handlers run and the profile is
// written, its leak the plain program's.
func TestOrphanedRuntimeThreads(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "o.c"), []byte(orphanSource), 0o644)
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O2", "-o", "woven", "o.c", "-lpthread")
	mustRun(t, dir, nil, "gcc", "-O2", "-o", "plain", "o.c", "-lpthread")
	for _, c := range []struct {
		name string
		arg  string
		env  []string
		// within: how soon after the plain run the woven one must end.
		within time.Duration
	}{
		{"pthread_exit", "", nil, 500 * time.Millisecond},
		{"pthread_exit/exact", "", []string{"WEAVE_TIME=exact"}, 1500 * time.Millisecond},
		{"pthread_exit/control", "", []string{"WEAVE_CONTROL=1"}, 500 * time.Millisecond},
		{"pthread_exit/checkpoint", "", []string{"WEAVE_CHECKPOINT=1"}, 1500 * time.Millisecond},
		{"exit-syscall", "raw", nil, 1500 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			p := runWithin(t, 20*time.Second, dir, nil, "./plain", c.arg)
			plain := time.Since(start)
			prof := filepath.Join(dir, strings.ReplaceAll(c.name, "/", "-")+".prof")
			start = time.Now()
			w := runWithin(t, 20*time.Second, dir, append([]string{"WEAVE_OUT=" + prof, "WEAVE_SUMMARY=0"}, c.env...), "./woven", c.arg)
			woven := time.Since(start)
			if w.code != p.code || w.stdout != p.stdout || w.stderr != p.stderr {
				t.Fatalf("woven: exit %d %q %q; plain: exit %d %q %q", w.code, w.stdout, w.stderr, p.code, p.stdout, p.stderr)
			}
			if woven > plain+c.within {
				t.Errorf("the woven run took %v, the plain one %v", woven, plain)
			}
			if c.arg == "raw" {
				return // no exit handler runs: no profile, as no handler of the program's
			}
			pr, err := profile.ReadFile(prof)
			if err != nil {
				t.Fatal(err)
			}
			var kept uint64
			for _, n := range pr.Nodes {
				if n.Kind == profile.KindAlloc && filepath.Base(n.Site.File) == "o.c" {
					kept += n.Heap.TotalAllocs() - n.Heap.TotalFrees()
				}
			}
			if kept != 1 {
				t.Errorf("%d blocks of o.c in use at exit, want the one the last thread made", kept)
			}
		})
	}
}
