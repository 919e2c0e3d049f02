package driver

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"syscall"

	"github.com/weave-profiler/weave/parse"
)

// The one-step link (oneStepLink) started before the weave: the compiler
// driver and cc1 start (about 4 ms before cc1 reads its input) while
// weave parses and weaves, the woven text then comes on the compile's
// standard input (`-x cpp-output -`: the same executable as from the
// woven file). A first compile of a small program spent that time after
// the weave.
//
// The link must never run on a text that is not the whole woven unit: a
// weave that fails or is not used (abort) sends a line that cc1 rejects,
// so the driver stops before linking and removes its temporary files; a
// weave killed with SIGKILL (its signal handlers do the rest) ends the
// driver with SIGTERM (Pdeathsig) before cc1, seeing the end of its
// input, can compile an empty unit that ld would link.
type earlyLink struct {
	w       *os.File // the compile's standard input
	stderr  bytes.Buffer
	done    chan struct{} // closed when the link has ended, with err
	err     error
	cleanup func() // removes a response file
}

// earlyInput stands for the woven text read from standard input among a
// link's objects (linkArgv).
const earlyInput = "-"

// poison is what an aborted early link compiles: a syntax error at file
// scope in any C dialect.
const poison = "}\n"

// startEarlyLink starts j's one-step link with the woven text to come on
// its standard input; nil where it is not started: the link's command
// line not to be had, or given the preprocessed text (from the direct
// cache), the runtime's files not ready yet (a first build of them: the
// weave goes first, as before) or the woven cache holding the unit (a
// rebuild, which may not compile it at all). Without the text (as the -E
// step starts) it waits for the runtime's files; a link not used then
// (the unit's object cached, or not woven) is aborted.
func (cfg *Config) startEarlyLink(c *cmdline, j *job, objects map[*input]string, sc *scratch, text []byte) *earlyLink {
	if text == nil {
		<-cfg.runtimeReady
	} else {
		select {
		case <-cfg.runtimeReady:
		default:
			return nil
		}
		if cfg.wovenCacheHolds(displayName(j.in.name), text, parse.NewDialect(cfg.bareCompiler(), c.preprocessFlags())) {
			return nil
		}
	}
	objs := maps.Clone(objects)
	objs[j.in] = earlyInput
	argv, err := cfg.oneStepArgv(c, objs, sc)
	if err != nil {
		return nil
	}
	argv, cleanup, err := responseFileIfLong(argv)
	if err != nil {
		return nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		cleanup()
		return nil
	}
	cmd := command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout = r, cfg.Stdout
	e := &earlyLink{w: w, done: make(chan struct{}), cleanup: cleanup}
	cmd.Stderr = &e.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	err = startChild(cmd)
	r.Close()
	if err != nil {
		w.Close()
		cleanup()
		return nil
	}
	go func() {
		e.err = exitError(argv[0], waitChild(cmd))
		close(e.done)
	}()
	return e
}

// finish gives the link the woven text and returns its result, its
// diagnostics in e.stderr.
func (e *earlyLink) finish(text []byte) error {
	_, werr := e.w.Write(text)
	e.w.Close()
	<-e.done
	e.cleanup()
	if e.err == nil && werr != nil {
		return werr
	}
	return e.err
}

// abort ends a link that is not to run, without linking.
func (e *earlyLink) abort() {
	e.finish([]byte(poison))
}

// wovenCacheHolds reports whether the woven cache has an entry for src's
// preprocessed text in dialect d.
func (cfg *Config) wovenCacheHolds(src string, text []byte, d parse.Dialect) bool {
	key := cfg.wovenCacheKey(src, text, d)
	if key == "" {
		return false
	}
	dir, err := wovenCacheDir()
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, key))
	return err == nil
}
