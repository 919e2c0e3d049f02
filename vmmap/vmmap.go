// Package vmmap parses and classifies a process's memory map (/proc/PID/maps text) and holds the runtime part that records it, the heap timeline and the peak (vmmap.c).
package vmmap

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Mapping is one line of a maps file.
type Mapping struct {
	Start, End uint64 // [Start, End)
	Perms      string // "r-xp", ...
	Offset     uint64 // offset in the file
	Dev        string // "08:01"
	Inode      uint64
	Path       string // file, "[heap]", "[stack]", "[vdso]"...; "" for an anonymous map
}

// Size returns the mapping's size in bytes.
func (m *Mapping) Size() uint64 { return m.End - m.Start }

func (m *Mapping) exec() bool  { return len(m.Perms) > 2 && m.Perms[2] == 'x' }
func (m *Mapping) write() bool { return len(m.Perms) > 1 && m.Perms[1] == 'w' }
func (m *Mapping) none() bool  { return strings.HasPrefix(m.Perms, "---") }

// file reports whether m maps a file (not an anonymous or special map).
func (m *Mapping) file() bool { return m.Inode != 0 && strings.HasPrefix(m.Path, "/") }

// Parse parses maps text, one mapping a line, as the kernel writes it:
//
//	start-end perms offset dev inode [path]
//
// with hexadecimal start, end and offset. Blank lines are skipped. A bad
// line is an error naming its line number.
func Parse(text string) ([]Mapping, error) {
	var maps []Mapping
	for i, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		m, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("maps line %d: %v", i+1, err)
		}
		maps = append(maps, m)
	}
	return maps, nil
}

func parseLine(line string) (Mapping, error) {
	var m Mapping
	rest := line
	field := func() string {
		rest = strings.TrimLeft(rest, " ")
		f, r, _ := strings.Cut(rest, " ")
		rest = r
		return f
	}
	addr, perms, off, dev, inode := field(), field(), field(), field(), field()
	lo, hi, ok := strings.Cut(addr, "-")
	var err error
	if !ok {
		return m, fmt.Errorf("address range %q", addr)
	}
	if m.Start, err = strconv.ParseUint(lo, 16, 64); err != nil {
		return m, fmt.Errorf("start address %q", lo)
	}
	if m.End, err = strconv.ParseUint(hi, 16, 64); err != nil || m.End < m.Start {
		return m, fmt.Errorf("end address %q", hi)
	}
	if len(perms) != 4 {
		return m, fmt.Errorf("permissions %q", perms)
	}
	m.Perms = perms
	if m.Offset, err = strconv.ParseUint(off, 16, 64); err != nil {
		return m, fmt.Errorf("offset %q", off)
	}
	if !strings.Contains(dev, ":") {
		return m, fmt.Errorf("device %q", dev)
	}
	m.Dev = dev
	if m.Inode, err = strconv.ParseUint(inode, 10, 64); err != nil {
		return m, fmt.Errorf("inode %q", inode)
	}
	m.Path = strings.TrimLeft(rest, " ")
	return m, nil
}

// Classes of segments, in the order tables list them.
const (
	Text        = "text"          // the program's code
	ROData      = "rodata"        // the program's read-only data (and ELF headers, RELRO)
	Data        = "data"          // the program's initialized data
	BSS         = "bss"           // the anonymous map after the program's data
	Heap        = "heap"          // [heap], brk's heap
	Anon        = "anon"          // other anonymous maps: malloc arenas, large blocks, the program's mmaps
	Stack       = "stack"         // the main thread's stack
	ThreadStack = "thread stacks" // anonymous maps with a guard page below them
	LibText     = "text"          // a shared library's code (Segment.Lib names it)
	LibData     = "data"          // a shared library's data, read-only data and bss
	VDSO        = "vdso/vvar"     // [vdso], [vvar], [vsyscall]
	FileMaps    = "files"         // other mapped files
	Other       = "other"         // the rest ([uprobes], ...)
)

// Segment is the mappings of one class (and, for a shared library's
// segments, one library), added up.
type Segment struct {
	Class string
	Lib   string // the library's base name for a library segment, else ""
	Start uint64 // lowest address
	Size  uint64 // bytes mapped (virtual)
	Maps  int    // mappings
}

