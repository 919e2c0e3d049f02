package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/weave-profiler/weave/profile"
)

// A test suite's profiles, generated for the merge benchmark: the runs of
// one program (its calling contexts a fixed tree of suiteNodes), each run
// a test that goes through a part of it, as a woven program's profile
// has them: functions, sites, calls, heap counters and times, leak kinds,
// bins, memory snapshots with their maps, a heap timeline and a heap
// picture. A large C project's test scripts wrote 4,437 such profiles of
// 337 MB, about 76 KB each (issue 29), merged into 10 MB.
const (
	suiteFuncs = 3000   // woven functions of the program
	suiteSites = 4000   // allocation sites
	suiteNodes = 120000 // calling contexts of the whole suite
	runNodes   = 700    // contexts a run reaches (its own, its ancestors added)
)

// suiteTree is the program's calling-context tree: parent indices (-1 for
// the root, node 0), and each node's function or site.
type suiteTree struct {
	parent []int32
	alloc  []bool  // an allocation leaf
	ref    []int32 // function or site index
}

func newSuiteTree(rng *rand.Rand) *suiteTree {
	t := &suiteTree{parent: make([]int32, suiteNodes), alloc: make([]bool, suiteNodes), ref: make([]int32, suiteNodes)}
	t.parent[0] = -1
	funcs := []int32{0} // nodes that may have children: the root and function nodes
	for i := 1; i < suiteNodes; i++ {
		// Children of recent nodes mostly: deep chains, as real code has.
		k := len(funcs) - 1 - int(rng.ExpFloat64()*float64(len(funcs))/8)
		if k < 0 {
			k = rng.IntN(len(funcs))
		}
		t.parent[i] = funcs[k]
		if rng.IntN(3) == 0 {
			t.alloc[i] = true
			t.ref[i] = int32(rng.IntN(suiteSites))
		} else {
			t.ref[i] = int32(rng.IntN(suiteFuncs))
			funcs = append(funcs, int32(i))
		}
	}
	return t
}

// genSuite writes n profiles of runs of one program into dir, as
// run-<i>.prof, and returns their total size in bytes.
func genSuite(dir string, n int) (int64, error) {
	rng := rand.New(rand.NewPCG(29, 4))
	t := newSuiteTree(rng)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	var total int64
	for i := range n {
		p := t.run(rng, i)
		path := filepath.Join(dir, fmt.Sprintf("run-%05d.prof", i))
		f, err := os.Create(path)
		if err != nil {
			return total, err
		}
		err = p.Write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return total, err
		}
		if fi, err := os.Stat(path); err == nil {
			total += fi.Size()
		}
	}
	return total, nil
}

// run is the profile of run i: the contexts it reached (a few hot ones
// every run shares, most of them its own), with their ancestors.
func (t *suiteTree) run(rng *rand.Rand, i int) *profile.Profile {
	p := &profile.Profile{}
	start := uint64(1_780_000_000_000_000_000) + uint64(i)*2_000_000_000
	ns := uint64(5_000_000 + rng.IntN(50_000_000))
	p.Meta = []profile.Meta{
		{Key: "pid", Value: fmt.Sprint(10000 + i)}, {Key: "ppid", Value: "9999"},
		{Key: "argv", Value: fmt.Sprintf("./test-suite/check-%d --quiet", i%200)},
		{Key: "start_ns", Value: fmt.Sprint(start)}, {Key: "end_ns", Value: fmt.Sprint(start + ns)},
		{Key: "complete", Value: "1"}, {Key: "runtime", Value: "12"}, {Key: "end", Value: "exit"},
		{Key: "hidden", Value: "1"}, {Key: "page_size", Value: "4096"}, {Key: "exe", Value: "/build/tests/check"},
		{Key: "time_mode", Value: "sampled"}, {Key: "time_clock", Value: "thread_cputime"},
		{Key: "time_sampler", Value: "thread"}, {Key: "time_period_ns", Value: "1000000"},
		{Key: "time_samples", Value: fmt.Sprint(ns / 1_000_000)}, {Key: "leak_scan", Value: "180000"},
	}
	th := &profile.Thread{ID: 0, TID: uint64(10000 + i)}
	p.Threads = []*profile.Thread{th}
	funcs, sites := map[int32]*profile.Func{}, map[int32]*profile.Site{}
	fn := func(k int32) *profile.Func {
		f := funcs[k]
		if f == nil {
			f = &profile.Func{ID: len(p.Funcs), Name: fmt.Sprintf("fn_%d_%s", k, strings.Repeat("x", int(k%7))),
				File: fmt.Sprintf("src/module%d/file%d.c", k%40, k%300), Line: int(k%900) + 1}
			funcs[k] = f
			p.Funcs = append(p.Funcs, f)
		}
		return f
	}
	site := func(k int32) *profile.Site {
		s := sites[k]
		if s == nil {
			f := fn(k % suiteFuncs)
			s = &profile.Site{ID: len(p.Sites), Func: f, File: f.File, Line: f.Line + 3, Col: 9,
				Op: []string{"malloc", "calloc", "realloc", "strdup"}[k%4]}
			sites[k] = s
			p.Sites = append(p.Sites, s)
		}
		return s
	}
	// The contexts reached: hot ones (low indices, every run) and the run's own.
	own := map[int32]*profile.Node{}
	var node func(k int32) *profile.Node
	node = func(k int32) *profile.Node {
		if n := own[k]; n != nil {
			return n
		}
		n := &profile.Node{Thread: th, Kind: profile.KindRoot}
		if k > 0 {
			n.Parent = node(t.parent[k])
			if t.alloc[k] {
				n.Kind, n.Site = profile.KindAlloc, site(t.ref[k])
			} else {
				n.Kind, n.Func = profile.KindFunc, fn(t.ref[k])
			}
		}
		n.ID = len(p.Nodes)
		p.Nodes = append(p.Nodes, n)
		own[k] = n
		return n
	}
	th.Root = node(0)
	for j := 0; len(p.Nodes) < runNodes; j++ {
		var k int32
		if j%4 == 0 {
			k = int32(rng.IntN(suiteNodes / 50))
		} else {
			k = int32(rng.IntN(suiteNodes))
		}
		node(k)
	}
	t.counts(rng, p)
	t.extras(rng, p, ns)
	return p
}

