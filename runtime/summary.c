//go:build ignore

/* summary.c: the heap totals and the largest leaks, computed once (by the
   profile writer as it reads the heap counters, or by totals_compute when
   no profile is written), and the heap summary: on stderr when there is
   something to report, or in a WEAVE_LOG file. */

#include "internal.h"

/* Starts t: snapshots the threads' nodes (threads_snap) and takes room
   for the g_cfg_leaks largest leaks. g_lock held. */
RT_RARE static void totals_start(struct totals *t, struct tmpmem *tm)
{
	memset(t, 0, sizeof *t);
	t->nodes = threads_snap();
	if (g_cfg_leaks)
		t->leaks = tmp_alloc(tm, g_cfg_leaks * sizeof *t->leaks);
}

/* Adds the heap counters v (heap_read) of allocation leaf node to t,
   keeping the g_cfg_leaks largest leaks, by bytes then blocks, in
   t->leaks (sorted). */
RT_RARE static void totals_add(struct totals *t, u32 node, const u64 v[16])
{
	u64 a = 0, b = 0, f = 0, g = 0;
	struct leak L;
	int c;
	u32 j;
	for (c = 0; c < 4; c++) {
		a += v[c];
		b += v[4 + c];
		f += v[8 + c];
		g += v[12 + c];
	}
	t->allocs += a;
	t->bytes += b;
	t->frees += f;
	t->fbytes += g;
	if (a <= f)
		return;
	L.node = node;
	L.bytes = b > g ? b - g : 0;
	L.blocks = a - f;
	t->leak_nodes++;
	if (!t->leaks)
		return;
	for (j = t->nleaks; j > 0; j--) {
		struct leak *p = &t->leaks[j - 1];
		if (p->bytes > L.bytes || (p->bytes == L.bytes && p->blocks >= L.blocks))
			break;
		if (j < g_cfg_leaks)
			t->leaks[j] = *p;
	}
	if (j < g_cfg_leaks) {
		t->leaks[j] = L;
		if (t->nleaks < g_cfg_leaks)
			t->nleaks++;
	}
}

/* What in use at exit follows from the sums. */
RT_RARE static void totals_end(struct totals *t)
{
	t->live_blocks = t->allocs > t->frees ? t->allocs - t->frees : 0;
	t->live_bytes = t->bytes > t->fbytes ? t->bytes - t->fbytes : 0;
}

/* The totals without writing a profile (none wanted, or writing it
   failed): t as totals_start left it, sums reset. g_lock held. */
RT_RARE static void totals_compute(struct totals *t)
{
	struct rt_thread *T;
	struct rt_node *n;
	u32 i, k;
	u64 v[16];
	t->allocs = t->frees = t->bytes = t->fbytes = t->leak_nodes = 0;
	t->nleaks = 0;
	for (T = g_threads; T; T = T->next) {
		EACH_NODE(T, i, n, k) {
			if (n->kind != KIND_A)
				continue;
			heap_read(n->u.heap, v);
			totals_add(t, i, v);
		}
	}
	totals_end(t);
}

RT_RARE static const char *errdesc(int e)
{
	const char *s = strerrordesc_np(e);
	return s ? s : "unknown error";
}

/* Appends where leaf a allocated: "file:line fn <- caller ..." (at most 8
   functions), "(hidden op) fn ..." for a library's allocation. */
RT_RARE static void out_chain(struct out *o, struct rt_node *a)
{
	const struct __weave_site *s = a->pub.key;
	struct rt_node *n;
	int depth = 0;
	if (is_hidden_site(s)) {
		const char *m = hs_module(s), *base = strrchr(m, '/');
		out_str(o, is_linker_site(s) ? "(dynamic linker's " : "(hidden ");
		out_str(o, op_name(s->op));
		if (*m) {
			out_str(o, " in ");
			out_str(o, base ? base + 1 : m);
		}
		out_ch(o, ')');
	} else {
		out_str(o, s->file ? s->file : "?");
		out_ch(o, ':');
		out_u64(o, s->line);
	}
	for (n = node_at(node_parent(a)); n->kind == KIND_F; n = node_at(node_parent(n))) {
		const struct __weave_fn *fn = n->pub.key;
		if (depth == 8) {
			out_str(o, " <- ...");
			break;
		}
		out_str(o, depth++ ? " <- " : " ");
		out_str(o, fn->name ? fn->name : "?");
	}
	if (!depth && s->fn) {
		/* Charged to the thread's root: no woven frame. */
		out_ch(o, ' ');
		out_str(o, s->fn->name ? s->fn->name : "?");
	} else if (!depth) {
		out_str(o, " (unwoven)"); /* a hidden one, outside woven code */
	}
}

/* No block in use at exit. Where the process's free is weave's, no leaks
   are possible, as valgrind says; where it is not (a program's own
   allocator, as bash's lib/malloc; a static link; valgrind's), weave saw
   only the allocations woven code made through it, and frees may have
   bypassed it: what it saw, and whose free it is. */