// Name returns the segment's name in tables: its class, prefixed by the
// library for a library segment ("libc.so.6 text").
func (s *Segment) Name() string {
	if s.Lib != "" {
		return s.Lib + " " + s.Class
	}
	return s.Class
}

// Compare orders segments for tables: the program's, then the process's
// (heap, anon, stacks), then libraries by name (text before data), then
// vdso/vvar, files and the rest.
func Compare(a, b Label) int {
	ra, rb := a.rank(), b.rank()
	if ra == rb && a.Lib != b.Lib {
		return strings.Compare(a.Lib, b.Lib)
	}
	if a.Lib != "" && b.Lib != "" && a.Lib != b.Lib {
		return strings.Compare(a.Lib, b.Lib)
	}
	return ra - rb
}

func (l Label) rank() int {
	if l.Lib != "" {
		if l.Class == LibText {
			return 100
		}
		return 101
	}
	for i, c := range []string{Text, ROData, Data, BSS, Heap, Anon, Stack, ThreadStack} {
		if l.Class == c {
			return i
		}
	}
	for i, c := range []string{VDSO, FileMaps, Other} {
		if l.Class == c {
			return 200 + i
		}
	}
	return 300
}

// Classify groups maps into segments. exe is the path of the program's
// executable; "" takes the file of the lowest file-backed mapping, which is
// the executable for a program started the usual way.
//
// Rules: a mapping of exe is text if executable, data if writable, else
// rodata; the anonymous writable map right after exe's last mapping is its
// bss (likewise for a library: counted as its data). An anonymous writable
// map right above an inaccessible anonymous one (glibc's thread stacks
// have a guard page below) is a thread stack, the guard counted with it;
// an inaccessible map right above the writable part of a malloc arena is
// its reserve, counted as anon like the arena.
func Classify(maps []Mapping, exe string) []Segment {
	byKey := map[Label]*Segment{}
	var order []*Segment
	for i, l := range Labels(maps, exe) {
		m := &maps[i]
		s := byKey[l]
		if s == nil {
			s = &Segment{Class: l.Class, Lib: l.Lib, Start: m.Start}
			byKey[l] = s
			order = append(order, s)
		}
		s.Start = min(s.Start, m.Start)
		s.Size += m.Size()
		s.Maps++
	}
	segs := make([]Segment, len(order))
	for i, s := range order {
		segs[i] = *s
	}
	slices.SortStableFunc(segs, func(a, b Segment) int {
		return Compare(Label{a.Class, a.Lib}, Label{b.Class, b.Lib})
	})
	return segs
}

// anonFile reports whether path names anonymous memory: shared anonymous
// maps ("/dev/zero (deleted)", System V shared memory) and maps named with
// PR_SET_VMA_ANON_NAME.
func anonFile(path string) bool {
	return strings.HasPrefix(path, "/dev/zero") || strings.HasPrefix(path, "/SYSV") ||
		strings.HasPrefix(path, "[anon:") || strings.HasPrefix(path, "[anon_shmem:")
}

// Label is the class of a mapping, and for a library's, the library.
type Label struct {
	Class string
	Lib   string
}

