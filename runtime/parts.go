package runtime

import (
	"embed"

	"github.com/weave-profiler/weave/pseudostack"
	"github.com/weave-profiler/weave/tracepoints"
	"github.com/weave-profiler/weave/vmmap"
)

// files holds this package's C parts.
//
//go:embed *.c *.h
var files embed.FS

// parts lists the runtime's C parts in the order Source joins them into one
// translation unit. Headers (.h) are not emitted where they are listed but
// where a part first #includes them; every other part starts with
// #include "internal.h". Adding a part is one line here, placed after what
// it uses: a C file of this folder, or of a folder of its own whose Go
// package embeds it (as pseudostack.Files does). What other parts call of
// it is declared in internal.h.
var parts = []part{
	file(files, "runtime", "internal.h"),                          // types, shared state and its threading contracts, helpers
	file(pseudostack.Files, "pseudostack", "weave.h"),             // the woven-code ABI, with the inline fast enter and leave
	file(pseudostack.Files, "pseudostack", "pseudostack.h"),       // the pseudo-stack and context tree's types, what its parts offer
	guardVariants(pseudostack.Files, "pseudostack", "weave.h"),    // the x86-64 guard's other variants, generated
	outOfLine(pseudostack.Files, "pseudostack", "weave.h"),        // their out-of-line copies, generated
	abiMark(pseudostack.Files, "pseudostack", "weave.h"),          // the symbol of the ABI woven objects need, generated
	file(pseudostack.Files, "pseudostack", "cct.c"),               // calling-context tree: nodes, child lookup, recursion folding
	file(files, "runtime", "thread.c"),                            // a thread's set-up (its root, pseudo-stack, bins, heap and time accounts) and exit
	file(pseudostack.Files, "pseudostack", "enter.c"),             // the slow enter, setjmp resync
	file(pseudostack.Files, "pseudostack", "known.c"),             // the functions known not to allocate, for calls framed where made
	file(pseudostack.Files, "pseudostack", "timed.c"),             // the timed push and pop (exact time, function tracepoints), their clock
	file(files, "runtime", "init.c"),                              // environment, one-time set-up, never-freed memory, constructor
	file(files, "runtime", "resident.c"),                          // the runtime's own maps, listed: its resident memory (WEAVE_STATS)
	file(files, "runtime", "ownstack.c"),                          // deep work (the exit writer, the channel's opening) on a stack of the runtime's
	file(files, "runtime", "spill.c"),                             // the side table's spill table: the blocks its radix table cannot hold
	file(files, "runtime", "side.c"),                              // the side table: live blocks by address
	file(vmmap.Files, "vmmap", "vmmap.c"),                         // the memory map, the heap over time, the heap at its peak
	file(vmmap.Files, "vmmap", "vmpack.c"),                        // the snapshots' copies of the maps, packed line against line
	file(vmmap.Files, "vmmap", "vmthreads.c"),                     // the heap in use with several threads: per-thread credit
	forSize(file(vmmap.Files, "vmmap", "vmwrite.c")),              // their profile records
	file(files, "runtime", "scrub.c"),                             // freed blocks zeroed for the leak scan, realloc's moves with them, WEAVE_QUARANTINE
	file(files, "runtime", "advice.c"),                            // __weave_malloc & co. and the recording behind them
	file(files, "runtime", "outer.c"),                             // declared allocators: one record per outermost call
	file(files, "runtime", "pool.c"),                              // the pool API: a program's own allocator's objects
	file(files, "runtime", "hidden.c"),                            // hidden allocations' sites: per operation and caller object
	file(files, "runtime", "interpose.c"),                         // the interposed malloc family (hidden allocations)
	forSize(file(files, "runtime", "out.c")),                      // buffered output and scratch memory for the exit writers
	forSize(file(files, "runtime", "profile.c")),                  // the profile writer
	forSize(file(files, "runtime", "picture.c")),                  // the heap picture: the blocks live at exit (X records)
	forSize(file(files, "runtime", "safefile.c")),                 // creating files safely (O_EXCL, random temporary names)
	forSize(file(files, "runtime", "save.c")),                     // the profile's file name
	forSize(file(files, "runtime", "summary.c")),                  // totals, top leaks, the heap summary
	forSize(file(files, "runtime", "leakpar.c")),                  // the leak scan's helper threads (raw clone), for its passes by address range
	file(files, "runtime", "leakmark.c"),                          // the leak scan's state, page index and mark
	forSize(file(files, "runtime", "leakstack.c")),                // where the live part of each thread's stack begins
	forSize(file(files, "runtime", "leakstop.c")),                 // stopping the other threads for the scan: a ptrace tracer, else a signal
	forSize(file(files, "runtime", "orphan.c")),                   // the program's threads all gone: the runtime's end, so the process does
	file(files, "runtime", "leakscan.c"),                          // leak kinds at exit: a conservative mark from the roots
	forSize(file(files, "runtime", "leakreport.c")),               // the scan's results: suppressions, merged leaks, exit status
	forSize(file(files, "runtime", "unload.c")),                   // a woven library unloaded before exit: its records copied
	forSize(file(files, "runtime", "exit.c")),                     // the ways out: exit, _exit, exec, crash signals, fork
	forSize(file(files, "runtime", "checkpoint.c")),               // WEAVE_CHECKPOINT: a profile every so often while running
	file(files, "runtime", "sampler.c"),                           // sampled time's sampler: a thread of weave's, woken by each thread's CPU timer
	file(files, "runtime", "timing.c"),                            // function time, exact and sampled
	file(tracepoints.Files, "tracepoints", "trace.c"),             // tracepoints: patterns, event buffers
	forSize(file(tracepoints.Files, "tracepoints", "control.c")),  // the control channel: a thread of weave's answers weave trace/snapshot/mark
	forSize(file(tracepoints.Files, "tracepoints", "unframed.c")), // a trace pattern that selects nothing, or only functions without a frame
	file(files, "runtime", "marks.c"),                             // WEAVE_MARK, weave mark: marks, generations, the blocks live at each
	file(files, "runtime", "regions.c"),                           // WEAVE_REGION: labelled regions as pseudo-functions
}
