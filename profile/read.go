package profile

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Errors of Read, for errors.Is. The error returned adds the details.
var (
	ErrNotProfile = errors.New("not a weave profile")
	ErrTruncated  = errors.New("truncated profile")
)

// VersionError reports a profile of a format version this package does not
// read.
type VersionError struct {
	Version int
}

func (e *VersionError) Error() string {
	if e.Version > Version {
		return fmt.Sprintf("profile version %d is newer than this weave reads (%d)", e.Version, Version)
	}
	return fmt.Sprintf("unsupported profile version %d", e.Version)
}

// PosError is an error at a place in a profile. Its text is
// "LINE:COL: what"; ReadFile puts the file's name before it with no space
// ("weave-42.prof:12:1: bad N record: undefined parent 40").
type PosError struct {
	Line, Col int
	Err       error
}

func (e *PosError) Error() string { return fmt.Sprintf("%d:%d: %v", e.Line, e.Col, e.Err) }
func (e *PosError) Unwrap() error { return e.Err }

// at is an error at column 1 of line n: the record there is at fault.
func at(n int, format string, args ...any) error {
	return &PosError{Line: n, Col: 1, Err: fmt.Errorf(format, args...)}
}

// ReadFile reads the profile in the named file. Its errors start with the
// file name: "weave-42.prof:12:1: bad N record: undefined parent 40".
func ReadFile(path string) (*Profile, error) {
	return readFile(path, "")
}

// ReadNamed is Read with errors that start with name, as ReadFile's
// start with the file's (name "standard input" for a piped profile).
func ReadNamed(r io.Reader, name string) (*Profile, error) {
	p, err := read(r, "")
	return p, named(name, err)
}

// named puts name before err: "name:12:1: what" or "name: what".
func named(name string, err error) error {
	var pe *PosError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pe) && pe == err:
		return fmt.Errorf("%s:%w", name, err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// readFile is ReadFile with read's skip.
func readFile(path, skip string) (*Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err // *PathError, already names the file
	}
	defer f.Close()
	p, err := read(f, skip)
	if err != nil {
		return nil, named(path, err)
	}
	return p, nil
}

// Read reads a profile in the format described in format.go. Records with an
// unknown tag are skipped; comments are dropped.
func Read(r io.Reader) (*Profile, error) {
	return read(r, "")
}

// read is Read, but records whose tag is in skip are counted, not
// decoded (what a merge drops: MergeDrops).
func read(r io.Reader, skip string) (*Profile, error) {
	br := bufio.NewReader(r)
	if err := readHeader(br); err != nil {
		return nil, err
	}
	d := &decoder{p: &Profile{}, line: 1}
	var (
		ended   bool // the E record was read
		records int  // records read, E excluded
	)
	for {
		text, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			return nil, err
		}
		if text == "" && err == io.EOF {
			break
		}
		d.line++
		complete := strings.HasSuffix(text, "\n")
		text = strings.TrimSuffix(text, "\n")
		if ended {
			return nil, at(d.line, "record after the E record")
		}
		if strings.HasPrefix(text, "#") {
			continue
		}
		if text == "" {
			return nil, at(d.line, "empty line")
		}
		tag, rest, _ := strings.Cut(text, " ")
		if tag == "E" {
			n, perr := strconv.ParseUint(rest, 10, 64)
			if perr != nil {
				if !complete {
					return nil, at(d.line, "%w: incomplete last line", ErrTruncated)
				}
				return nil, at(d.line, "bad E record: %q is not a count", rest)
			}
			if n != uint64(records) {
				return nil, at(d.line, "%w: E record counts %d records, found %d",
					ErrTruncated, n, records)
			}
			ended = true
			continue
		}
		if !isTag(tag) {
			// An unknown tag is skipped (a newer writer's): one that is
			// not a tag at all is damage, and skipping it would lose data.
			if !complete {
				return nil, at(d.line, "%w: incomplete last line", ErrTruncated)
			}
			return nil, at(d.line, "bad record tag %q (want letters)", tag)
		}
		records++
		if len(tag) == 1 && strings.Contains(skip, tag) {
			continue
		}
		if rerr := d.record(tag, rest); rerr != nil {
			if !complete {
				// A writer stopped in the middle of this line.
				return nil, at(d.line, "%w: incomplete last line", ErrTruncated)
			}
			return nil, at(d.line, "bad %s record: %v", tag, rerr)
		}
	}
	if !ended {
		return nil, at(d.line, "%w: no E record after this line", ErrTruncated)
	}
	if err := d.finish(); err != nil {
		return nil, err
	}
	return d.p, nil
}

