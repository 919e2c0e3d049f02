package main

import (
	"debug/elf"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
)

// TestLocalAllocatorNames: a woven library that hides all but its API
// (-fvisibility=hidden and a version script's local: *, as libtool's
// -export-symbols-regex makes libcurl's) binds malloc, free, realloc
// inside itself to its own, inactive, copy of the runtime, and libcurl
// calls them through pointers (Curl_cmalloc, Curl_cfree). That copy
// forwarded to the C library's, past the active copy: a block the
// program or the C library allocated and the library freed stayed in the
// profile (woven curl's every run: 166 bytes in 12 blocks definitely lost,
// 163 blocks in use, memcheck 154 with none lost), and its own
// allocations were not counted. testdata/locallib: the woven program's
// output is the plain one's, its summary says nothing, and its totals are
// memcheck's on the plain build. The "hidden" case (the runtime's names
// still exported, so in the chain the active copy forwards along) hung
// when the inactive copy forwarded to the process's malloc regardless.
// -Bsymbolic (and -Bsymbolic-functions) bound the library's calls of the
// runtime to its own copy, which took itself for an active one: a second
// profile written over the first and a second leak summary (31 allocs,
// 3 blocks "definitely lost", for memcheck's 51 with none lost).
func TestLocalAllocatorNames(t *testing.T) {
	for name, link := range map[string][]string{
		"hidden":    {"-fvisibility=hidden"},
		"version":   {"-Wl,--version-script=lib.map"},
		"symbolic":  {"-Wl,-Bsymbolic"},
		"functions": {"-Wl,-Bsymbolic-functions"},
		"undone":    {"-Wl,-Bsymbolic-functions", "-Xlinker", "-Bno-symbolic"},
	} {
		t.Run(name, func(t *testing.T) {
			testtool.Need(t, "gcc")
			dir := t.TempDir()
			src, err := filepath.Abs(filepath.Join("..", "..", "testdata", "locallib"))
			if err != nil {
				t.Fatal(err)
			}
			for _, side := range []string{"plain", "woven"} {
				d := filepath.Join(dir, side)
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
				cc := []string{"gcc"}
				if side == "woven" {
					cc = []string{weaveBin, "cc"}
				}
				lib := append(append(cc, "-O2", "-fPIC", "-shared", "-o", filepath.Join(d, "liblocal.so"), "lib.c"), link...)
				mustRun(t, src, nil, lib...)
				mustRun(t, src, nil, append(cc, "-O2", "-o", filepath.Join(d, "main"), "main.c", "-L"+d, "-llocal", "-Wl,-rpath,"+d)...)
			}
			if name == "hidden" || name == "version" {
				// A library that curates its exports gets no new name but
				// the runtime's __weave_* (wayland-egl's symbols-check
				// failed on malloc, execve, weave_pool_free...).
				pe, we := exportedNames(t, filepath.Join(dir, "plain", "liblocal.so")), exportedNames(t, filepath.Join(dir, "woven", "liblocal.so"))
				we = slices.DeleteFunc(we, func(n string) bool { return strings.HasPrefix(n, "__weave_") })
				if !slices.Equal(pe, we) {
					t.Errorf("the woven library exports %v, the plain one %v", we, pe)
				}
			}
			if name == "hidden" {
				// Such a library's copy in a program that was not woven is
				// active, its malloc and free local: the process's are the
				// C library's, and its profile must say so (it claimed
				// every free seen, and a block the program freed could
				// stay "definitely lost").
				mixed := filepath.Join(dir, "mixed")
				mustRun(t, src, nil, "gcc", "-O2", "-o", mixed, "main.c", "-L"+filepath.Join(dir, "woven"), "-llocal", "-Wl,-rpath,"+filepath.Join(dir, "woven"))
				mprof := filepath.Join(dir, "mixed.prof")
				run(t, dir, []string{"WEAVE_OUT=" + mprof, "WEAVE_SUMMARY=0"}, mixed)
				if p, err := profile.ReadFile(mprof); err != nil || p.FreesSeen() {
					t.Errorf("a woven library in a program that was not woven: frees seen (err %v)", err)
				}
			}
			plain := filepath.Join(dir, "plain", "main")
			pr := run(t, dir, nil, plain)
			prof := filepath.Join(dir, "local.prof")
			wr := run(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_SUMMARY="}, filepath.Join(dir, "woven", "main"))
			if !sameRun(t, name, pr, wr) {
				return
			}
			if hasSummary(wr.stderr) {
				t.Errorf("the woven run reports a leak the plain one has not:\n%s", wr.stderr)
			}
			wt := reportTotals(t, prof)
			if wt.Allocs < 4*10 { // main.c's four allocating calls, ten times
				t.Errorf("weave's totals miss the library's allocations: %+v", wt)
			}
			checkValgrind(t, wt, dir, plain)
		})
	}
}

// exportedNames returns the sorted names of the functions and data the
// shared object at path exports (nm -D --defined-only).
func exportedNames(t *testing.T, path string) []string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF && elf.ST_TYPE(s.Info) != elf.STT_SECTION {
			names = append(names, s.Name)
		}
	}
	slices.Sort(names)
	return names
}