// counts fills the nodes' calls, times, heap counters and leak kinds, and
// the bins.
func (t *suiteTree) counts(rng *rand.Rand, p *profile.Profile) {
	bins := map[int]*profile.Bin{}
	for _, n := range p.Nodes {
		if n.Parent != nil {
			n.Parent.Children = append(n.Parent.Children, n)
		}
		switch n.Kind {
		case profile.KindFunc:
			n.Calls = uint64(1 + rng.IntN(5000))
			if rng.IntN(4) == 0 {
				n.Time = uint64(rng.IntN(3_000_000))
			}
		case profile.KindAlloc:
			a := uint64(1 + rng.IntN(2000))
			size := uint64(8 + rng.IntN(600))
			c := profile.SizeClass(size)
			n.Heap.Allocs[c], n.Heap.Bytes[c] = a, a*size
			f := a
			if rng.IntN(10) == 0 {
				f = a - uint64(1+rng.IntN(int(a)))
			}
			n.Heap.Frees[c], n.Heap.FreedBytes[c] = f, f*size
			lk := &profile.LeakKinds{}
			lk[rng.IntN(int(profile.NumLeakKinds))] = profile.LeakCount{Blocks: a - f, Bytes: (a - f) * size}
			if a > f {
				n.Leaks = lk
			}
			b := min(int(size), profile.LargeBin)
			if bins[b] == nil {
				bins[b] = &profile.Bin{Size: b}
			}
			bins[b].Allocs += a
			bins[b].Frees += f
			bins[b].Bytes += a * size
			bins[b].FreedBytes += f * size
		}
	}
	for s := 0; s <= profile.LargeBin; s++ {
		if b := bins[s]; b != nil {
			p.Bins = append(p.Bins, *b)
		}
	}
}

// extras adds what belongs to the run alone: memory snapshots with their
// maps, the heap timeline, the blocks in use at exit.
func (t *suiteTree) extras(rng *rand.Rand, p *profile.Profile, ns uint64) {
	var maps strings.Builder
	for m := range 40 {
		fmt.Fprintf(&maps, "%012x-%012x r-xp 00000000 fd:01 %d /usr/lib/x86_64-linux-gnu/lib%d.so.1\n",
			0x7f0000000000+m*0x200000, 0x7f0000000000+m*0x200000+0x1000, 100000+m, m)
	}
	for k, name := range []string{"start", "peak", "exit"} {
		p.Snapshots = append(p.Snapshots, &profile.Snapshot{Name: name, NS: ns * uint64(k) / 2,
			Bytes: uint64(rng.IntN(1 << 20)), Blocks: uint64(rng.IntN(5000)), VM: 1 << 28, RSS: 1 << 23, Maps: maps.String()})
	}
	for k := range 200 {
		p.Timeline = append(p.Timeline, profile.Point{NS: ns * uint64(k) / 200, Bytes: uint64(rng.IntN(1 << 20)),
			Blocks: uint64(rng.IntN(5000)), Allocs: uint64(rng.IntN(100)), Frees: uint64(rng.IntN(100)), VM: -1, RSS: -1})
	}
	addr := uint64(0x5600_0000_0000)
	for _, n := range p.Nodes {
		if n.Leaks != nil && len(p.Blocks) < 300 {
			addr += uint64(64 + rng.IntN(4096))
			p.Blocks = append(p.Blocks, profile.Block{Addr: addr, Size: 64, Node: n})
		}
	}
}
