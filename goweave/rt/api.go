package rt

import (
	"os"
	"unsafe"
)

//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Frame is a woven function's activation, returned by Enter; its Exit pops
// it: `defer rt.Enter(&f).Exit()` pushes at entry and pops at every exit,
// a panic's included.
type Frame struct {
	g       *G
	prev    *node
	start   int64
	childNs int64
}

// Enter pushes fn on the calling goroutine's pseudo-stack. The common
// case (the state in its first table slot, the child first in its
// parent's list) takes no call but getg.
func Enter(fn *Func) Frame {
	key := getg()
	var g *G
	if s := &table[slot(key)]; s.key.Load() == key {
		g = s.g.Load()
	} else if g = lookup(key); g == nil {
		g = attach(root)
	}
	prev := g.cur
	var n *node
	if l := prev.links.Load(); l != nil && l.key == unsafe.Pointer(fn) {
		n = l.to
	} else {
		n = prev.enterChild(fn, key)
	}
	n.count(key)
	g.cur = n
	g.depth++
	if !timing {
		return Frame{g: g, prev: prev}
	}
	f := Frame{g: g, prev: prev, childNs: g.childNs, start: nanotime()}
	g.childNs = 0
	return f
}

// enterChild is the child of n for fn, made owned by key on first use.
func (n *node) enterChild(fn *Func, key uintptr) *node {
	for l := n.links.Load(); l != nil; l = l.next {
		if l.key == unsafe.Pointer(fn) {
			return l.to
		}
	}
	return n.addChild(unsafe.Pointer(fn), fn, nil, key)
}

// Exit pops the frame pushed by Enter. Small enough to inline.
func (f Frame) Exit() {
	if timing {
		f.exitTimed()
	}
	g := f.g
	g.cur = f.prev
	if g.depth--; g.depth == 0 {
		g.detach()
	}
}

// exitTimed charges the frame's time: its own to its node, all of it to
// its caller's callees.
func (f Frame) exitTimed() {
	g := f.g
	if f.start == 0 { // a goroutine's start: its time is not its spawner's
		g.childNs = f.childNs
		return
	}
	el := nanotime() - f.start
	g.cur.selfNs.Add(el - g.childNs)
	g.childNs = f.childNs + el
}

// Ctx is a spawning context, carried into a goroutine started by a woven
// go statement.
type Ctx struct{ n *node }

// Spawn returns the calling goroutine's current context.
func Spawn() Ctx {
	if g := current(); g != nil {
		return Ctx{g.cur}
	}
	return Ctx{root}
}

// Start begins the calling goroutine's pseudo-stack under ctx (a woven go
// statement's goroutine, before it calls the function); `defer
// rt.Start(ctx).Exit()` ends it.
func Start(ctx Ctx) Frame {
	g := current()
	if g == nil {
		g = attach(ctx.n)
	}
	prev := g.cur
	g.cur = ctx.n
	g.depth++
	return Frame{g: g, prev: prev, childNs: g.childNs}
}

// Finish writes the profile (deferred first in main.main).
func Finish() { writeProfile("exit") }

// Exit writes the profile and exits: woven code's os.Exit.
func Exit(code int) {
	writeProfile("exit")
	os.Exit(code)
}