// errGzipped is the error of a gzip-compressed profile.
var errGzipped = fmt.Errorf("%w: gzip-compressed (gunzip it first)", ErrNotProfile)

// gzipped reports whether b starts as gzip's output does.
func gzipped(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// readHeader reads and checks the first line, "weave profile 1".
func readHeader(br *bufio.Reader) error {
	const prefix = "weave profile "
	line, err := br.ReadSlice('\n')
	switch {
	case gzipped(line):
		return errGzipped
	case err == bufio.ErrBufferFull:
		return ErrNotProfile // a long first line: not text we wrote
	case err == io.EOF:
		if strings.HasPrefix(prefix, string(line)) || strings.HasPrefix(string(line), prefix) {
			if len(line) == 0 {
				return fmt.Errorf("%w: empty file", ErrTruncated)
			}
			return at(1, "%w: incomplete first line", ErrTruncated)
		}
		return ErrNotProfile
	case err != nil:
		return err
	}
	s := strings.TrimSuffix(string(line), "\n")
	vs, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return ErrNotProfile
	}
	if strings.HasSuffix(vs, "\r") {
		return fmt.Errorf("%w: its lines end in CR LF, as a copy converted for Windows (dos2unix restores it)", ErrNotProfile)
	}
	v, err := strconv.Atoi(vs)
	if err != nil || vs != strconv.Itoa(v) {
		return ErrNotProfile
	}
	if v != Version {
		return &PosError{Line: 1, Col: len(prefix) + 1, Err: &VersionError{v}}
	}
	return nil
}

// decoder holds the state of Read between records.
type decoder struct {
	p       *Profile
	line    int
	strs    idTable[string]
	funcs   idTable[*Func]
	sites   idTable[*Site]
	threads idTable[*Thread]
	nodes   idTable[*Node]
	heapDef map[int]bool // nodes with an H record
	callDef map[int]bool // nodes with a C record
	timeDef map[int]bool // nodes with a D record
	binDef  map[int]bool
	peakDef map[int]bool // nodes with a P record
}

// idTable holds the records of one kind by id. Ids are dense but need not
// come in order: a record defined ahead of the next id waits in pending,
// so a corrupt id costs one map entry, not a slice of that length.
type idTable[T any] struct {
	s       []T
	pending map[uint64]T
}

func (t *idTable[T]) define(id uint64, v T) error {
	if _, ok := t.get(id); ok {
		return fmt.Errorf("id %d defined twice", id)
	}
	if id > uint64(len(t.s)) {
		if t.pending == nil {
			t.pending = map[uint64]T{}
		}
		t.pending[id] = v
		return nil
	}
	t.s = append(t.s, v)
	for {
		next, ok := t.pending[uint64(len(t.s))]
		if !ok {
			return nil
		}
		delete(t.pending, uint64(len(t.s)))
		t.s = append(t.s, next)
	}
}

func (t *idTable[T]) get(id uint64) (T, bool) {
	if id < uint64(len(t.s)) {
		return t.s[id], true
	}
	v, ok := t.pending[id]
	return v, ok
}

// lookup returns record id, or an error naming what if it is undefined.
func (t *idTable[T]) lookup(id uint64, what string) (T, error) {
	v, ok := t.get(id)
	if !ok {
		if id == none {
			return v, fmt.Errorf("%s -1", what)
		}
		return v, fmt.Errorf("undefined %s %d", what, id)
	}
	return v, nil
}

// dense returns the records, or an error if an id is missing.
func (t *idTable[T]) dense(tag string) ([]T, error) {
	if len(t.pending) > 0 {
		return nil, fmt.Errorf("%w: %s record %d is missing", ErrNotDense, tag, len(t.s))
	}
	return t.s, nil
}

// str returns string id, or an error naming what if it is undefined.
func (d *decoder) str(id uint64, what string) (string, error) {
	if s, ok := d.strs.get(id); ok {
		return s, nil
	}
	return d.strs.lookup(id, what+" string")
}

