package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// sizes are the benchmark sizes of one -size.
type sizes struct {
	runs      int
	widgets   int    // widgets made
	trees     int    // binary-trees depth
	fib, loop int    // calls: fib(n), loop iterations (2 calls each)
	depthN    int    // depth: allocations
	luaRounds int    // alloc.lua rounds (about 340 allocations each)
	sqlRows   int    // workload.sql rows
	messages  int    // server: messages in all, shared out among its threads
	bigOpt    string // optimisation of the Lua and sqlite builds
	suiteRuns int    // profiles weave merge sums (a test suite's runs)
}

var sizeTable = map[string]sizes{
	"full": {runs: 5, widgets: 1000000, trees: 16, fib: 35, loop: 10000000, depthN: 5000000,
		luaRounds: 25000, sqlRows: 100000, messages: 32000000, bigOpt: "-O2",
		suiteRuns: 4437},
	// tiny only checks that everything still builds and runs: Lua and
	// sqlite are built at -O0, which compiles in a fraction of the time.
	"tiny": {runs: 1, widgets: 10000, trees: 6, fib: 20, loop: 100000, depthN: 6400,
		luaRounds: 100, sqlRows: 1000, messages: 8000, bigOpt: "-O0",
		suiteRuns: 50},
}

// program is a benchmark: a build (shared by programs with the same
// artefact) and the arguments of its run.
type program struct {
	name, desc string
	artefact   string // built binary's name: programs sharing it are built once
	build      func(b *builder, variant, out string) error
	args       []string
	stdin      string // file on standard input, or ""
	allocs     bool   // an allocation benchmark: per-event costs are shown
	threads    int    // threads that allocate (0: one); per-event costs are also per CPU second
	// peers, if not nil, are the only peer configurations run on it
	peers []string
}

// programs lists the benchmark programs at sizes sz.
func programs(e *env, sz sizes) []*program {
	itoa := strconv.Itoa
	bt := filepath.Join(e.corpus, "assets/benchmarksgame-team.pages.debian.net/binary-trees.c")
	depth := func(d int) *program {
		return &program{
			name:     "depth-" + itoa(d),
			desc:     fmt.Sprintf("bench/programs/depth.c: %s allocations made %d calls deep", commas(int64(sz.depthN)), d),
			artefact: "depth", build: single(filepath.Join(e.src, "depth.c")),
			args: []string{itoa(d), itoa(sz.depthN)}, allocs: true,
		}
	}
	// The server rows share one number of messages among their threads,
	// so that each row's plain run is long enough (0.5 s or more at full
	// size) for its wall time to be read: with 1,000,000 messages a
	// thread, plain server-2 took 27 to 76 ms from one command to the
	// next. valgrind runs one thread at a time and uftrace records every
	// call: of the peers, only those that run the threads as they are.
	server := func(t int) *program {
		n := sz.messages / t
		return &program{
			name: "server-" + itoa(t),
			desc: fmt.Sprintf("bench/programs/server.c: %d thread(s) x %s messages of 16-271 bytes, two calls down, kept in a ring; every 64th freed by another thread",
				t, commas(int64(n))),
			artefact: "server", build: single(filepath.Join(e.src, "server.c"), "-lpthread"),
			args: []string{itoa(t), itoa(n)}, allocs: true, threads: t,
			peers: []string{"clang", "lsan", "heaptrack"},
		}
	}
	threads := func(t int) *program {
		return &program{
			name:     "threads-" + itoa(t),
			desc:     fmt.Sprintf("bench/programs/threads.c: %d thread(s) alive at once, each with 100 messages of 16-271 bytes: memory per thread", t),
			artefact: "threads", build: single(filepath.Join(e.src, "threads.c"), "-lpthread"),
			args: []string{itoa(t)}, threads: t,
		}
	}
	bt5 := filepath.Join(e.corpus, "assets/benchmarksgame-team.pages.debian.net/binary-trees-5.c")
	sql := filepath.Join(e.work, fmt.Sprintf("workload-%d.sql", sz.sqlRows))
	return []*program{
		{name: "widgets", desc: fmt.Sprintf("testdata/widgets.c, mprof's producer/consumer example, %s widgets (half of them leak)", commas(int64(sz.widgets))),
			artefact: "widgets", build: single(filepath.Join(e.root, "testdata/widgets.c")),
			args: []string{itoa(sz.widgets)}, allocs: true},
		{name: "binary-trees", desc: fmt.Sprintf("the benchmarks game's binary-trees.c (ccorpus2), depth %d", sz.trees),
			artefact: "binary-trees", build: single(bt, "-lm"),
			args: []string{itoa(sz.trees)}, allocs: true},
		{name: "calls", desc: fmt.Sprintf("bench/programs/calls.c: fib(%d) plus %s iterations of two small calls, no allocation (%s calls)",
			sz.fib, commas(int64(sz.loop)), commas(fibCalls(sz.fib)+2*int64(sz.loop))),
			artefact: "calls", build: single(filepath.Join(e.src, "calls.c")),
			args: []string{itoa(sz.fib), itoa(sz.loop)}},
		depth(10),
		depth(1000),
		{name: "lua", desc: fmt.Sprintf("Lua 5.4.4 (ccorpus2, make linux, %s) running bench/programs/alloc.lua %d", sz.bigOpt, sz.luaRounds),
			artefact: "lua", build: buildLua,
			args: []string{filepath.Join(e.src, "alloc.lua"), itoa(sz.luaRounds)}, allocs: true},
		{name: "sqlite3", desc: fmt.Sprintf("sqlite3 3.38.1 shell (ccorpus2 amalgamation, %s) on bench/programs/workload.sql, %s rows, in memory", sz.bigOpt, commas(int64(sz.sqlRows))),
			artefact: "sqlite3", build: buildSQLite(sz.sqlRows, sql),
			args: []string{":memory:"}, stdin: sql, allocs: true},
		server(1), server(2), server(4), server(8),
		{name: "binary-trees-mt", desc: fmt.Sprintf("the benchmarks game's binary-trees-5.c (ccorpus2): a thread per depth, depth %d", sz.trees),
			artefact: "binary-trees-mt", build: single(bt5, "-lpthread"),
			args: []string{itoa(sz.trees)}, allocs: true, threads: (sz.trees-4)/2 + 1},
		threads(1), threads(16), threads(64),
	}
}

