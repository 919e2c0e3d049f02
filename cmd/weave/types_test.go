package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	pprof "github.com/google/pprof/profile"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestSiteTypes builds testdata/types/sites.c, whose sites name their
// types in each form (sizeof(T), k * sizeof(T), sizeof expr, a run-time
// count, a header and what follows) next to a malloc(16) without sizeof,
// the size of another site's char *[2]. Every export gives each site its
// own type, in C, and the sizeless site none: the bin of 16 bytes lists
// char *[2] for vec2's 10 allocations and counts the program's 100
// sizeless ones untyped; the run-time counts are in no bin.
func TestSiteTypes(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	plain, woven := build(t, dir, "gcc", program{"types", []string{"types/sites.c"}, nil}, "-O2")
	pr := run(t, dir, nil, plain, "100")
	wr := run(t, dir, []string{"WEAVE_OUT=t.prof", "WEAVE_SUMMARY=0"}, woven, "100")
	sameRun(t, "sites", pr, wr)
	prof := filepath.Join(dir, "t.prof")

	var rep struct {
		Bins []struct {
			Size    int      `json:"size"`
			Allocs  uint64   `json:"allocs"`
			Types   []string `json:"types"`
			Untyped uint64   `json:"untyped"`
		} `json:"bins"`
		RunTime []struct {
			Type   string `json:"type"`
			Allocs uint64 `json:"allocs"`
		} `json:"run_time_types"`
	}
	js := mustRun(t, "", nil, weaveBin, "report", "--format", "json", prof).stdout
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	want := map[int]struct {
		types   string
		untyped uint64
	}{12: {"int[3]", 0}, 16: {"char *[2]", 100}, 24: {"struct entry", 0}, 32: {"char *[4]", 0}}
	for _, b := range rep.Bins {
		w, ok := want[b.Size]
		if !ok {
			if len(b.Types) != 0 || b.Untyped != b.Allocs {
				t.Errorf("bin %d: types %v, %d untyped of %d: no site of a constant size made it", b.Size, b.Types, b.Untyped, b.Allocs)
			}
			continue
		}
		delete(want, b.Size)
		if got := strings.Join(b.Types, ","); got != w.types || b.Untyped != w.untyped {
			t.Errorf("bin %d: types %q, %d untyped; want %q, %d", b.Size, got, b.Untyped, w.types, w.untyped)
		}
	}
	if len(want) != 0 {
		t.Errorf("bins missing: %v", want)
	}
	var rt []string
	for _, r := range rep.RunTime {
		if r.Allocs != 10 {
			t.Errorf("%s: %d allocations, want 10", r.Type, r.Allocs)
		}
		rt = append(rt, r.Type)
	}
	slices.Sort(rt)
	if got := strings.Join(rt, ","); got != "struct hdr + n,unsigned char[n]" {
		t.Errorf("types of a run-time count %q", got)
	}

	// The same spellings in text, HTML and pprof; cc/v4's never.
	text := mustRun(t, "", nil, weaveBin, "report", prof).stdout
	html := filepath.Join(dir, "t.html")
	mustRun(t, "", nil, weaveBin, "report", "--format", "html", "-o", html, prof)
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for what, s := range map[string]string{"text": text, "json": js, "html": string(page)} {
		for _, w := range []string{"char *[2], 100 untyped", "char *[4]", "struct entry", "int[3]", "unsigned char[n]", "struct hdr + n"} {
			if what == "json" && w == "char *[2], 100 untyped" {
				w = "char *[2]"
			}
			if !strings.Contains(s, w) {
				t.Errorf("%s report: no %q", what, w)
			}
		}
		if strings.Contains(s, "pointer to") || strings.Contains(s, "{key") {
			t.Errorf("%s report spells a type as cc/v4 does", what)
		}
	}
	pb := filepath.Join(dir, "t.pb.gz")
	mustRun(t, "", nil, weaveBin, "report", "--format", "pprof", "-o", pb, prof)
	pp := readPprof(t, pb)
	labels := map[string]string{}
	for _, s := range pp.Sample {
		if s.Value[0] == 0 {
			continue // no allocation
		}
		fn := s.Location[0].Line[0].Function.Name
		labels[fn] = strings.Join(s.Label["type"], ",")
	}
	for fn, w := range map[string]string{"sizeless": "", "vec4": "char *[4]", "vec2": "char *[2]", "entry": "struct entry",
		"bytes": "unsigned char[n]", "header": "struct hdr + n", "row": "int[3]"} {
		if got, ok := labels[fn]; !ok || got != w {
			t.Errorf("pprof: %s's allocations labelled type %q (found %v), want %q", fn, got, ok, w)
		}
	}
}

// readPprof reads the pprof profile at path.
func readPprof(t *testing.T, path string) *pprof.Profile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := pprof.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