// fields splits rest into exactly n space-separated fields.
func fields(rest string, n int) ([]string, error) {
	f := strings.Split(rest, " ")
	if rest == "" {
		f = nil
	}
	if len(f) != n {
		return nil, fmt.Errorf("%d fields, want %d", len(f), n)
	}
	return f, nil
}

// none is how nums returns -1.
const none = ^uint64(0)

// nums parses fields as unsigned numbers, named for errors; a field whose
// name ends in '?' may be -1, returned as none.
func nums(f []string, names ...string) ([]uint64, error) {
	out := make([]uint64, len(f))
	for i, s := range f {
		name, optional := strings.CutSuffix(names[i], "?")
		if optional && s == "-1" {
			out[i] = none
			continue
		}
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil || v == none {
			return nil, fmt.Errorf("%s %q is not a number", name, s)
		}
		out[i] = v
	}
	return out, nil
}

// numbers splits rest into one unsigned number per name (see nums).
func numbers(rest string, names ...string) ([]uint64, error) {
	out := make([]uint64, len(names))
	all := rest
	for i := range names {
		s, tail, found := strings.Cut(rest, " ")
		if found == (i == len(names)-1) || all == "" {
			_, err := fields(all, len(names)) // the count, for the error
			return nil, err
		}
		rest = tail
		if strings.HasSuffix(names[i], "?") && s == "-1" {
			out[i] = none
			continue
		}
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil || v == none {
			return nil, fmt.Errorf("%s %q is not a number", strings.TrimSuffix(names[i], "?"), s)
		}
		out[i] = v
	}
	return out, nil
}

// What a record about one node requires of the node's kind.
type kindRule int

const (
	anyNode kindRule = iota
	allocLeaf
	notAllocLeaf
)

// nodeFor looks up the node a record of tag is about and checks its kind;
// with seen, it also checks that this is the node's first record of tag.
func (d *decoder) nodeFor(id uint64, rule kindRule, tag string, seen *map[int]bool) (*Node, error) {
	n, err := d.nodes.lookup(id, "node")
	if err != nil {
		return nil, err
	}
	switch {
	case rule == allocLeaf && n.Kind != KindAlloc:
		return nil, fmt.Errorf("node %d is not an allocation leaf", n.ID)
	case rule == notAllocLeaf && n.Kind == KindAlloc:
		return nil, fmt.Errorf("node %d is an allocation leaf", n.ID)
	}
	if seen != nil {
		if *seen == nil {
			*seen = map[int]bool{}
		}
		if (*seen)[n.ID] {
			return nil, fmt.Errorf("second %s record for node %d", tag, n.ID)
		}
		(*seen)[n.ID] = true
	}
	return n, nil
}

// isTag tells whether s has the shape of a record tag: ASCII letters.
func isTag(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return s != ""
}

// record decodes one record; the caller adds the line and tag to errors.
// A record of an unknown tag, a newer writer's, is skipped.
func (d *decoder) record(tag, rest string) error {
	if decode := recordDecoders[tag]; decode != nil {
		return decode(d, rest)
	}
	return nil
}

// recordDecoders decode each record kind (profile/format.go), by tag.
var recordDecoders = map[string]func(*decoder, string) error{
	"M": (*decoder).metaRecord,
	"S": (*decoder).stringRecord,
	"F": (*decoder).funcRecord,
	"A": (*decoder).siteRecord,
	"T": (*decoder).threadRecord,
	"N": (*decoder).node,
	"C": (*decoder).callsRecord,
	"H": (*decoder).heapRecord,
	"Q": (*decoder).traceNodeRecord,
	"D": (*decoder).timeRecord,
	"B": (*decoder).binRecord,
	"Y": (*decoder).snapshot,
	"V": (*decoder).mapsRecord,
	"L": (*decoder).timelineRecord,
	"P": (*decoder).peakRecord,
	"K": (*decoder).leakRecord,
	"O": (*decoder).moduleRecord,
	"R": (*decoder).fromRecord,
	"X": (*decoder).blockRecord,
	"G": (*decoder).markRecord,
	"W": (*decoder).liveRecord,
	"U": (*decoder).spanRecord,
}

// metaRecord decodes an M record: key value.
func (d *decoder) metaRecord(rest string) error {
	p := d.p
	key, value, _ := strings.Cut(rest, " ")
	if key == "" {
		return errors.New("no key")
	}
	p.Meta = append(p.Meta, Meta{key, value})
	return nil
}

