// Package profile reads and writes weave profile files and holds their data model.
package profile

// The weave profile format, version 1.
//
// The runtime writes it at exit (runtime/profile.c, write_profile; the D and
// M time_* records in runtime/timing.c, time_write; the file's name and
// creation in runtime/save.c); Read and Write in this package read and
// write it. Any change to the format is made here first.
//
// A profile is UTF-8 text, one record per line, '\n'-terminated. The first
// line is
//
//	weave profile 1
//
// where 1 is the format version. A reader rejects a higher version. Every
// following line is a record: a one-character tag, then fields separated by
// single spaces. A reader skips records of tags it does not know (a newer
// writer's; such tags are letters) and rejects a tag that is not letters. Numbers are unsigned decimal unless stated; -1 means "none".
// Ids are dense, start at 0, and a record is always defined before a record
// that refers to it. Lines starting with '#' are comments.
//
//	M key value             metadata; value is the rest of the line.
//	                        Keys written by the runtime: pid, ppid, argv (the
//	                        command line, arguments separated by spaces; the
//	                        program name and "(redacted)" under
//	                        WEAVE_REDACT=argv: profiles can hold secrets),
//	                        start_ns / end_ns (CLOCK_REALTIME), complete (1, or
//	                        0 when the profile was written from a crash or
//	                        abort: the counts stop there), runtime (ABI
//	                        version), end (how the process ended: exit,
//	                        _exit, quick_exit, exec (written just before an
//	                        exec* call), checkpoint (written while the
//	                        program ran, WEAVE_CHECKPOINT; complete 0, and
//	                        end_ns says when), or "signal N"), hidden (1 when
//	                        library allocations were recorded, see A),
//	                        frameless (the number of woven functions the
//	                        weaver left without a frame, --frames auto: they
//	                        have no F nodes, their time is their callers';
//	                        omitted when 0), call_framed (the number of
//	                        woven functions framed only around their calls
//	                        that may allocate, --frames auto: their F
//	                        nodes count those calls; omitted when 0), and in
//	                        a fork child inherited and inherited_freed
//	                        ("blocks bytes": the parent's blocks live at the
//	                        fork, and those of them the child freed; neither
//	                        is counted in the child's H records); unrecorded
//	                        ("blocks bytes": allocations the runtime had no
//	                        memory to record, an address space full under
//	                        ulimit -v: in no H record; omitted when 0),
//	                        alloc_refused (allocations the C library
//	                        returned NULL for; omitted when 0); after a leak
//	                        scan, leak_scan (its nanoseconds),
//	                        leak_scan_threads (the threads that read the
//	                        blocks, WEAVE_LEAK_THREADS), leak_stop (how the
//	                        other threads were stopped for it: ptrace, or
//	                        signal where ptrace was refused, or none when
//	                        there were none) and leak_stop_ns (the
//	                        nanoseconds stopping and resuming them took,
//	                        which leak_scan includes); a scan that ran out
//	                        of memory, leak_scan_failed ("out of memory")
//	                        instead, or one that could not read the
//	                        process's maps, "maps unreadable". With timing
//	                        on (WEAVE_TIME), time_* keys: see the D record.
//	                        A merged profile (weave merge, merge.go) has
//	                        merged (the number of runs), source (the first
//	                        few inputs: file and argv), run (each run's
//	                        pid and start_ns: a run in two files is
//	                        refused), run_ns (the sum of
//	                        the runs' times), leak_scan_runs (the runs
//	                        whose leak kinds its K records sum),
//	                        exec_runs (the runs without a scan that ended
//	                        by exec; omitted when 0) and
//	                        leak_scan_failed_runs (the runs whose scan
//	                        failed; leak_scan_failed their distinct
//	                        reasons, joined by " | "); the runtime's counts
//	                        above are the runs' sums (mergecounts.go).
//	S id text               an interned string; text is the rest of the line,
//	                        with '\\' written as `\\` and newline as `\n`.
//	F id name file line [flags]
//	                        a woven function: name and file are string ids.
//	                        flags, when present: 1 = frameless (--frames
//	                        auto), in the tree only through its allocation
//	                        sites: its calls are not counted; 2 = framed at
//	                        its calls that may allocate: its calls counted
//	                        are those calls.
//	A id fn file line col op type size [flags]
//	                        an allocation call site: fn is a function id, file a
//	                        string id, op the string id of the called function's
//	                        name ("malloc", "calloc", ...), type the string id
//	                        of what the site's own size expression says the
//	                        block is, in C ("struct entry" for sizeof(struct
//	                        entry), "char *[4]" for 4 * sizeof(char *),
//	                        "unsigned char[n]" for n * sizeof(unsigned char),
//	                        "struct hdr + n" for sizeof(struct hdr) + n; -1:
//	                        none, as for malloc(16)), size the block's size
//	                        where type is all of it (0 for a run-time count).
//	                        flags, when
//	                        present, is a bit set (unknown bits are ignored):
//	                        1 = hidden, KPROF's "hidden allocation": not a call
//	                        in woven code but an entry of the allocator (op)
//	                        called by code that was not woven (the C library's
//	                        getline, fopen, strdup..., another library). A hidden
//	                        site has fn -1 and file "(hidden)" (or "(dynamic
//	                        linker)" for the dynamic linker's own blocks, a
//	                        thread's DTV and TLS, which the leak scan takes as
//	                        roots), line and col 0;
//	                        its allocations are charged to the thread's
//	                        innermost woven function at the time: the parent of
//	                        the A node (or its root). 2 = caller: fn is -1
//	                        and the blocks are charged to the innermost framed
//	                        function, the parent of the A node: the entry of a
//	                        declared allocator (weave --realloc l_alloc:...)
//	                        defined in woven code, which counts its calls
//	                        through pointers (file, line, col: its
//	                        definition's), or a call in a function that
//	                        --exclude & co. leave without a frame. A call of a
//	                        declared allocator is an ordinary site, op the
//	                        kind's ("malloc", "calloc", "realloc", "free").
//	T id tid                a thread: id is its number in this profile (the
//	                        main thread is normally 0), tid its kernel thread id.
//	N id parent thread kind ref
//	                        a calling-context-tree node. parent is a node id or
//	                        -1 for a thread's root; thread a T id; kind is 'R'
//	                        (root; ref -1), 'F' (a woven function; ref is an F
//	                        id) or 'A' (an allocation leaf; ref is an A id).
//	                        The runtime writes the nodes where the process did
//	                        work of its own (calls, time, allocations, a trace),
//	                        the frames open at exit, and their ancestors: a
//	                        fork child's inherited tree, its counts zeroed, is
//	                        not written, nor the F, A and S records only it used.
//	C node calls            the number of times the node was entered (F nodes;
//	                        omitted when 0).
//	H node a0 a1 a2 a3 b0 b1 b2 b3 f0 f1 f2 f3 g0 g1 g2 g3
//	                        heap counters of a node (A nodes; omitted when all
//	                        are 0), each by mprof's size class 0=s (0-32 bytes),
//	                        1=m (33-256), 2=l (257-2048), 3=x (>2048): a =
//	                        allocations, b = bytes allocated, f = frees of
//	                        blocks allocated here, g = bytes of those blocks.
//	                        A realloc counts as a free of the old block and an
//	                        allocation of the new one.
//	B size allocs frees bytes freed_bytes
//	                        mprof's bin table: one line per non-empty bin;
//	                        size 0..1024 is the exact request size, 1025 the
//	                        bin of all larger requests.
//	D node ns               self time of a node (R and F nodes; omitted when
//	                        0): nanoseconds spent in the node's function in
//	                        that calling context, its callees excluded; for a
//	                        root, the thread's time outside woven functions.
//	                        A node's inclusive time is the sum over its
//	                        subtree. Metadata tells how it was measured:
//	                          time_mode   "exact": wall-clock time between
//	                                      entries and exits, minus the
//	                                      runtime's own cost per call;
//	                                      "sampled": thread CPU time, the
//	                                      split among nodes by sampling.
//	                          time_clock  exact: "tsc" or "monotonic";
//	                                      sampled: "thread_cputime", or
//	                                      for Go "goroutine_wall" (each
//	                                      goroutine in woven code sampled
//	                                      where it is, running or
//	                                      blocked: wall-clock time).
//	                          time_tsc_hz             exact, tsc: the rate.
//	                          time_call_overhead_ps   exact: the runtime's
//	                                      cost per call (an entry and an
//	                                      exit), the lower of its
//	                                      measurements at start-up and at
//	                                      exit (time_cal_start_ps,
//	                                      time_cal_exit_ps; each the 10th
//	                                      percentile of many short rounds).
//	                          time_overhead_ns        exact: the total of
//	                                      that cost, subtracted from the
//	                                      self times.
//	                          time_clamped            exact: nodes whose
//	                                      subtraction would have taken their
//	                                      self time below zero (a machine
//	                                      busier than when the cost was
//	                                      measured): they keep their
//	                                      measured time, nothing subtracted.
//	                          time_sampler sampled: "thread" (the
//	                                      runtime's sampler thread took the
//	                                      samples), "stopped REASON" (no
//	                                      samples after: "signal", it took
//	                                      one of the program's; "error";
//	                                      "credentials", it could not take
//	                                      those the program changed to)
//	                                      or "none REASON" (no samples:
//	                                      each thread's time is charged
//	                                      where it ended).
//	                          time_signal sampled, older runtimes (a
//	                                      handler in the program's threads):
//	                                      "SIGURG", "busy" (no samples) or
//	                                      "replaced" (samples stopped).
//	                          time_period_ns, time_samples   sampled.
//	                          time_process_cpu_ns   sampled: the
//	                                      process's CPU time (every thread's,
//	                                      the runtime's included) when the
//	                                      exiting thread's time was last
//	                                      charged, before the leak scan.
//	                        Memory: page_size; exe (the executable's path,
//	                        from /proc/self/exe); heap_peak "bytes blocks
//	                        ns" (the exact high-water mark of heap bytes in
//	                        use, to the byte, the blocks in use then and its
//	                        time since start_ns: when the heap came within
//	                        1/1024 of it); peak_snapshot "bytes
//	                        blocks ns tolerance" (the heap when the P
//	                        records were taken: a snapshot is taken each
//	                        time the heap exceeds the last one by the
//	                        fraction tolerance, and at exit if the heap is
//	                        then at its peak, so bytes >= peak /
//	                        (1 + tolerance)); maps_error;
//	                        runtime_resident (WEAVE_STATS=1 only: the
//	                        largest resident size of the runtime's own
//	                        maps seen at heap-peak snapshots, thread exits
//	                        and the exit, in bytes; docs/memory-maps.md).
//	Y snap ns bytes blocks vm rss
//	                        a snapshot of the process's memory: snap is its
//	                        name (start: when the runtime started; peak:
//	                        at a heap peak snapshot (see P), the last one
//	                        taken when the heap had doubled since the one
//	                        before, or grown and 10 ms passed; exit: when
//	                        the profile was written), ns
//	                        the time since start_ns, bytes and blocks the
//	                        heap in use then, vm and rss the process's
//	                        virtual size and resident set in bytes (from
//	                        /proc/self/statm; -1 when unreadable). Its maps
//	                        follow as V records.
//	V snap text             a line of /proc/self/maps at snapshot snap, raw
//	                        (start-end perms offset dev inode path); package
//	                        vmmap parses and classifies them. When the maps
//	                        cannot be read, M maps_error gives why (e.g.
//	                        "open /proc/self/maps: No such file or
//	                        directory") and there are no V records.
//	L ns bytes blocks allocs frees vm rss
//	                        a point of the heap timeline, in time order: ns
//	                        since start_ns; heap bytes and blocks in use;
//	                        allocations and frees since the previous point;
//	                        vm and rss as in Y (-1 when unreadable, or not
//	                        read: statm is read at most every 5 ms). Points
//	                        are taken when the heap moved by a fraction of
//	                        its peak since the last one and on the sampling
//	                        timer, and decimated (every other one dropped,
//	                        the spacing doubled) to stay within a few
//	                        thousand; the first is at start-up, the last at
//	                        exit.
//	P node bytes blocks     an allocation leaf's heap in use at the peak
//	                        snapshot (see M peak_snapshot); only leaves with
//	                        blocks in use then.
//	K node d_blocks d_bytes i_blocks i_bytes p_blocks p_bytes r_blocks r_bytes
//	                        an allocation leaf's blocks in use at exit by
//	                        valgrind memcheck's leak kind, from the
//	                        runtime's conservative mark from the roots (see
//	                        runtime/leakscan.c): d definitely lost (nothing
//	                        points to it), i indirectly lost (only lost
//	                        blocks do), p possibly lost (only interior
//	                        pointers, or possibly lost blocks), r still
//	                        reachable. Written only when M leak_scan is
//	                        present (value: how long the scan took, in ns),
//	                        for each leaf with blocks in use then; the
//	                        blocks of a leaf's K record add up to its H
//	                        record's allocations minus frees unless other
//	                        threads still ran at exit (they are stopped for
//	                        the scan only).
//	O fn module             the object file (executable or shared library
//	                        path, as the dynamic linker names it) function
//	                        fn was linked into; used by suppressions
//	                        (leak:libname.so).
//	R site address object   where a hidden site's allocator was called from:
//	                        a return address (the first seen) and the
//	                        string id of the object file holding it (as
//	                        the dynamic linker names it), or -1 when the
//	                        runtime did not know the name (the executable,
//	                        or no _dl_find_object): then the maps (V
//	                        records) name it. The runtime keeps one hidden
//	                        site per operation and caller object, so that
//	                        suppressions can name a library that was not
//	                        woven (leak:libname.so).
//	Q index node            the runtime's index of node (an N id), for the
//	                        events of the trace file <profile>.trace (package
//	                        tracepoints), which name nodes by that index; one
//	                        per node that was ever traced. With M
//	                        trace_patterns (the last pattern list, "-" when
//	                        off), trace_events (events written) and
//	                        trace_dropped (events lost: past
//	                        WEAVE_TRACE_MAX_MB, or in a signal handler's
//	                        woven code).
//	X address size node     a block live at exit, for the heap picture
//	                        (KBDB's): its address, size in bytes and
//	                        allocation leaf (an A node). Every live block of
//	                        the process's own allocations has one, in no
//	                        particular order, unless there are more than
//	                        131072: then M picture_skipped gives their
//	                        number (from the heap counters when over twice
//	                        that) and there are no X records. Blocks a fork
//	                        child inherited have none.
//	G gen ns bytes blocks allocs frees thread label
//	                        a mark (WEAVE_MARK in weave_api.h, or weave
//	                        mark PID LABEL), in time order: gen is the
//	                        generation it started (marks count 1, 2, ...;
//	                        the blocks allocated after it carry it, those
//	                        before the first mark 0), ns its time since
//	                        start_ns (the L records' clock), bytes and blocks
//	                        the heap in use then, allocs and frees the
//	                        allocations and frees so far, thread the T id of
//	                        the thread that set it (-1: set from outside);
//	                        label is the rest of the line, escaped as S
//	                        text. Labels may repeat. M marks_dropped: marks
//	                        not kept (past 4096).
//	W gen node born blocks bytes
//	                        blocks live at mark gen (the last G record's)
//	                        that allocation leaf node (an A node) allocated
//	                        in generation born (after mark born, before the
//	                        next; 1 <= born < gen), and their bytes: what
//	                        weave report --between A B sums (born >= A's
//	                        gen, at mark B). Blocks allocated before the
//	                        first mark are never listed. The runtime keeps
//	                        at most 2^20 of these for all marks; a mark past
//	                        that has none, and M marks_live_dropped lists
//	                        the gens of such marks.
//	U thread t0 t1 count label
//	                        when a region (WEAVE_REGION, weave_region_begin)
//	                        ran on a thread: from t0 to t1 (ns since
//	                        start_ns), count consecutive runs of it at one
//	                        nesting level merged into one span; label as in
//	                        G. A region's own node is an F node whose F
//	                        record has the label as its name and file
//	                        "(region)". M region_spans_dropped: spans not
//	                        kept (past 4096).
//	E records               end marker: the number of records (lines after the
//	                        first, comments excluded, E excluded). A file
//	                        without it, or with a wrong count, is truncated.
//
// Room to grow: a reader skips records whose tag it does not know, so new
// record kinds (D, Y, V, L, P, K, O, Q, X, G, W and U were such) can be added
// without a version change; a change to an existing record's meaning needs
// a new version.
//
// Example (a program whose main calls make_widget, which mallocs 40 bytes
// once and never frees them):
//
//	weave profile 1
//	M pid 4242
//	M complete 1
//	S 0 main
//	S 1 widgets.c
//	S 2 make_widget
//	S 3 malloc
//	S 4 struct widget
//	F 0 0 1 70
//	F 1 2 1 20
//	A 0 1 1 22 12 3 4 40
//	T 0 4242
//	N 0 -1 0 R -1
//	N 1 0 0 F 0
//	N 2 1 0 F 1
//	N 3 2 0 A 0
//	C 1 1
//	C 2 1
//	H 3 0 1 0 0 0 40 0 0 0 0 0 0 0 0 0 0
//	B 40 1 0 40 0
//	E 19

// Version is the newest profile format version this package reads and writes.
const Version = 1
