package runtime

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestDynamicList: an executable linked with the runtime object's
// dynamic list exports the same symbols as one linked with the pattern
// "__weave_*" (readelf's dynamic symbols, by name, binding and
// visibility), runtime ones among them and not a woven unit's hidden
// table; the list is written once and pruned with its object.
func TestDynamicList(t *testing.T) {
	testtool.Need(t, "gcc", "readelf")
	obj := object(t, "gcc")
	list, err := DynamicList(obj)
	if err != nil {
		t.Fatal(err)
	}
	if list != strings.TrimSuffix(obj, ".o")+".dynlist" {
		t.Errorf("list %s for %s", list, obj)
	}
	fi, err := os.Stat(list)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := DynamicList(obj); err != nil || again != list {
		t.Errorf("second call: %s, %v", again, err)
	} else if fi2, _ := os.Stat(list); !fi2.ModTime().Equal(fi.ModTime()) {
		t.Error("the list was written again")
	}

	dir := t.TempDir()
	src := filepath.Join(dir, "main.c")
	// A woven unit's table: weak, hidden (weave.emitTables).
	prog := `__attribute__((__weak__, __visibility__("hidden"))) const int __weave_fns_test[1] = {1};
int main(void) { return __weave_fns_test[0] - 1; }
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	pattern := filepath.Join(dir, "pattern.dynlist")
	if err := os.WriteFile(pattern, []byte("{ __weave_*; };\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exported := func(list string) string {
		exe := filepath.Join(dir, "main-"+filepath.Base(list))
		if out, err := exec.Command("gcc", "-O2", "-o", exe, src, obj, "-pthread", "-Wl,--dynamic-list="+list).CombinedOutput(); err != nil {
			t.Fatalf("link: %v\n%s", err, out)
		}
		out, err := exec.Command("readelf", "--dyn-syms", "-W", exe).Output()
		if err != nil {
			t.Fatal(err)
		}
		var syms []string
		for _, l := range strings.Split(string(out), "\n") {
			// Num: Value Size Type Bind Vis Ndx Name
			if f := strings.Fields(l); len(f) >= 8 && f[6] != "UND" {
				syms = append(syms, f[7]+" "+f[3]+" "+f[4]+" "+f[5])
			}
		}
		return strings.Join(syms, "\n")
	}
	byName, byPattern := exported(list), exported(pattern)
	if byName != byPattern {
		t.Errorf("exported by name:\n%s\nby pattern:\n%s", byName, byPattern)
	}
	if !strings.Contains(byName, "__weave_malloc FUNC GLOBAL DEFAULT") || strings.Contains(byName, "__weave_fns_test") {
		t.Errorf("exported:\n%s", byName)
	}

	// Pruned with its object: an object gone takes its list along.
	cache := filepath.Dir(obj)
	stale := filepath.Join(cache, "rt-gone.dynlist")
	if err := os.WriteFile(stale, []byte("{ __weave_x; };\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	prune(cache, obj)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("%s: not pruned (%v)", stale, err)
	}
	if _, err := os.Stat(list); err != nil {
		t.Errorf("the list of a kept object: %v", err)
	}
}