// stringRecord decodes an S record: id text.
func (d *decoder) stringRecord(rest string) error {
	ids, text, _ := strings.Cut(rest, " ")
	id, err := nums([]string{ids}, "id")
	if err != nil {
		return err
	}
	s, err := unescape(text)
	if err != nil {
		return err
	}
	return d.strs.define(id[0], s)
}

// funcRecord decodes an F record: id name file line [flags].
func (d *decoder) funcRecord(rest string) error {
	f, err := fields(rest, 4)
	if err != nil {
		if f, err = fields(rest, 5); err != nil { // a fifth: the flags
			return fmt.Errorf("%d fields, want 4 or 5", len(strings.Split(rest, " ")))
		}
	}
	v, err := nums(f, []string{"id", "name", "file", "line", "flags"}[:len(f)]...)
	if err != nil {
		return err
	}
	fn := &Func{ID: int(v[0]), Line: int(v[3])}
	if len(v) == 5 {
		fn.Frameless, fn.CallFramed = v[4]&1 != 0, v[4]&2 != 0
	}
	if fn.Name, err = d.str(v[1], "name"); err != nil {
		return err
	}
	if fn.File, err = d.str(v[2], "file"); err != nil {
		return err
	}
	return d.funcs.define(v[0], fn)
}

// siteRecord decodes an A record: an allocation site, with 8 or 9 fields.
func (d *decoder) siteRecord(rest string) error {
	f, err := fields(rest, 8)
	if err != nil {
		// A ninth field: the flags.
		if f, err = fields(rest, 9); err != nil {
			return fmt.Errorf("%d fields, want 8 or 9", len(strings.Split(rest, " ")))
		}
	}
	names := []string{"id", "fn?", "file", "line", "col", "op", "type?", "size", "flags"}
	v, err := nums(f, names[:len(f)]...)
	if err != nil {
		return err
	}
	s := &Site{ID: int(v[0]), Line: int(v[3]), Col: int(v[4]), TypeSize: v[7]}
	if len(v) == 9 {
		s.Hidden = v[8]&SiteHidden != 0
		s.Caller = v[8]&SiteCaller != 0
	}
	if v[1] != none {
		if s.Func, err = d.funcs.lookup(v[1], "function"); err != nil {
			return err
		}
	} else if !s.Hidden && !s.Caller {
		return errors.New("function -1 for a site that is not hidden")
	}
	if s.File, err = d.str(v[2], "file"); err != nil {
		return err
	}
	if s.Op, err = d.str(v[5], "op"); err != nil {
		return err
	}
	if v[6] != none {
		if s.Type, err = d.str(v[6], "type"); err != nil {
			return err
		}
	}
	return d.sites.define(v[0], s)
}

// threadRecord decodes a T record: id tid.
func (d *decoder) threadRecord(rest string) error {
	v, err := numbers(rest, "id", "tid")
	if err != nil {
		return err
	}
	return d.threads.define(v[0], &Thread{ID: int(v[0]), TID: v[1]})
}

// callsRecord decodes a C record: node calls.
func (d *decoder) callsRecord(rest string) error {
	v, err := numbers(rest, "node", "calls")
	if err != nil {
		return err
	}
	n, err := d.nodeFor(v[0], anyNode, "C", &d.callDef)
	if err != nil {
		return err
	}
	n.Calls = v[1]
	return nil
}

// heapNames name the H record's fields: node a0..a3 b0..b3 f0..f3 g0..g3.
var heapNames = func() []string {
	names := []string{"node"}
	for _, c := range "abfg" {
		for i := range NumClasses {
			names = append(names, fmt.Sprintf("%c%d", c, i))
		}
	}
	return names
}()

// heapRecord decodes an H record: an allocation leaf's counts by size class.
func (d *decoder) heapRecord(rest string) error {
	v, err := numbers(rest, heapNames...)
	if err != nil {
		return err
	}
	n, err := d.nodeFor(v[0], allocLeaf, "H", &d.heapDef)
	if err != nil {
		return err
	}
	for i := range NumClasses {
		n.Heap.Allocs[i] = v[1+i]
		n.Heap.Bytes[i] = v[1+NumClasses+i]
		n.Heap.Frees[i] = v[1+2*NumClasses+i]
		n.Heap.FreedBytes[i] = v[1+3*NumClasses+i]
	}
	return nil
}