RT_RARE static void summary_all_freed(struct out *o, const struct totals *t, const char *P)
{
	void (*volatile f)(void *) = free;
	const char *who = malloc_is_valgrinds() ? "valgrind" : rt_object_name((const void *)f);
	out_str(o, P);
	if (frees_seen()) {
		out_str(o, "All heap blocks were freed -- no leaks are possible\n");
		return;
	}
	if (t->allocs) {
		out_str(o, "the ");
		out_commas(o, t->allocs);
		out_str(o, t->allocs == 1 ? " allocation weave saw was freed" : " allocations weave saw were all freed");
	} else {
		out_str(o, "weave saw no allocations");
	}
	out_str(o, ", but the process's malloc and free are not weave's");
	if (*who) {
		out_str(o, " (free is ");
		out_str(o, who);
		out_str(o, "'s)");
	}
	out_str(o, ": what code that was not woven allocated and freed is not counted, so leaks are not ruled out\n");
}

/* The summary's top leaks, without a leak scan: t->leaks (blocks not
   freed) with their call chains. */
RT_RARE static void summary_leaks(struct out *o, struct totals *t, const char *P)
{
	u32 i;
	out_str(o, P);
	out_str(o, frees_seen() ? "top leaks:\n"
				: "not seen freed (frees by code that was not woven are not seen: the process's free is not "
				  "weave's, as in a static link or a woven library in a program that was not woven):\n");
	for (i = 0; i < t->nleaks; i++) {
		out_str(o, P);
		out_str(o, "  ");
		out_commas(o, t->leaks[i].bytes);
		out_str(o, " bytes in ");
		out_commas(o, t->leaks[i].blocks);
		out_str(o, " blocks at ");
		out_chain(o, node_at(t->leaks[i].node));
		out_ch(o, '\n');
	}
	if (t->leak_nodes > t->nleaks) {
		out_str(o, P);
		out_str(o, "  ... and ");
		out_commas(o, t->leak_nodes - t->nleaks);
		out_str(o, " more\n");
	}
}

/* Allocations the C library refused under a memory limit: the runtime's
   own maps (its side table, the tree's nodes: docs/runtime.md) count
   against RLIMIT_AS and RLIMIT_DATA too, so fewer of the program's fit
   than in the plain build. */
RT_RARE static void summary_limits(struct out *o, const char *P)
{
	struct rlimit as, data;
	int e = errno;
	if (!g_refused || getrlimit(RLIMIT_AS, &as) || getrlimit(RLIMIT_DATA, &data) ||
	    (as.rlim_cur == RLIM_INFINITY && data.rlim_cur == RLIM_INFINITY)) {
		errno = e;
		return;
	}
	errno = e;
	out_str(o, P);
	out_str(o, "  refused: ");
	out_commas(o, g_refused);
	out_str(o, " allocs returned NULL, under ");
	out_str(o, as.rlim_cur != RLIM_INFINITY ? "RLIMIT_AS" : "RLIMIT_DATA");
	out_str(o, " (ulimit), which the runtime's own memory counts against too\n");
}

/* The summary's WEAVE_STATS line: the runtime's own memory. */
RT_RARE static void summary_stats(struct out *o, struct totals *t, const char *P)
{
	u64 tab = 0, live = 0;
	side_usage(&tab, &live);
	out_str(o, P);
	out_str(o, "runtime: ");
	out_commas(o, t->nodes);
	out_str(o, " nodes (");
	out_u64(o, sizeof(struct rt_node));
	out_str(o, " bytes each), side table ");
	out_commas(o, tab);
	out_str(o, " bytes for ");
	out_commas(o, live);
	out_str(o, " live blocks");
	if (live) {
		u64 x = tab * 100 / live;
		out_str(o, " (");
		out_u64(o, x / 100);
		out_ch(o, '.');
		out_ch(o, (char)('0' + x / 10 % 10));
		out_ch(o, (char)('0' + x % 10));
		out_str(o, " bytes per block)");
	}
	out_str(o, ", ");
	out_u64(o, g_nthreads);
	out_str(o, " threads, its maps at most ");
	own_note();
	out_commas(o, g_own_peak);
	out_str(o, " bytes resident");
	if (g_own_unlisted) { /* made while the list was full: not counted */
		out_str(o, " (");
		out_commas(o, g_own_unlisted);
		out_str(o, " bytes of maps unlisted)");
	}
	out_ch(o, '\n');
}

