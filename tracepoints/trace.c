//go:build ignore

/* trace.c: tracepoints, on-demand tracing of chosen functions and
   allocation sites (WEAVE_TRACE, weave trace; control.c receives the
   requests).

   Every woven function and allocation site is a tracepoint. A pattern list
   (WEAVE_TRACE at start-up, or a request at run time) selects some; the
   selection is kept as a bit in each context-tree node (rt_node.traced),
   set when a node is created and, when the patterns change, by walking
   every node there is, so a change costs microseconds per thousand nodes.

   Cost when off. Function tracepoints reuse the per-thread timing byte
   that weave.h's __weave_enter already tests: while any function is
   traced (and the time mode is not exact, which sets it anyway), the
   runtime sets it in every thread, so enters go to __weave_enter_timed,
   which sends them here (tp_enter). Off, nothing is added to woven code.
   Allocation tracepoints set a bit of g_tp_attn, the word advice.c
   tests once per allocation and once per free. Node creation tests
   g_tp_on. Run-time requests come through control.c's thread, which
   calls tp_set under g_lock like any other runtime entry.

   Events. 32 bytes each: time (ns since start, the heap timeline's clock),
   the node's runtime index (the profile's Q records map it to an N id),
   kind and depth, address and size. Each thread fills its own 64 KiB
   buffer and writes it, whole, to the trace file with one write(2) when
   full; the exit writer flushes what remains. No lock, no malloc, and no
   unbounded growth: past WEAVE_TRACE_MAX_MB (default 1024) of trace,
   buffers are dropped and counted (M trace_dropped). A signal handler that
   interrupts an event (in_rt set) loses its own event, counted too.

   The trace file is a safe file (safefile.c) created when tracing first
   starts, in the profile's directory; at exit it is named after the
   profile, <profile>.trace. Format (little-endian): blocks of a 16-byte
   header {magic "WVTR", thread number, kernel tid, event count} followed
   by the events; package tracepoints reads it. */

#include "internal.h"

enum { TP_ENTER = 1, TP_EXIT, TP_ALLOC, TP_FREE };
#define TP_BUF_EVENTS 2047u
#define TP_MAGIC 0x52545657u /* "WVTR" */

struct tp_event {
	u64 ns;
	u32 node;
	u32 kind_depth; /* kind << 24 | depth */
	u64 addr, size;
};

struct tp_buf {
	u32 magic, thread;
	int tid;
	u32 n;
	struct tp_event ev[TP_BUF_EVENTS];
};

/* The pattern list ("a,b,c"), written under g_lock by tp_set; read by
   the matchers under g_lock or by node creation (a torn read only
   mis-marks a node until the next apply). */
static char g_tp_pat[4096] RT_LARGE;
static int g_tp_funcs; /* function patterns are active */
static struct safefile g_tp_file;
static int g_tp_fd = -1;             /* the trace file; g_lock to open */
static u64 g_tp_id;                  /* its identity (fd_ident) */
static u64 g_tp_max = 1024ull << 20; /* bytes */
static u64 g_tp_bytes, g_tp_events, g_tp_dropped; /* atomics */
static int g_tp_used;                               /* tracing ever started */

/* ------------------------------------------------------------- patterns */

/* Glob match of [p, pe) against s: '*' any run, '?' one character. */
RT_RARE static int tp_glob(const char *p, const char *pe, const char *s)
{
	const char *star = NULL, *ss = s;
	while (*s) {
		if (p < pe && (*p == '?' || *p == *s)) {
			p++;
			s++;
		} else if (p < pe && *p == '*') {
			star = p++;
			ss = s;
		} else if (star) {
			p = star + 1;
			s = ++ss;
		} else {
			return 0;
		}
	}
	while (p < pe && *p == '*')
		p++;
	return p == pe;
}

/* Whether file matches [p, pe): the whole path, or a tail of it that
   starts after a '/' (so "lstring.c" and "src/l*.c" match "/x/src/lstring.c"). */
RT_RARE static int tp_file(const char *p, const char *pe, const char *file)
{
	const char *s;
	if (!file)
		return 0;
	if (tp_glob(p, pe, file))
		return 1;
	for (s = file; *s; s++)
		if (*s == '/' && tp_glob(p, pe, s + 1))
			return 1;
	return 0;
}

RT_RARE static int tp_prefix(const char *p, const char *pe, const char *pre)
{
	wsize k = strlen(pre);
	return (wsize)(pe - p) >= k && memcmp(p, pre, k) == 0;
}