// traceNodeRecord decodes a Q record: a trace index and its node.
func (d *decoder) traceNodeRecord(rest string) error {
	v, err := numbers(rest, "index", "node")
	if err != nil {
		return err
	}
	n, err := d.nodeFor(v[1], anyNode, "Q", nil)
	if err != nil {
		return err
	}
	if d.p.TraceNodes == nil {
		d.p.TraceNodes = map[uint32]*Node{}
	}
	d.p.TraceNodes[uint32(v[0])] = n
	return nil
}

// timeRecord decodes a D record: node ns.
func (d *decoder) timeRecord(rest string) error {
	v, err := numbers(rest, "node", "ns")
	if err != nil {
		return err
	}
	n, err := d.nodeFor(v[0], notAllocLeaf, "D", &d.timeDef)
	if err != nil {
		return err
	}
	n.Time = v[1]
	return nil
}

// binRecord decodes a B record: one line of the bin table.
func (d *decoder) binRecord(rest string) error {
	p := d.p
	v, err := numbers(rest, "size", "allocs", "frees", "bytes", "freed_bytes")
	if err != nil {
		return err
	}
	if v[0] > LargeBin {
		return fmt.Errorf("size %d is beyond the last bin (%d)", v[0], LargeBin)
	}
	size := int(v[0])
	if d.binDef == nil {
		d.binDef = map[int]bool{}
	}
	if d.binDef[size] {
		return fmt.Errorf("second B record for size %d", size)
	}
	d.binDef[size] = true
	p.Bins = append(p.Bins, Bin{size, v[1], v[2], v[3], v[4]})
	return nil
}

// mapsRecord decodes a V record: a line of the last snapshot's maps.
func (d *decoder) mapsRecord(rest string) error {
	p := d.p
	name, text, _ := strings.Cut(rest, " ")
	if len(p.Snapshots) == 0 || p.Snapshots[len(p.Snapshots)-1].Name != name {
		return fmt.Errorf("snapshot %q is not the last Y record's", name)
	}
	if text == "" {
		return errors.New("no maps text")
	}
	p.Snapshots[len(p.Snapshots)-1].Maps += text + "\n"
	return nil
}

// timelineRecord decodes an L record: a point of the heap timeline.
func (d *decoder) timelineRecord(rest string) error {
	p := d.p
	v, err := numbers(rest, "ns", "bytes", "blocks", "allocs", "frees", "vm?", "rss?")
	if err != nil {
		return err
	}
	if n := len(p.Timeline); n > 0 && p.Timeline[n-1].NS > v[0] {
		return fmt.Errorf("time %d before the previous point's", v[0])
	}
	p.Timeline = append(p.Timeline, Point{v[0], v[1], v[2], v[3], v[4], signed(v[5]), signed(v[6])})
	return nil
}

// peakRecord decodes a P record: a context's heap at the peak.
func (d *decoder) peakRecord(rest string) error {
	p := d.p
	v, err := numbers(rest, "node", "bytes", "blocks")
	if err != nil {
		return err
	}
	n, err := d.nodeFor(v[0], allocLeaf, "P", &d.peakDef)
	if err != nil {
		return err
	}
	p.PeakHeap = append(p.PeakHeap, PeakNode{n, v[1], v[2]})
	return nil
}

// blockRecord decodes an X record: a block live at exit.
func (d *decoder) blockRecord(rest string) error {
	p := d.p
	v, err := numbers(rest, "address", "size", "node")
	if err != nil {
		return err
	}
	n, err := d.nodeFor(v[2], allocLeaf, "X", nil)
	if err != nil {
		return err
	}
	p.Blocks = append(p.Blocks, Block{v[0], v[1], n})
	return nil
}

// signed returns v, or -1 for none.
func signed(v uint64) int64 {
	if v == none {
		return -1
	}
	return int64(v)
}

// snapshot decodes a Y record: snap ns bytes blocks vm rss.
func (d *decoder) snapshot(rest string) error {
	f, err := fields(rest, 6)
	if err != nil {
		return err
	}
	if f[0] == "" {
		return errors.New("no snapshot name")
	}
	if d.p.Snapshot(f[0]) != nil {
		return fmt.Errorf("second snapshot %q", f[0])
	}
	v, err := nums(f[1:], "ns", "bytes", "blocks", "vm?", "rss?")
	if err != nil {
		return err
	}
	d.p.Snapshots = append(d.p.Snapshots, &Snapshot{Name: f[0], NS: v[0], Bytes: v[1], Blocks: v[2],
		VM: signed(v[3]), RSS: signed(v[4])})
	return nil
}

