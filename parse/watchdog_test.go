package parse

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// TestWatchMemory: a parse whose heap runs away (as cc/v4's error list does
// in its loop) is given up once it holds more than the text can need,
// long before the time limit; the error says so.
func TestWatchMemory(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	start := time.Now()
	_, err := watch("loop.c", []byte("struct s { char *asm; };\n"), time.Hour, func() (*Unit, error) {
		var hold [][]byte
		for {
			select {
			case <-stop:
				return nil, nil
			default:
				hold = append(hold, make([]byte, 1<<20)) // 1 GB/s at most
				time.Sleep(time.Millisecond)
			}
		}
	})
	var te *TimeoutError
	if !errors.As(err, &te) || te.Memory < memBase || time.Since(start) > 5*time.Minute {
		t.Fatalf("err %v after %v, want a TimeoutError for memory", err, time.Since(start))
	}
	t.Log(err)
}

// TestWatchResult: a parse that finishes returns its result; its panic is
// the caller's panic.
func TestWatchResult(t *testing.T) {
	want := errors.New("syntax")
	if _, err := watch("a.c", nil, time.Minute, func() (*Unit, error) { return nil, want }); err != want {
		t.Errorf("err %v, want %v", err, want)
	}
	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("recovered %v, want boom", r)
		}
	}()
	watch("a.c", nil, time.Minute, func() (*Unit, error) { panic("boom") })
	t.Error("no panic")
}

// TestWatchPacesFirst: the collector is paced (and the heap given huge
// pages, which allocates and drops a 256 MiB block) before the watchdog
// takes its base and the parse starts: in the parse, a tick while the
// block lived counted it as the parse's memory, and a 1 KB unit was
// given up for holding 256 MB (TestParseWatchdog failed so in CI).
func TestWatchPacesFirst(t *testing.T) {
	paceOnce = sync.Once{}
	_, err := watch("a.c", []byte("int x;\n"), time.Minute, func() (*Unit, error) {
		late := false
		paceOnce.Do(func() { late = true })
		if late {
			return nil, errors.New("the parse started before the collector was paced")
		}
		return nil, nil
	})
	if err != nil {
		t.Error(err)
	}
}