/* Whether directory [p, pe) holds file: some "/" or start of the path
   followed by the directory and a '/'. */
RT_RARE static int tp_dir(const char *p, const char *pe, const char *file)
{
	wsize k = (wsize)(pe - p);
	const char *s;
	if (!file || !k)
		return 0;
	for (s = file; *s; s++) {
		if ((s == file || s[-1] == '/') && strncmp(s, p, k) == 0 && s[k] == '/')
			return 1;
	}
	return 0;
}

/* Whether allocation site st matches "alloc:" pattern [p, pe): FILE,
   FILE:LINE, or "*". */
RT_RARE static int tp_site_match(const char *p, const char *pe, const struct __weave_site *st)
{
	const char *c = pe;
	unsigned line = 0, mul = 1;
	if (!st->fn || !st->file)
		return pe - p == 1 && *p == '*';
	while (c > p && c[-1] >= '0' && c[-1] <= '9')
		c--;
	if (c < pe && c > p && c[-1] == ':') {
		for (const char *d = pe; d > c; d--, mul *= 10)
			line += (unsigned)(d[-1] - '0') * mul;
		if (st->line != line)
			return 0;
		pe = c - 1;
	}
	return tp_file(p, pe, st->file);
}

/* Whether the function pattern [p, pe) (a name glob, file:, dir:)
   selects fn. */
RT_RARE static int tp_fn_match(const char *p, const char *pe, const struct __weave_fn *fn)
{
	return tp_prefix(p, pe, "file:") ? tp_file(p + 5, pe, fn->file)
	       : tp_prefix(p, pe, "dir:") ? tp_dir(p + 4, pe, fn->file)
	       : !tp_prefix(p, pe, "alloc:") && fn->name && tp_glob(p, pe, fn->name);
}

/* Whether node n (of kind F or A) is selected by the patterns. */
RT_RARE static int tp_match(const struct rt_node *n)
{
	const char *p = g_tp_pat;
	while (*p) {
		const char *pe = p;
		while (*pe && *pe != ',')
			pe++;
		if (n->kind == KIND_A) {
			if (tp_prefix(p, pe, "alloc:") && tp_site_match(p + 6, pe, n->pub.key))
				return 1;
		} else if (n->kind == KIND_F && tp_fn_match(p, pe, n->pub.key)) {
			return 1;
		}
		p = *pe ? pe + 1 : pe;
	}
	return 0;
}

/* Checks a pattern list; returns NULL or what is wrong with it. */
RT_RARE static const char *tp_check(const char *s)
{
	if (strlen(s) >= sizeof g_tp_pat)
		return "pattern list too long";
	for (const char *p = s; *p;) {
		const char *pe = p, *colon;
		while (*pe && *pe != ',')
			pe++;
		if (pe == p)
			return "empty pattern";
		colon = memchr(p, ':', (wsize)(pe - p));
		if (colon && !tp_prefix(p, pe, "alloc:") && !tp_prefix(p, pe, "file:") && !tp_prefix(p, pe, "dir:"))
			return "unknown pattern kind (want NAME, file:F, dir:D, alloc:F[:LINE])";
		if (colon && colon + 1 == pe)
			return "empty pattern after the kind";
		p = *pe ? pe + 1 : pe;
	}
	return NULL;
}

/* Node creation (cct.c), when g_tp_on: marks the new node. */
static void tp_node_new(struct rt_node *n)
{
	if (tp_match(n))
		n->traced = n->seen = 1;
}

/* ------------------------------------------------------------- events */

RT_RARE static void tp_flush(struct rt_thread *T)
{
	struct tp_buf *b = T->tp;
	wsize len;
	int fd = __atomic_load_n(&g_tp_fd, __ATOMIC_ACQUIRE), c;
	if (!b || !b->n)
		return;
	len = offsetof(struct tp_buf, ev) + (wsize)b->n * sizeof b->ev[0];
	/* Never into a file of the program's that took the number of a
	   trace file it closed. */
	c = rt_nocancel();
	if (fd < 0 || fd_ident(fd) != g_tp_id || __atomic_add_fetch(&g_tp_bytes, len, __ATOMIC_RELAXED) > g_tp_max ||
	    write(fd, b, len) != (ssize_t)len)
		__atomic_fetch_add(&g_tp_dropped, b->n, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&g_tp_events, b->n, __ATOMIC_RELAXED);
	rt_cancel_restore(c);
	b->n = 0;
}

