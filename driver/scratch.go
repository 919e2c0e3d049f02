package driver

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync"
)

// scratch is a command's temporary directory. Its name is chosen first
// (name), so that the jobs can name their files in it, and the directory
// made when something is first written there (path): a one-file compile
// and link that gives the woven text to the compiler on a pipe (the
// conftest's) writes nothing there, and the mkdir and the removal were
// 1-2% of its time. It is removed by remove, or by a signal that ends
// weave (onInterrupt).
type scratch struct {
	mu   sync.Mutex
	dir  string
	made bool
	stop func()
}

// name returns the directory's path, made or not. Its last part holds 64
// random bits: nobody can make it first (path makes it exclusively).
func (s *scratch) name() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir == "" {
		var b [8]byte
		rand.Read(b[:])
		s.dir = filepath.Join(tempDir(), "weave-cc-"+hex.EncodeToString(b[:]))
	}
	return s.dir
}

// path makes the directory (0700) if it is not made yet, and returns it.
func (s *scratch) path() (string, error) {
	dir := s.name()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.made {
		if err := os.Mkdir(dir, 0o700); err != nil {
			return "", err
		}
		s.made, s.stop = true, onInterrupt(func() { os.RemoveAll(dir) })
	}
	return dir, nil
}

func (s *scratch) remove() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.made {
		s.stop()
		os.RemoveAll(s.dir)
		s.made = false
	}
}
