package profile

import (
	"fmt"
	"strings"
)

// LeakKind is one of valgrind memcheck's kinds of a block still in use at
// exit, in the order of the K record's fields.
type LeakKind int

// The leak kinds, as the runtime's scan at exit classifies the blocks.
const (
	Definite  LeakKind = iota // nothing points to it
	Indirect                  // only lost blocks point to it
	Possible                  // only interior pointers, or possibly lost blocks, point to it
	Reachable                 // a pointer to its start from a root or a reachable block
	NumLeakKinds
)

// LeakKindNames are valgrind's names of the kinds (--show-leak-kinds).
var LeakKindNames = [NumLeakKinds]string{"definite", "indirect", "possible", "reachable"}

// LeakKindTitles are the kinds as valgrind's summary words them.
var LeakKindTitles = [NumLeakKinds]string{"definitely lost", "indirectly lost", "possibly lost", "still reachable"}

// ParseLeakKind returns the kind of a valgrind name.
func ParseLeakKind(s string) (LeakKind, error) {
	for k, n := range LeakKindNames {
		if s == n {
			return LeakKind(k), nil
		}
	}
	return 0, fmt.Errorf("unknown leak kind %q (want definite, indirect, possible or reachable)", s)
}

func (k LeakKind) String() string {
	if k >= 0 && k < NumLeakKinds {
		return LeakKindNames[k]
	}
	return fmt.Sprintf("LeakKind(%d)", int(k))
}

// LeakCount is a number of blocks and their bytes.
type LeakCount struct {
	Blocks, Bytes uint64
}

// LeakKinds are an allocation leaf's blocks in use at exit, by kind (a K
// record).
type LeakKinds [NumLeakKinds]LeakCount

// Scanned reports whether the runtime classified the blocks in use at exit
// (M leak_scan): only then do allocation leaves carry Leaks.
func (p *Profile) Scanned() bool {
	_, ok := p.MetaValue("leak_scan")
	return ok
}

// EndedByExec reports whether the process image ended by exec (M end
// exec; a merge: every run did): its memory went with it, so there is no
// leak to find (the runtime scans nothing then, as memcheck and
// LeakSanitizer check nothing).
func (p *Profile) EndedByExec() bool {
	if runs, ok := p.MetaUint("merged"); ok {
		execd, _ := p.MetaUint("exec_runs")
		return execd == runs
	}
	v, _ := p.MetaValue("end")
	return v == "exec"
}

// NoScanReason says why a profile that was not Scanned has no leak scan.
func (p *Profile) NoScanReason() string {
	if p.EndedByExec() {
		return "it ended by exec: its blocks went with its image, there is no leak to find"
	}
	if v, _ := p.MetaValue("malloc"); v == "valgrind" {
		return "it ran under valgrind, whose malloc and free replace the runtime's (read memcheck's leak check)"
	}
	if !p.FreesSeen() {
		return "frees by code that was not woven were not seen (the process's free was not weave's: a woven library in a program that was not woven, a static link, a program with its own malloc, a sanitizer build, valgrind), so what was in use at exit is not known: weave the program too, linked dynamically"
	}
	switch v, _ := p.MetaValue("end"); v {
	case "checkpoint":
		return "it is a checkpoint, written while the program ran (WEAVE_CHECKPOINT): blocks in use are classified at exit, in the final profile"
	case "snapshot":
		return "it is a snapshot, written while the program ran (weave snapshot): blocks in use are classified at exit, in the final profile"
	}
	if v, ok := p.MetaValue("leak_scan_failed"); ok {
		if runs, ok := p.MetaUint("merged"); ok {
			failed, _ := p.MetaUint("leak_scan_failed_runs")
			v += fmt.Sprintf(" in %d of %d runs", failed, runs)
		}
		why := " (its tables take about 17 bytes a block in use: the address space was full, ulimit -v or RLIMIT_AS)"
		if !strings.HasPrefix(v, "out of memory") {
			why = " (/proc/self/maps: the program's own sandbox, a landlock ruleset, refused it)"
		}
		return "the scan at exit failed, " + v + why + ", so the blocks in use were not classified"
	}
	return "the program ran with WEAVE_LEAK_SCAN=0 or WEAVE_HIDDEN=0, or under valgrind (read memcheck's leak check), or did not exit normally"
}

// FreesSeen reports whether the runtime saw the frees of code that was not
// woven (M frees_seen): if not, blocks it counts in use at exit may have
// been freed there.
func (p *Profile) FreesSeen() bool {
	v, ok := p.MetaValue("frees_seen")
	return !ok || v != "0"
}

// leakRecord decodes a K record: node, then blocks and bytes per kind.
func (d *decoder) leakRecord(rest string) error {
	names := []string{"node"}
	for _, k := range LeakKindNames {
		names = append(names, k+"_blocks", k+"_bytes")
	}
	v, err := numbers(rest, names...)
	if err != nil {
		return err
	}
	n, err := d.nodeFor(v[0], allocLeaf, "K", nil)
	if err != nil {
		return err
	}
	if n.Leaks != nil {
		return fmt.Errorf("second K record for node %d", n.ID)
	}
	n.Leaks = new(LeakKinds)
	for k := range n.Leaks {
		n.Leaks[k] = LeakCount{v[1+2*k], v[2+2*k]}
	}
	return nil
}

// moduleRecord decodes an O record: a function and the object file it was
// linked into.
func (d *decoder) moduleRecord(rest string) error {
	v, err := numbers(rest, "fn", "module")
	if err != nil {
		return err
	}
	fn, err := d.funcs.lookup(v[0], "function")
	if err != nil {
		return err
	}
	if fn.Module, err = d.str(v[1], "module"); err != nil {
		return err
	}
	return nil
}

// fromRecord decodes an R record: where a hidden site's allocator was
// called from.
func (d *decoder) fromRecord(rest string) error {
	v, err := numbers(rest, "site", "address", "object?")
	if err != nil {
		return err
	}
	s, err := d.sites.lookup(v[0], "site")
	if err != nil {
		return err
	}
	if !s.Hidden {
		return fmt.Errorf("site %d is not hidden", v[0])
	}
	s.From = v[1]
	if v[2] != none {
		if s.Object, err = d.str(v[2], "object"); err != nil {
			return err
		}
	}
	return nil
}

// writeLeaks writes the O and K records.
func (e *encoder) writeLeaks(p *Profile) {
	for _, f := range p.Funcs {
		if f.Module != "" {
			e.record("O %d %d", f.ID, e.ids[f.Module])
		}
	}
	for _, n := range p.Nodes {
		if n.Leaks == nil || n.Kind != KindAlloc {
			continue
		}
		s := fmt.Sprintf("K %d", n.ID)
		for _, c := range n.Leaks {
			s += fmt.Sprintf(" %d %d", c.Blocks, c.Bytes)
		}
		e.record("%s", s)
	}
}
