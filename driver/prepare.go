package driver

import (
	"os"
	"os/exec"
	"sync"

	"github.com/weave-profiler/weave/parse"
	"github.com/weave-profiler/weave/runtime"
	"github.com/weave-profiler/weave/weave"
)

// What weave cc does before and while its -E step runs. The step's wall
// time is the woven compile's own start (its cc1 runs alone on a CPU), so
// what the weave will need anyway is made meanwhile on the other one, and
// what the process looked up several times is looked up once.

// prepare makes, for the weave of a unit of c that comes after its -E
// step, weave.h (runtime.Header), the weave's tables and the dialect's
// predefined macros.
func (cfg *Config) prepare(c *cmdline) {
	runtime.Header()
	weave.Prepare()
	parse.NewDialect(cfg.bareCompiler(), c.preprocessFlags()).Prepare()
}

// Warm starts, in a goroutine, what weave cc's first child will wait
// for (warmExec): for a caller with CLI parsing and configuration to do
// before it calls CC.
func Warm() { go warmExec() }

// warmExec sets up what the first child's start would wait for: the
// interrupt handling (catchInterrupts: signal.Notify waits for the
// runtime's signal-mask thread, 0.1-1.6 ms) and os/exec's probe of
// pidfds (pidfd_open, waitid and the clone of a child that exits at once,
// 0.3 ms).
func warmExec() {
	catchInterrupts()
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Release()
	}
}

// lookPath is exec.LookPath once per name: PATH does not change while
// weave runs, and a weave cc command looked its compiler up six times
// (checkCompiler, isGCC twice, each child's start).
func lookPath(name string) (string, error) {
	if r, ok := lookPaths.Load(name); ok {
		r := r.(lookResult)
		return r.path, r.err
	}
	p, err := exec.LookPath(name)
	lookPaths.Store(name, lookResult{p, err})
	return p, err
}

var lookPaths sync.Map // name -> lookResult

type lookResult struct {
	path string
	err  error
}

// command is exec.Command with the program found by lookPath (argv[0]
// still name, as exec.Command leaves it).
func command(name string, args ...string) *exec.Cmd {
	p, err := lookPath(name)
	if err != nil || p == name {
		return exec.Command(name, args...)
	}
	cmd := exec.Command(p, args...)
	cmd.Args[0] = name
	return cmd
}