/* The summary's lines, each starting with P ("==weave <pid>== "). */
RT_RARE static void summary_write(struct out *o, struct totals *t, const char *path, int perr, const char *P)
{
	out_str(o, P);
	/* A former image's: the next program's summary follows. */
	out_str(o, strcmp(g_end, "exec") == 0     ? "HEAP SUMMARY (before exec):\n"
		   : strcmp(g_end, "daemon") == 0 ? "HEAP SUMMARY (before daemon):\n"
						  : "HEAP SUMMARY:\n");
	if (!g_complete) {
		out_str(o, P);
		out_str(o, "    (incomplete: written when the process got signal ");
		out_u64(o, (u64)g_end_sig);
		out_str(o, ")\n");
	}
	out_str(o, P);
	out_str(o, "    in use at exit: ");
	if (t->live_blocks && !frees_seen())
		out_str(o, "at most ");
	out_commas(o, t->live_bytes);
	out_str(o, " bytes in ");
	out_commas(o, t->live_blocks);
	out_str(o, " blocks\n");
	out_str(o, P);
	out_str(o, "  total heap usage: ");
	out_commas(o, t->allocs);
	out_str(o, " allocs, ");
	out_commas(o, t->frees);
	out_str(o, " frees, ");
	out_commas(o, t->bytes);
	out_str(o, " bytes allocated\n");
	if (g_unrec[0]) {
		out_str(o, P);
		out_str(o, "  not recorded: ");
		out_commas(o, g_unrec[0]);
		out_str(o, " allocs, ");
		out_commas(o, g_unrec[1]);
		out_str(o, " bytes (the runtime ran out of memory for its tables; not in these totals)\n");
	}
	summary_limits(o, P);
	out_str(o, P);
	out_ch(o, '\n');
	if (!t->live_blocks) {
		summary_all_freed(o, t, P);
	} else if (ls_ok()) {
		ls_summary(o, P);
	} else {
		if (ls_failure()) {
			out_str(o, P);
			out_str(o, strcmp(ls_failure(), "out of memory") == 0 ? "no leak scan: it ran out of memory" : "no leak scan: /proc/self/maps could not be read");
			out_str(o, " (the blocks in use are not classified)\n");
		}
		if (t->nleaks)
			summary_leaks(o, t, P);
	}
	if (g_cfg_stats)
		summary_stats(o, t, P);
	if (path) {
		out_str(o, P);
		out_str(o, perr ? "cannot write profile " : "profile written to ");
		out_str(o, path);
		if (perr) {
			out_str(o, ": ");
			out_str(o, errdesc(perr));
		} else if (!out_stream()) { /* a file to read again, not /dev/null or a pipe */
			out_str(o, " (weave report ");
			out_str(o, path);
			out_ch(o, ')');
		}
		out_ch(o, '\n');
	}
}

/* Whether the summary is printed at all: always (WEAVE_SUMMARY=1), into
   WEAVE_LOG, else when stderr is a terminal or there is something to
   report (lost blocks, a profile not written, perr): never on a test
   suite's compared stderr with nothing to report. */
RT_RARE static int summary_wanted(int perr)
{
	return g_cfg_summary > 0 ||
	       (g_cfg_summary < 0 && (g_cfg_log_set || perr || ls_lost() || isatty(2)));
}

/* Prints the summary where WEAVE_SUMMARY and WEAVE_LOG say (see init.c):
   into a new WEAVE_LOG file, created as profiles are, else on stderr
   when it is a terminal or there is something to report (lost blocks,
   a profile not written): nothing on a test suite's compared stderr. */
RT_RARE static __attribute__((noinline)) void summary(struct totals *t, const char *path, int perr)
{
	static char buf[8192] RT_LARGE;
	struct out o = {.fd = 2, .buf = buf, .cap = sizeof buf};
	struct sbuf P = {.n = 0}, log = {.n = 0};
	struct safefile f;
	int lerr = 0, dev = -1, to_log = 0; /* to_log: o.fd is the WEAVE_LOG file's */

	if (!summary_wanted(perr))
		return;
	sb_str(&P, "==weave ");
	sb_u64(&P, (u64)getpid());
	sb_str(&P, "== ");
	if (g_cfg_log_set) {
		sb_expand(&log, g_cfg_log);
		if ((dev = device_out(log.s)) == -2) /* /dev/stderr, a terminal: written into */
			lerr = errno;
		else if (dev < 0 && safefile_open(&f, log.s) == 0)
			o.fd = f.fd, to_log = 1; /* maybe 2: the program closed its stderr */
		else if (dev < 0)
			lerr = errno;
	}
	if (dev >= 0) {
		o.fd = dev;
		summary_write(&o, t, path, perr, P.s);
		out_flush(&o);
		close(dev);
		lerr = o.err;
	} else if (!to_log && stderr_fd() < 0) {
		return; /* the program closed its stderr: nowhere to say it */
	} else {
		summary_write(&o, t, path, perr, P.s);
		out_flush(&o);
	}
	if (to_log && (o.err || safefile_commit(&f, &log, 0) != 0)) {
		if (o.err)
			safefile_abort(&f);
		lerr = o.err ? o.err : errno;
	}
	if (lerr && stderr_fd() >= 0) {
		o = (struct out){.fd = 2, .buf = buf, .cap = sizeof buf};
		out_str(&o, P.s);
		out_str(&o, "cannot write WEAVE_LOG file ");
		out_str(&o, log.s);
		out_str(&o, ": ");
		out_str(&o, errdesc(lerr));
		out_ch(&o, '\n');
		out_flush(&o);
	}
}