// Labels returns the label of each mapping: see Classify.
func Labels(maps []Mapping, exe string) []Label {
	if exe == "" {
		for _, m := range maps {
			if m.file() {
				exe = m.Path
				break
			}
		}
	}
	labels := make([]Label, len(maps))
	add := func(i int, class, lib string) { labels[i] = Label{class, lib} }
	stack := threadStacks(maps)
	owner := "" // the file of the previous mapping, when adjacent
	for i := range maps {
		m := &maps[i]
		var prev *Mapping
		if i > 0 && maps[i-1].End == m.Start {
			prev = &maps[i-1]
		}
		switch {
		case m.file() && !anonFile(m.Path):
			owner = m.Path
			switch {
			case m.Path == exe || strings.TrimSuffix(m.Path, " (deleted)") == exe:
				add(i, classOf(m, Text, Data, ROData), "")
			case isLibrary(m.Path):
				add(i, classOf(m, LibText, LibData, LibData), libName(m.Path))
			default:
				add(i, FileMaps, "")
			}
			continue
		case m.Path == "[heap]":
			add(i, Heap, "")
		case m.Path == "[stack]":
			add(i, Stack, "")
		case m.Path == "[vdso]" || m.Path == "[vvar]" || m.Path == "[vsyscall]" || strings.HasPrefix(m.Path, "[vvar"):
			add(i, VDSO, "")
		case m.Path == "" && owner != "" && prev != nil && prev.Path == owner && prev.write() && m.write() && !m.exec():
			// bss right after its file's last mapping.
			if owner == exe {
				add(i, BSS, "")
			} else if isLibrary(owner) {
				add(i, LibData, libName(owner))
			} else {
				add(i, Anon, "")
			}
		case stack[i]:
			add(i, ThreadStack, "")
		case m.Path == "" || anonFile(m.Path):
			add(i, Anon, "")
		default:
			add(i, Other, "")
		}
		owner = ""
	}
	return labels
}

// classOf returns x for an executable mapping, w for a writable one, r for
// the rest.
func classOf(m *Mapping, x, w, r string) string {
	switch {
	case m.exec():
		return x
	case m.write():
		return w
	}
	return r
}

// isLibrary reports whether path names a shared object: "x.so" or "x.so.N...".
func isLibrary(path string) bool {
	base := filepath.Base(strings.TrimSuffix(path, " (deleted)"))
	return strings.HasSuffix(base, ".so") || strings.Contains(base, ".so.")
}

func libName(path string) string {
	return filepath.Base(strings.TrimSuffix(path, " (deleted)"))
}

// arenaSize is glibc's HEAP_MAX_SIZE on 64-bit systems: a malloc arena is
// a map of this size, this aligned, writable at the bottom and
// inaccessible above.
const arenaSize = 64 << 20

// maxGuard is the largest guard page area taken for a thread stack's
// (glibc's default is one page); larger inaccessible maps are address
// space reserved for something else (weave's own pseudo-stacks, say).
const maxGuard = 256 << 10

// threadStacks marks the thread stacks: a small inaccessible anonymous map
// (the guard) with a writable anonymous map right above it, both marked,
// unless the inaccessible map is the reserve of a malloc arena.
func threadStacks(maps []Mapping) []bool {
	marks := make([]bool, len(maps))
	anon := func(i int) bool { return i >= 0 && i < len(maps) && maps[i].Path == "" }
	for i := range maps {
		m := &maps[i]
		if !anon(i) || !m.none() || m.Size() > maxGuard || !anon(i+1) || maps[i+1].Start != m.End || !maps[i+1].write() {
			continue
		}
		if anon(i-1) && maps[i-1].End == m.Start && maps[i-1].write() &&
			maps[i-1].Start%arenaSize == 0 && maps[i-1].Start+arenaSize == m.End {
			continue // an arena's reserve
		}
		marks[i], marks[i+1] = true, true
	}
	return marks
}

// Total returns the bytes mapped by segs.
func Total(segs []Segment) uint64 {
	var t uint64
	for _, s := range segs {
		t += s.Size
	}
	return t
}

// ReadProc reads and parses /proc/<pid>/maps ("self" for this process)
// and returns its mappings and the path of the process's executable ("" if
// /proc/<pid>/exe cannot be read).
func ReadProc(pid string) ([]Mapping, string, error) {
	text, err := os.ReadFile(filepath.Join("/proc", pid, "maps"))
	if err != nil {
		return nil, "", err
	}
	maps, err := Parse(string(text))
	if err != nil {
		return nil, "", fmt.Errorf("/proc/%s/maps: %v", pid, err)
	}
	exe, _ := os.Readlink(filepath.Join("/proc", pid, "exe"))
	return maps, exe, nil
}

// Bytes formats n bytes for tables: "512 B", "4 KiB", "1.5 MiB", "8 MiB".
func Bytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, u := float64(n), 0
	// A value that rounds to 1024.0 of a unit is 1 of the next.
	for v >= unit-0.05 && u < 5 {
		v /= unit
		u++
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + [...]string{"", "KiB", "MiB", "GiB", "TiB", "PiB"}[u]
}
