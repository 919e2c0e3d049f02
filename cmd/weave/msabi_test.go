package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestMSABIShared: a woven shared object's ms_abi function
// (testdata/msabi/lib.c, as libffi's ffi_closure_win64_inner) reads its
// arguments after its frame's guard as the plain build does, and the
// callback's block is charged under it. Its guards read __weave_tls
// through __tls_get_addr in a shared object, a sequence gcc declares
// changes none of the registers ms_abi code keeps (rsi, rdi, xmm6-15):
// gcc -O1 and -O2 kept an argument in rdi across it and the program
// printed 7 7 where the plain one prints 7 106 (libffi's test-callback:
// 65 of its ms_abi tests failed woven).
func TestMSABIShared(t *testing.T) {
	for _, cc := range []string{"gcc", "clang"} {
		for _, opt := range []string{"-O0", "-O1", "-O2"} {
			t.Run(cc+opt, func(t *testing.T) {
				testtool.Need(t, cc)
				dir := t.TempDir()
				src := func(name string) string {
					p, err := filepath.Abs(filepath.Join("..", "..", "testdata", "msabi", name))
					if err != nil {
						t.Fatal(err)
					}
					return p
				}
				env := []string{"WEAVE_CC=" + cc}
				for _, side := range []string{"plain", "woven"} {
					d := filepath.Join(dir, side)
					if err := os.Mkdir(d, 0o755); err != nil {
						t.Fatal(err)
					}
					lib := []string{cc}
					if side == "woven" {
						lib = []string{weaveBin, "cc"}
					}
					mustRun(t, dir, env, append(lib, opt, "-fPIC", "-shared", "-o", filepath.Join(d, "libms.so"), src("lib.c"))...)
					mustRun(t, dir, env, append(lib, opt, "-o", filepath.Join(d, "main"), src("main.c"), "-L"+d, "-lms", "-Wl,-rpath,"+d)...)
				}
				pr := run(t, dir, nil, filepath.Join(dir, "plain", "main"))
				prof := filepath.Join(dir, "ms.prof")
				wr := run(t, dir, []string{"WEAVE_OUT=" + prof}, filepath.Join(dir, "woven", "main"))
				if pr.stdout != "7 106\n" || !sameRun(t, cc+opt, pr, wr) {
					t.Fatalf("plain: %q, woven: %q", pr.stdout, wr.stdout)
				}
				folded := mustRun(t, "", nil, weaveBin, "report", prof, "--format", "folded").stdout
				if !strings.Contains(folded, "main;inner;sum 16\n") {
					t.Errorf("sum's block is not under inner:\n%s", folded)
				}
			})
		}
	}
}
