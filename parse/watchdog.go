package parse

import (
	"fmt"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// The parse's watchdog.
//
// cc/v4 can loop forever on some invalid text: `struct s { char *asm; };`
// where asm is a keyword (gnu mode; gcc rejects it) ends the text inside
// its error recovery, which then reports an error for the end of file, and
// appends it to its list, again and again. weave must never hang, so Parse
// gives up on a parse that runs longer than its time limit, or whose heap
// grows past what any parse of the text needs (the runaway above grows it
// by 50-100 MB/s): the parse of sqlite3.c's 4 MB holds about 300 MB, the
// memory limit is 256 MB plus 128 times the text (of all the parses
// running at the time). Go cannot stop a goroutine: the abandoned parse
// runs on until the process exits, which `weave -o` then does at once and
// `weave cc` after compiling the unit unwoven.
const (
	DefaultTimeout = 120 * time.Second
	memBase        = 256 << 20
	memPerByte     = 128
	watchEvery     = 100 * time.Millisecond
)

// inFlight is the length of the texts being parsed.
var inFlight atomic.Int64

// A TimeoutError is a parse the watchdog gave up on.
type TimeoutError struct {
	Name    string        // the unit's name
	After   time.Duration // how long it ran: the time limit, unless it stopped for memory
	Memory  uint64        // heap bytes it took, when it stopped for memory
	TextLen int
}

func (e *TimeoutError) Error() string {
	if e.Memory > 0 {
		return fmt.Sprintf("%s: parse did not finish: after %.3g s it held %d MB of memory for %d KB of text (a loop in the parser)",
			e.Name, e.After.Seconds(), e.Memory>>20, (e.TextLen+1023)>>10)
	}
	return fmt.Sprintf("%s: parse did not finish in %.3g s", e.Name, e.After.Seconds())
}

// parseResult is what the watched parse returns, or the value it panicked
// with.
type parseResult struct {
	u     *Unit
	err   error
	panic any
}

// watch runs parse for text and returns its result, or a TimeoutError
// once it has run longer than limit (<= 0: DefaultTimeout) or taken more
// memory than the text can need. A panic of parse is a panic of watch.
func watch(name string, text []byte, limit time.Duration, parse func() (*Unit, error)) (*Unit, error) {
	if limit <= 0 {
		limit = DefaultTimeout
	}
	done := make(chan parseResult, 1)
	// Before the base: a large parse's heap is given huge pages by
	// allocating and dropping a 256 MiB block (hugepages_linux.go), which
	// is not the parse's memory (in the parse, a tick while it lived
	// stopped a 1 KB unit for 256 MB).
	paceGC()
	hugeHeapFor(text)
	heap := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(heap)
	base := heap[0].Value.Uint64()
	// The heap is the process's: parses running at the same time (weave
	// cc compiles its inputs in parallel) count in its growth.
	inFlight.Add(int64(len(text)))
	defer inFlight.Add(-int64(len(text)))
	start := time.Now()
	go func() {
		var r parseResult
		defer func() {
			if p := recover(); p != nil {
				r = parseResult{panic: p}
			}
			done <- r
		}()
		r.u, r.err = parse()
	}()
	tick := time.NewTicker(watchEvery)
	defer tick.Stop()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		select {
		case r := <-done:
			if r.panic != nil {
				panic(r.panic)
			}
			if time.Since(start) > limit {
				// Over its time as well: the same answer whichever of the
				// two the select saw first (a 1 µs limit in a test).
				return nil, &TimeoutError{Name: name, After: limit, TextLen: len(text)}
			}
			return r.u, r.err
		case <-timer.C:
			return nil, &TimeoutError{Name: name, After: limit, TextLen: len(text)}
		case <-tick.C:
			metrics.Read(heap)
			maxMem := uint64(memBase) + memPerByte*uint64(inFlight.Load())
			if now := heap[0].Value.Uint64(); now > base && now-base > maxMem {
				return nil, &TimeoutError{Name: name, After: time.Since(start), Memory: now - base, TextLen: len(text)}
			}
		}
	}
}