/* Appends an event to the calling thread's buffer. in_rt is set. */
RT_RARE static void tp_emit(struct rt_thread *T, u32 kind, u32 node, u32 depth, u64 addr, u64 size)
{
	struct tp_buf *b = T->tp;
	struct tp_event *e;
	if (!b) {
		b = mmap(NULL, sizeof *b, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b == MAP_FAILED) {
			__atomic_fetch_add(&g_tp_dropped, 1, __ATOMIC_RELAXED);
			return;
		}
		rt_own(b, sizeof *b);
		b->magic = TP_MAGIC;
		b->thread = T->num;
		b->tid = T->tid;
		T->tp = b;
	}
	if (b->n == TP_BUF_EVENTS)
		tp_flush(T);
	e = &b->ev[b->n];
	e->ns = vm_now();
	e->node = node;
	e->kind_depth = kind << 24 | (depth & 0xffffff);
	e->addr = addr;
	e->size = size;
	b->n++;
}

/* note_alloc (advice.c) when an allocation tracepoint is selected: the
   allocation's event. in_rt set, by the advice itself. */
RT_RARE static void tp_attention(struct rt_local *l, const struct rt_node *a, void *p, u64 n)
{
	if (l->thr && a->traced)
		tp_emit(l->thr, TP_ALLOC, a->self, __weave_tls.depth, (u64)(uintptr_t)p, n);
}

RT_RARE static void tp_free(struct rt_thread *T, const struct rt_node *a, uintptr_t p, u64 n)
{
	if (T && a->traced)
		tp_emit(T, TP_FREE, a->self, __weave_tls.depth, (u64)p, n);
}

/* A traced function's enter or exit, from woven code. Skipped (and
   counted) inside the runtime: a signal handler's woven code. */
