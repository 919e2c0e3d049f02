package rt

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/weave-profiler/weave/profile"
)

var (
	fA = &Func{Name: "a", File: "a.go", Line: 1}
	fB = &Func{Name: "b", File: "a.go", Line: 2}
	fR = &Func{Name: "rec", File: "a.go", Line: 3}
	sT = &Site{Func: fB, File: "a.go", Line: 2, Col: 5, Op: "new", Type: "T", Size: 24}
)

type T struct{ a, b, c int64 }

func b() *T {
	defer Enter(fB).Exit()
	return New(sT, &T{})
}

func a(n int) {
	defer Enter(fA).Exit()
	for range n {
		b()
	}
}

func rec(n int) {
	defer Enter(fR).Exit()
	if n > 0 {
		rec(n - 1)
	}
}

// find returns the node reached from the root through keys.
func find(t *testing.T, keys ...*Func) *node {
	n := root
	for _, k := range keys {
		var next *node
		for l := n.links.Load(); l != nil; l = l.next {
			if l.to.fn == k && l.to.parent == n {
				next = l.to
			}
		}
		if next == nil {
			t.Fatalf("no node for %s", k.Name)
		}
		n = next
	}
	return n
}

// TestGoroutines: goroutines started by Start run under their spawner's
// context; every call and allocation is counted once; the table is empty
// when they are done.
func TestGoroutines(t *testing.T) {
	const workers, n = 8, 1000
	func() {
		defer Enter(fA).Exit()
		ctx := Spawn()
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer Start(ctx).Exit()
				a(n)
			}()
		}
		wg.Wait()
	}()
	top := find(t, fA)
	inner := find(t, fA, fA) // a under the spawner's a: recursion folding keeps a second level
	bn := find(t, fA, fA, fB)
	if top.totalCalls() != 1 || inner.totalCalls() != workers || bn.totalCalls() != workers*n {
		t.Errorf("calls: a %d, a>a %d, a>a>b %d", top.totalCalls(), inner.totalCalls(), bn.totalCalls())
	}
	var allocs uint64
	for l := bn.links.Load(); l != nil; l = l.next {
		allocs += l.to.allocsIn(0)
		if l.to.bytesIn(0) != 24*l.to.allocsIn(0) {
			t.Errorf("bytes %d for %d allocs", l.to.bytesIn(0), l.to.allocsIn(0))
		}
	}
	if allocs != workers*n {
		t.Errorf("allocs %d, want %d", allocs, workers*n)
	}
	if g := current(); g != nil {
		t.Errorf("state left: %+v", g)
	}
	for i := range table {
		if k := table[i].key.Load(); k > tombstone {
			t.Errorf("slot %d still taken", i)
		}
	}
}

// TestFold: a recursion is at most twice on a path, and a panic through
// woven frames pops them.
func TestFold(t *testing.T) {
	rec(100)
	n := find(t, fR, fR)
	if n.totalCalls() != 100 || find(t, fR).totalCalls() != 1 {
		t.Errorf("folded calls %d", n.totalCalls())
	}
	func() {
		defer func() { recover() }()
		defer Enter(fA).Exit()
		panic("x")
	}()
	if g := current(); g != nil {
		t.Errorf("state left after a panic: depth %d", g.depth)
	}
}

// TestProfile: the profile written is one github.com/weave-profiler/weave/profile reads, with the
// counts of the tree.
func TestProfile(t *testing.T) {
	a(10)
	path := filepath.Join(t.TempDir(), "p.prof")
	t.Setenv("WEAVE_OUT", path)
	t.Setenv("WEAVE_SUMMARY", "0")
	writeProfile("exit")
	p, err := profile.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var calls, allocs uint64
	for _, n := range p.Nodes {
		if n.Kind == profile.KindFunc && n.Func.Name == "b" && n.Parent.Func != nil && n.Parent.Func.Name == "a" && n.Parent.Parent.Kind == profile.KindRoot {
			calls += n.Calls
		}
		if n.Kind == profile.KindAlloc && n.Site.Type == "T" {
			allocs += n.Heap.TotalAllocs()
			if n.Site.TypeSize != 24 || n.Site.Line != 2 || n.Site.Col != 5 {
				t.Errorf("site %+v", n.Site)
			}
		}
	}
	if calls != 10 || allocs < 10 {
		t.Errorf("b under a: %d calls; %d allocs of T", calls, allocs)
	}
	if v, _ := p.MetaValue("lang"); v != "go" {
		t.Errorf("lang %q", v)
	}
	os.Remove(path)
}
