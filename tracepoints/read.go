package tracepoints

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Kind is what an event records.
type Kind uint8

// The event kinds, as trace.c numbers them.
const (
	Enter Kind = 1 + iota // a traced function was entered
	Exit                  // and left
	Alloc                 // a block was allocated at a traced site
	Free                  // a block allocated at a traced site was freed
)

func (k Kind) String() string {
	switch k {
	case Enter:
		return "enter"
	case Exit:
		return "exit"
	case Alloc:
		return "alloc"
	case Free:
		return "free"
	}
	return fmt.Sprintf("kind%d", uint8(k))
}

// An Event is one record of a trace file.
type Event struct {
	Thread uint32 // the profile's T id
	Tid    int32  // kernel thread id
	NS     uint64 // ns since the process started (the heap timeline's clock)
	Node   uint32 // runtime node index: the profile's Q records map it to an N id
	Kind   Kind
	Depth  uint32 // pseudo-stack depth
	Addr   uint64 // block address (Alloc, Free)
	Size   uint64 // block size (Alloc, Free)
}

// FormatVersion is the version of the trace file's layout (the block
// header and the event, as trace.c writes them and Read reads them): a
// change to either increments it and the magic with it.
const FormatVersion = 1

const (
	magic      = 0x52545657 // "WVTR"
	headerSize = 16
	eventSize  = 32
	maxEvents  = 2047 // per block, as trace.c writes them
)

// Read calls f for each event of the trace file r, block by block, in
// the order the threads wrote them (each thread's events are in time
// order; sort by NS to merge threads). It holds one block in memory.
func Read(r io.Reader, f func(Event) error) error {
	br := bufio.NewReaderSize(r, 1<<16)
	var hdr [headerSize]byte
	buf := make([]byte, maxEvents*eventSize)
	for block := 0; ; block++ {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("trace block %d: truncated header", block)
		}
		le := binary.LittleEndian
		if le.Uint32(hdr[0:]) != magic {
			return fmt.Errorf("trace block %d: not a weave trace (bad magic)", block)
		}
		thread, tid, n := le.Uint32(hdr[4:]), int32(le.Uint32(hdr[8:])), le.Uint32(hdr[12:])
		if n > maxEvents {
			return fmt.Errorf("trace block %d: %d events, at most %d", block, n, maxEvents)
		}
		b := buf[:n*eventSize]
		if _, err := io.ReadFull(br, b); err != nil {
			return fmt.Errorf("trace block %d: truncated events: %w", block, errors.Join(err))
		}
		for i := 0; i < int(n); i++ {
			e := b[i*eventSize:]
			kd := le.Uint32(e[12:])
			ev := Event{Thread: thread, Tid: tid, NS: le.Uint64(e[0:]), Node: le.Uint32(e[8:]),
				Kind: Kind(kd >> 24), Depth: kd & 0xffffff, Addr: le.Uint64(e[16:]), Size: le.Uint64(e[24:])}
			if err := f(ev); err != nil {
				return err
			}
		}
	}
}
