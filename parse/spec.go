package parse

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"sync"

	"modernc.org/cc/v4"
)

// Speculative parsing.
//
// The compiler takes a while to write the preprocessed text of a large unit
// (sqlite3.c: 0.12 s), and cc/v4 several times as long to parse it. So
// Preprocess starts parsing the text while the compiler still writes it,
// and Parse takes that parse over when it is called with the very text
// Preprocess returned.
//
// cc/v4 takes a translation unit as a list of sources, read in turn when
// its parse reaches them, and the tokens of one flow into the next. The
// speculative parse reads the text through specSources sources, each of
// which waits for specPart bytes or more of the compiler's output and takes
// all of its complete lines not taken yet (joined by join); the last one
// waits for the compiler to finish and takes the rest. Positions in them are
// offsets from the start of their source (Unit.sources).
//
// Anything unusual leaves the parse to Parse: a text that join leaves as it
// is, one that needs the _FloatN types renamed (parseable), a parse error
// (for the message with the original lines), a compiler error.
//
// A small unit, or one mostly system headers, is not parsed as it comes:
// pruned, cc/v4 parses it faster once it is all there (prune.go). The
// parse starts when the compiler has written specStart bytes, if no more
// than specSystemShare of them are system headers'.
const (
	specSources     = 64
	specPart        = 32 << 10
	specStart       = 256 << 10
	specSystemShare = 0.5
)

var errSpeculation = errors.New("speculative parse abandoned")

// A speculation is a parse of the compiler's output as it comes.
type speculation struct {
	mu     sync.Mutex
	cond   sync.Cond
	text   []byte // the output so far
	eof    bool   // the compiler is done
	failed bool   // the speculation is abandoned

	// Used by the parse only.
	cut    int   // the text before it is in sources
	starts []int // offset of each source in the text

	// Used by Write and finish only: the output respaced as it comes
	// (nil: not), and the part of a line it has not had yet.
	rs      *lineRespacer
	partial []byte
	spaced  []byte

	result   chan specResult
	sum      uint64 // hash of the final text (seed specSeed)
	st       *dialectState
	started  bool // the parse runs
	declined bool // the parse will not run
}

type specResult struct {
	ast    *cc.AST
	starts []int
}

var specSeed = maphash.MakeSeed()

// startSpeculation returns a speculation of the output written to it (an
// io.Writer) in the dialect of st; its parse starts once the output is
// worth it (Write).
func startSpeculation(st *dialectState) *speculation {
	s := &speculation{result: make(chan specResult, 1), st: st}
	s.cond.L = &s.mu
	return s
}

// run parses the output as it comes (startSpeculation).
func (s *speculation) run() {
	srcs := []cc.Source{{Name: "<predefined>", Value: s.st.predefined}, {Name: "<builtin>", Value: cc.Builtin}}
	for i := 0; i < specSources; i++ {
		srcs = append(srcs, cc.Source{Name: specName(i), Value: &specReader{s: s, last: i == specSources-1}})
	}
	var r specResult
	defer func() {
		if recover() != nil {
			r.ast = nil
		}
		s.abandon()
		s.result <- r
	}()
	cfg, err := s.st.config()
	if err != nil {
		return
	}
	if r.ast, err = cc.Translate(cfg, srcs); err != nil {
		r.ast = nil
	}
	r.starts = s.starts
}

// specName is the name of source i of a speculative parse.
func specName(i int) string { return fmt.Sprintf("<text part %d>", i) }

// Write appends p to the output; the first time the output reaches
// specStart bytes, it starts the parse if they are mostly the unit's own
// (not system headers'): a unit mostly system headers is parsed pruned
// once it is all there (prune.go), which takes less time than parsing it
// whole as it comes.
func (s *speculation) Write(p []byte) (int, error) {
	n := len(p)
	if s.rs != nil {
		p = s.respaced(p)
	}
	s.mu.Lock()
	s.text = append(s.text, p...)
	if !s.started && !s.declined && len(s.text) >= specStart {
		if systemShare(s.text) <= specSystemShare {
			s.started = true
			useHugeHeap(true) // done before the watchdog takes its base (watch)
			go s.run()
		} else {
			s.declined = true
		}
	}
	s.cond.Broadcast()
	s.mu.Unlock()
	return n, nil
}

