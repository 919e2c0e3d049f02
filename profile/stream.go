package profile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ReadStream reads what programs wrote into a stream along with their
// profiles (WEAVE_OUT=/dev/stdout ./prog | weave report -): the
// program's own output is skipped (lines before a profile's header and
// after its E record: a program's buffered stdout is flushed after the
// runtime wrote the profile at exit), and several profiles (a fork child
// inherits the stream) are summed as Merge sums files. It returns the
// profile and how many there were; errors start with name and give the
// stream's line.
func ReadStream(r io.Reader, name string) (*Profile, int, error) {
	var (
		ps      []*Profile
		sources []string
		chunk   bytes.Buffer
		start   int // the line of chunk's header, 0 outside a profile
	)
	br := bufio.NewReader(r)
	if b, _ := br.Peek(2); gzipped(b) {
		return nil, 0, named(name, errGzipped)
	}
	// parse reads the profile in chunk, which began at line start.
	parse := func() error {
		p, err := read(&chunk, "")
		chunk.Reset()
		var pe *PosError
		if errors.As(err, &pe) {
			pe.Line += start - 1
		} else if err != nil && start > 1 {
			err = &PosError{Line: start, Col: 1, Err: err}
		}
		if err != nil {
			return named(name, err)
		}
		ps = append(ps, p)
		sources = append(sources, fmt.Sprintf("%s (profile %d, line %d)", name, len(ps), start))
		start = 0
		return nil
	}
	for line := 1; ; line++ {
		text, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			return nil, 0, named(name, err)
		}
		if text == "" {
			break
		}
		if strings.HasPrefix(text, "weave profile ") {
			if start > 0 { // the one before never ended: its error
				if perr := parse(); perr != nil {
					return nil, 0, perr
				}
			}
			start = line
		}
		if start > 0 {
			chunk.WriteString(text)
			if n, ok := strings.CutPrefix(text, "E "); ok && strings.HasSuffix(n, "\n") && isCount(n[:len(n)-1]) {
				if perr := parse(); perr != nil {
					return nil, 0, perr
				}
			}
		}
		if err == io.EOF {
			break
		}
	}
	if start > 0 { // cut short: read says how
		if err := parse(); err != nil {
			return nil, 0, err
		}
	}
	switch len(ps) {
	case 0:
		return nil, 0, named(name, ErrNotProfile)
	case 1:
		return ps[0], 1, nil
	}
	p, err := Merge(ps, sources)
	return p, len(ps), err
}

// isCount reports whether s is an E record's count.
func isCount(s string) bool {
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}