RT_RARE static void tp_fn_event(u32 kind, struct __weave_node *c, unsigned depth)
{
	struct rt_local *l = &rt_local;
	if (l->in_rt || !l->thr) {
		__atomic_fetch_add(&g_tp_dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	rt_enter(l);
	tp_emit(l->thr, kind, ((struct rt_node *)(void *)c)->self, depth, 0, 0);
	rt_exit(l);
}

/* Grows the thread's stack of timed frames for a traced frame deeper than
   it holds (as exact mode's push does): a traced recursion is traced at
   every level the thread's reservation holds, not only its first 4,096. */
RT_RARE static int tp_grow(struct __weave_thread *t)
{
	struct rt_local *l = &rt_local;
	int ok, e = errno;
	if (l->in_rt || !l->thr)
		return 0;
	rt_enter(l);
	ok = stack_grow(l->thr, t);
	rt_exit(l);
	errno = e;
	return ok;
}

/* __weave_enter_timed outside exact mode: function tracing is on. A
   traced function's frame goes on the timed frames' stack and comes back
   timed with TP_TRACED, so that its pop comes to tp_leave; the others
   move cur as the fast path does. */
RT_RARE static struct __weave_frame tp_enter(const struct __weave_fn *fn)
{
	struct __weave_thread *t = &__weave_tls;
	struct __weave_node *p = t->cur, *c = p->cache;
	unsigned d = t->depth;
	struct __weave_frame f;
	if (c->key != fn) {
		f = __weave_enter_slow(fn);
		if (f.v & __WEAVE_TAGS)
			return f;
		c = t->cur;
	} else {
		c->calls++;
		fence();
		__atomic_store_n(&t->cur, c, __ATOMIC_RELAXED);
		f.v = (__weave_size_t)p;
	}
	if (((struct rt_node *)(void *)c)->traced && (d + 1 < t->cap || tp_grow(t))) {
		t->depth = d + 1;
		fence();
		t->stack[d + 1].node = c;
		t->stack[d + 1].parent = p;
		tp_fn_event(TP_ENTER, c, d + 1);
		f.v = (__weave_size_t)d << __WEAVE_DEPTH_SHIFT | __WEAVE_TIMED | TP_TRACED;
	}
	return f;
}

/* The pop of a frame tp_enter traced. */
RT_RARE static void tp_leave(__weave_size_t v)
{
	struct __weave_thread *t = &__weave_tls;
	unsigned d = (unsigned)(v >> __WEAVE_DEPTH_SHIFT);
	if (d + 1 >= t->cap)
		return;
	tp_fn_event(TP_EXIT, t->stack[d + 1].node, d + 1);
	t->depth = d;
	fence();
	__atomic_store_n(&t->cur, t->stack[d + 1].parent, __ATOMIC_RELAXED);
}

/* Exact mode's timed push and pop call these for traced nodes. in_rt:
   called from __weave_enter_slow, inside the runtime on its own account. */
RT_RARE static void tp_timed_enter(struct __weave_node *c, unsigned depth, int in_rt)
{
	struct rt_local *l = &rt_local;
	if (in_rt && l->thr)
		tp_emit(l->thr, TP_ENTER, ((struct rt_node *)(void *)c)->self, depth, 0, 0);
	else
		tp_fn_event(TP_ENTER, c, depth);
}

RT_RARE static void tp_timed_exit(__weave_size_t v)
{
	struct __weave_thread *t = &__weave_tls;
	unsigned d = (unsigned)(v >> __WEAVE_DEPTH_SHIFT);
	if (d + 1 < t->cap)
		tp_fn_event(TP_EXIT, t->stack[d + 1].node, d + 1);
}

/* ------------------------------------------------------------- applying */

/* Sets the timing byte of every live thread for function tracing (not in
   exact mode, where it is always set). g_lock held. */
RT_RARE static void tp_timing_bytes(void)
{
	if (g_time_mode == TIME_EXACT)
		return;
	for (struct rt_thread *T = g_threads; T; T = T->next)
		if (T->tls) {
			__atomic_store_n(&T->tls->timing, (unsigned char)(g_tp_funcs ? 2 : 0), __ATOMIC_RELAXED);
			/* weave.h's lim: 0 now; set back by the owner when it is off
			   (internal.h, lim_update) */
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			if (g_tp_funcs)
				__atomic_store_n(&T->tls->lim, 0, __ATOMIC_RELAXED);
		}
}

/* thread set-up (timing.c): a new thread traces too. */
static void tp_thread_setup(struct __weave_thread *t)
{
	if (g_tp_funcs && g_time_mode != TIME_EXACT)
		t->timing = 2;
}

/* The trace file, opened the first time tracing starts. g_lock held. */
RT_RARE static void tp_open(void)
{
	struct sbuf p = {.n = 0};
	if (g_tp_fd >= 0 || out_stream())
		return; /* open, or a profile into /dev/null or a pipe: nowhere to go */
	out_beside(&p); /* renamed beside the profile at exit (tp_finish) */
	if (safefile_open(&g_tp_file, p.s) == 0) {
		/* kept open: numbered out of the program's way (fd_high) */
		g_tp_file.dir = fd_high(g_tp_file.dir);
		g_tp_file.fd = fd_high(g_tp_file.fd);
		g_tp_id = fd_ident(g_tp_file.fd);
		__atomic_store_n(&g_tp_fd, g_tp_file.fd, __ATOMIC_RELEASE);
	}
}

/* Replaces the pattern list with s ("" turns tracing off) and applies it
   to every node. g_lock held. */
RT_RARE static void tp_set(const char *s)
{
	int funcs = 0, allocs = 0;
	wsize k = strlen(s);
	memcpy(g_tp_pat, s, k + 1);
	for (const char *p = s; *p;) {
		const char *pe = p;
		while (*pe && *pe != ',')
			pe++;
		if (tp_prefix(p, pe, "alloc:"))
			allocs = 1;
		else
			funcs = 1;
		p = *pe ? pe + 1 : pe;
	}
	if (funcs || allocs) {
		tp_open();
		g_tp_used = 1;
	}
	for (struct rt_thread *T = g_threads; T; T = T->next) {
		u32 n = __atomic_load_n(&T->nnodes, __ATOMIC_ACQUIRE);
		for (u32 i = T->first; i && n; i = node_at(i)->next, n--) {
			struct rt_node *x = node_at(i);
			int on = (funcs || allocs) && tp_match(x);
			x->traced = (u32)on;
			if (on)
				x->seen = 1;
		}
	}
	g_tp_funcs = funcs;
	if (allocs)
		__atomic_fetch_or(&g_tp_attn, TP_ATTN_ALLOCS, __ATOMIC_RELEASE);
	else
		__atomic_fetch_and(&g_tp_attn, ~TP_ATTN_ALLOCS, __ATOMIC_RELEASE);
	__atomic_store_n(&g_tp_on, funcs || allocs, __ATOMIC_RELEASE);
	tp_timing_bytes();
}

/* One line on stderr: "==weave <pid>== control: " a b (rt_warn). */
RT_RARE static void tp_say(const char *a, const char *b)
{
	struct sbuf m = {.n = 0};
	sb_str(&m, "control: ");
	sb_str(&m, a);
	if (b)
		sb_str(&m, b);
	sb_str(&m, "\n");
	rt_warn(m.s);
}

/* Start-up (rt_global_init): WEAVE_TRACE and WEAVE_TRACE_MAX_MB. Not in
   a secure process. */
static void tp_init(void)
{
	const char *s;
	if (g_secure)
		return;
	g_tp_max = parse_u64(rt_env("WEAVE_TRACE_MAX_MB"), 1024) << 20;
	s = rt_env("WEAVE_TRACE");
	if (s && *s) {
		const char *bad = tp_check(s);
		if (bad) {
			tp_say("WEAVE_TRACE ignored: ", bad);
		} else {
			pthread_mutex_lock(&g_lock);
			tp_set(s);
			pthread_mutex_unlock(&g_lock);
			__atomic_store_n(&g_tp_unframed, 1, __ATOMIC_RELAXED);
		}
	}
}

/* ------------------------------------------------------------- output */

/* The profile's trace records: M trace_*, and Q index id for every node
   that was ever traced. Flushes every thread's buffer first (a thread
   still running may add to its own meanwhile: those events wait for the
   next flush). g_lock held. */
RT_RARE static void tp_write(struct out *o, const u32 *ids)
{
	if (!g_tp_used)
		return;
	for (struct rt_thread *T = g_threads; T; T = T->next)
		tp_flush(T);
	out_meta(o, "trace_patterns", g_tp_pat[0] ? g_tp_pat : "-", 0);
	out_meta(o, "trace_events", NULL, __atomic_load_n(&g_tp_events, __ATOMIC_RELAXED));
	out_meta(o, "trace_dropped", NULL, __atomic_load_n(&g_tp_dropped, __ATOMIC_RELAXED));
	for (struct rt_thread *T = g_threads; T; T = T->next) {
		u32 n = T->snap;
		for (u32 i = T->first; i && n; i = node_at(i)->next, n--) {
			if (!node_at(i)->seen || ids[i] == NO_ID)
				continue;
			out_ch(o, 'Q');
			out_field(o, i);
			out_field(o, ids[i]);
			out_ch(o, '\n');
			o->records++;
		}
	}
}

/* rt_fork_child (g_lock held, one thread): the trace file and the events
   not yet written are the parent's. The child closes its copies of the
   descriptors (the parent names the file after its profile) and, while
   tracing, starts a trace file of its own, beside its own profile. */
RT_RARE static void tp_fork_child(void)
{
	struct rt_thread *me = rt_local.thr;
	if (me && me->tp) {
		me->tp->n = 0;
		me->tp->thread = me->num;
		me->tp->tid = me->tid;
	}
	__atomic_store_n(&g_tp_bytes, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&g_tp_events, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&g_tp_dropped, 0, __ATOMIC_RELAXED);
	if (g_tp_fd < 0)
		return;
	if (fd_ident(g_tp_fd) == g_tp_id) { /* not closed by the program */
		close(g_tp_file.fd);
		close(g_tp_file.dir);
	}
	g_tp_fd = -1;
	if (__atomic_load_n(&g_tp_on, __ATOMIC_RELAXED))
		tp_open();
}

/* After the final profile went to path: names the trace file after it.
   Without a profile (path NULL: not written, or none wanted) the trace,
   whose nodes only the profile names, is removed. */
RT_RARE static __attribute__((noinline)) void tp_finish(const char *path)
{
	struct sbuf p = {.n = 0};
	if (g_tp_fd < 0 || fd_ident(g_tp_fd) != g_tp_id)
		return; /* not opened, or closed by the program */
	__atomic_store_n(&g_tp_fd, -1, __ATOMIC_RELEASE);
	if (!path) {
		safefile_abort(&g_tp_file);
		return;
	}
	sb_str(&p, path);
	sb_str(&p, ".trace");
	/* said with the summary, on stderr, or not at all */
	if (safefile_commit(&g_tp_file, &p, 1) == 0 && summary_wanted(0) && !g_cfg_log_set) {
		struct sbuf m = {.n = 0};
		sb_str(&m, "trace written to ");
		sb_str(&m, p.s);
		sb_str(&m, "\n");
		rt_warn(m.s);
	}
}