// respaced returns the lines p completes respaced (rs), and keeps what
// follows the last newline for the next Write or finish. The result is
// valid until the next call.
func (s *speculation) respaced(p []byte) []byte {
	if len(s.partial) > 0 {
		s.partial = append(s.partial, p...)
		p = s.partial
	}
	last := bytes.LastIndexByte(p, '\n')
	out := s.spaced[:0]
	for off := 0; off <= last; {
		end := off + bytes.IndexByte(p[off:], '\n')
		if moved := s.rs.respace(p[off:end]); moved != nil {
			out = append(append(out, moved...), '\n')
		} else {
			out = append(out, p[off:end+1]...)
		}
		off = end + 1
	}
	s.partial = append(s.partial[:0], p[last+1:]...)
	s.spaced = out
	return out
}

// finish records that the compiler is done and returns its output.
func (s *speculation) finish() []byte {
	var tail []byte // the last line, if the output does not end with a newline
	if s.rs != nil && len(s.partial) > 0 {
		if tail = s.rs.respace(s.partial); tail == nil {
			tail = s.partial
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.text = append(s.text, tail...)
	s.eof = true
	s.cond.Broadcast()
	s.sum = maphash.Bytes(specSeed, s.text)
	return s.text
}

// abandon stops the parse: its sources fail.
func (s *speculation) abandon() {
	s.mu.Lock()
	s.failed = true
	s.cond.Broadcast()
	s.mu.Unlock()
}

// wait returns the parse of text, or nil if there is none.
func (s *speculation) wait(text []byte) (ast *cc.AST, sources map[string]int) {
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	if !started {
		return nil, nil
	}
	if s.sum != maphash.Bytes(specSeed, text) {
		s.abandon()
		return nil, nil
	}
	r := <-s.result
	if r.ast == nil {
		return nil, nil
	}
	sources = map[string]int{}
	for i, start := range r.starts {
		sources[specName(i)] = start
	}
	return r.ast, sources
}

// next returns the next source's text: the complete lines not taken yet,
// specPart bytes or more, joined, or with last or once the compiler is
// done, all the rest.
func (s *speculation) next(last bool) ([]byte, error) {
	from := s.cut + specPart // the source ends with the last newline after from
	for {
		s.mu.Lock()
		for !s.failed && !s.eof && (last || len(s.text) <= from || bytes.LastIndexByte(s.text[from:], '\n') < 0) {
			s.cond.Wait()
		}
		failed, eof, text := s.failed, s.eof, s.text
		s.mu.Unlock()
		if failed {
			return nil, errSpeculation
		}
		end := len(text)
		if !eof {
			end = from + bytes.LastIndexByte(text[from:], '\n') + 1
		}
		src, open := s.prepare(text[s.cut:end])
		if src == nil {
			s.abandon()
			return nil, errSpeculation
		}
		if open && !eof { // a comment goes on: wait for its end
			from = end
			continue
		}
		s.starts = append(s.starts, s.cut)
		s.cut = end
		return src, nil
	}
}

// prepare returns a copy of part of the text as the parse needs it
// (parseable, join), or nil if it cannot have it, and whether it ends
// inside a comment.
func (s *speculation) prepare(part []byte) (src []byte, open bool) {
	src = make([]byte, len(part))
	copy(src, part)
	if bytes.Contains(src, []byte("typedef float _Float32;")) { // renames all of the text
		return nil, false
	}
	src = parseable(src)
	ok, open := join(src)
	if !ok {
		return nil, false
	}
	return src, open
}

// specReader is one source of a speculative parse; cc/v4 reads it when its
// parse reaches it.
type specReader struct {
	s    *speculation
	last bool
	text []byte
	read bool
}

func (r *specReader) Read(p []byte) (int, error) {
	if !r.read {
		r.read = true
		var err error
		if r.text, err = r.s.next(r.last); err != nil {
			return 0, err
		}
	}
	if len(r.text) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.text)
	r.text = r.text[n:]
	return n, nil
}

// pending is the speculation of the last Preprocess, until Parse takes it.
var pending struct {
	sync.Mutex
	s       *speculation
	text    []byte
	dialect string // its Dialect.key()
}

// setPending makes s the pending speculation for text in dialect d,
// abandoning the one before.
func setPending(s *speculation, text []byte, d Dialect) {
	pending.Lock()
	if pending.s != nil {
		pending.s.abandon()
	}
	pending.s, pending.text, pending.dialect = s, text, d.key()
	pending.Unlock()
}

// takePending returns the pending speculation if it is for text (the same
// slice) in dialect d, and clears it.
func takePending(text []byte, d Dialect) *speculation {
	pending.Lock()
	defer pending.Unlock()
	s := pending.s
	if s == nil {
		return nil
	}
	same := len(text) == len(pending.text) && (len(text) == 0 || &text[0] == &pending.text[0]) && d.key() == pending.dialect
	pending.s, pending.text, pending.dialect = nil, nil, ""
	if !same {
		s.abandon()
		return nil
	}
	return s
}