// node decodes an N record: id parent thread kind ref.
func (d *decoder) node(rest string) error {
	f, err := fields(rest, 5)
	if err != nil {
		return err
	}
	kind := f[3]
	f = slices.Delete(f, 3, 4)
	v, err := nums(f, "id", "parent?", "thread", "ref?")
	if err != nil {
		return err
	}
	n := &Node{ID: int(v[0])}
	if n.Thread, err = d.threads.lookup(v[2], "thread"); err != nil {
		return err
	}
	if len(kind) != 1 {
		return fmt.Errorf("kind %q, want R, F or A", kind)
	}
	n.Kind = Kind(kind[0])
	switch n.Kind {
	case KindRoot:
		if v[1] != none || v[3] != none {
			return errors.New("a root has parent -1 and ref -1")
		}
		if n.Thread.Root != nil {
			return fmt.Errorf("thread %d has a second root", n.Thread.ID)
		}
	case KindFunc:
		if n.Func, err = d.funcs.lookup(v[3], "function"); err != nil {
			return err
		}
	case KindAlloc:
		if n.Site, err = d.sites.lookup(v[3], "site"); err != nil {
			return err
		}
	default:
		return fmt.Errorf("kind %q, want R, F or A", kind)
	}
	if n.Kind != KindRoot {
		if v[1] == none {
			return fmt.Errorf("a %c node needs a parent", n.Kind)
		}
		if n.Parent, err = d.nodes.lookup(v[1], "parent"); err != nil {
			return err
		}
		if n.Parent.Kind == KindAlloc {
			return fmt.Errorf("parent %d is an allocation leaf", n.Parent.ID)
		}
		if n.Parent.Thread != n.Thread {
			return fmt.Errorf("thread %d, but parent %d is in thread %d", n.Thread.ID, n.Parent.ID, n.Parent.Thread.ID)
		}
	}
	if err := d.nodes.define(v[0], n); err != nil {
		return err
	}
	if n.Parent != nil {
		n.Parent.Children = append(n.Parent.Children, n)
	} else {
		n.Thread.Root = n
	}
	return nil
}

// finish checks that ids are dense, and sorts the bins by size and each
// node's children by id.
func (d *decoder) finish() error {
	p := d.p
	var err error
	if _, err = d.strs.dense("S"); err != nil {
		return err
	}
	if p.Funcs, err = d.funcs.dense("F"); err != nil {
		return err
	}
	if p.Sites, err = d.sites.dense("A"); err != nil {
		return err
	}
	if p.Threads, err = d.threads.dense("T"); err != nil {
		return err
	}
	if p.Nodes, err = d.nodes.dense("N"); err != nil {
		return err
	}
	p.finishMarks()
	slices.SortFunc(p.Bins, func(a, b Bin) int { return a.Size - b.Size })
	slices.SortFunc(p.PeakHeap, func(a, b PeakNode) int { return a.Node.ID - b.Node.ID })
	slices.SortFunc(p.Blocks, func(a, b Block) int { return cmp.Compare(a.Addr, b.Addr) })
	byID := func(a, b *Node) int { return a.ID - b.ID }
	for _, n := range p.Nodes {
		if !slices.IsSortedFunc(n.Children, byID) {
			slices.SortFunc(n.Children, byID)
		}
	}
	return nil
}

// ErrNotDense reports a profile whose ids of a record kind have a gap.
var ErrNotDense = errors.New("ids not dense")

// unescape decodes S record text: `\\` is a backslash, `\n` a newline.
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i == len(s) {
			return "", errors.New(`text ends in a lone \`)
		}
		switch s[i] {
		case '\\':
			b.WriteByte('\\')
		case 'n':
			b.WriteByte('\n')
		default:
			return "", fmt.Errorf(`unknown escape \%c`, s[i])
		}
	}
	return b.String(), nil
}

// escape encodes S record text, the inverse of unescape.
func escape(s string) string {
	if !strings.ContainsAny(s, "\\\n") {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}