// selectPrograms keeps the programs named in list (all if empty).
func selectPrograms(all []*program, list string) ([]*program, error) {
	if strings.TrimSpace(list) == "" {
		return all, nil
	}
	var ps []*program
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		found := false
		for _, p := range all {
			if p.name == n {
				ps, found = append(ps, p), true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown program %q", n)
		}
	}
	return ps, nil
}

// fibCalls is the number of calls fib(n) makes.
func fibCalls(n int) int64 {
	a, b := int64(0), int64(1) // fib(0), fib(1)
	for i := 0; i < n+1; i++ {
		a, b = b, a+b
	}
	return 2*a - 1 // 2*fib(n+1) - 1
}

// single builds one C file (with extra link flags).
func single(src string, libs ...string) func(*builder, string, string) error {
	return func(b *builder, v, out string) error {
		cc, cenv := b.compiler(v)
		args := append(append(append(cc, b.flags(v, "-O2")...), "-o", out, src), libs...)
		args = append(args, b.ldflags(v)...)
		return b.cached(out, cenv, args, []string{src}, func() error { return b.exec("", cenv, args...) })
	}
}

// buildLua unpacks Lua 5.4.4 for the variant and builds it with make linux.
func buildLua(b *builder, v, out string) error {
	tgz := filepath.Join(b.env.corpus, "assets/www.lua.org/ftp/lua-5.4.4.tar.gz")
	cc, cenv := b.compiler(v)
	mk := []string{"make", "linux",
		"CC=" + strings.Join(cc, " ") + " -std=gnu99",
		"MYCFLAGS=" + strings.Join(b.flags(v, b.sz.bigOpt), " "),
		"MYLDFLAGS=" + strings.Join(b.ldflags(v), " ")}
	return b.cached(out, cenv, mk, []string{tgz}, func() error {
		dir := filepath.Join(b.env.work, "build", "lua-"+v)
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		if err := untgz(tgz, dir); err != nil {
			return err
		}
		src := filepath.Join(dir, "lua-5.4.4")
		if err := b.exec(src, cenv, mk...); err != nil {
			return err
		}
		return copyFile(filepath.Join(src, "src", "lua"), out)
	})
}

// buildSQLite builds the sqlite3 shell from the amalgamation, and writes
// the workload for rows rows to sql.
func buildSQLite(rows int, sql string) func(*builder, string, string) error {
	return func(b *builder, v, out string) error {
		w, err := os.ReadFile(filepath.Join(b.env.src, "workload.sql"))
		if err != nil {
			return err
		}
		if err := writeIfChanged(sql, []byte(strings.ReplaceAll(string(w), "ROWS", strconv.Itoa(rows)))); err != nil {
			return err
		}
		dir := filepath.Join(b.env.corpus, "assets/sqlite-amalgamation-3380100")
		srcs := []string{filepath.Join(dir, "shell.c"), filepath.Join(dir, "sqlite3.c")}
		cc, cenv := b.compiler(v)
		args := append(append(append(cc, b.flags(v, b.sz.bigOpt)...), "-o", out), srcs...)
		args = append(append(args, "-lpthread", "-ldl", "-lm"), b.ldflags(v)...)
		return b.cached(out, cenv, args, append(srcs, filepath.Join(dir, "sqlite3.h")), func() error { return b.exec("", cenv, args...) })
	}
}

// commas formats n with thousands separators.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return "-" + commas(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
