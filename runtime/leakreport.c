//go:build ignore

/* leakreport.c: the leak scan's results: suppressions, leaks merged by
   chain, the profile's K and O records, the summary and the exit status. */

#include "internal.h"

/* --------------------------------------------------------- suppressions */

/* WEAVE_SUPPRESSIONS: LeakSanitizer's format. One "leak:PATTERN" a line
   ('#' comments, other types ignored); a pattern matches a frame when it
   matches its function's name, its file or the object it was linked into,
   as LeakSanitizer's TemplateMatch does: a substring, '*' any run of
   characters, '^' at the start and '$' at the end anchor it. The chain
   form "outer>inner" wants frames calling each other in that order, each
   the direct caller of the next. A leak whose chain matches a pattern is
   suppressed: not listed, counted apart, no exit status. */

static char g_cfg_supp[4096] RT_LARGE;


/* Whether a leak scan may run at exit (ls_leak_scan). Not under valgrind:
   memcheck's leak check is the one to read, and the scan would read its
   memory (its records of the blocks make them all reachable), leave the
   blocks' addresses in ours for memcheck's own check to find, and read
   stacks and unwritten blocks, which it reports as errors. noinline:
   rt_thread_exit calls it, and its code is the same shipped (forSize). */
static __attribute__((noinline)) int ls_may_run(void) { return g_cfg_leak_scan && hidden_on() && !rt_on_valgrind(); }

static void ls_config(void)
{
	const char *s = rt_env("WEAVE_LEAK_SCAN");
	g_cfg_leak_scan = !(s && strcmp(s, "0") == 0);
	/* Under a valgrind tool's malloc no scan runs (leakscan.c) and its
	   blocks have no glibc chunk header: chunk_mapped's read of one was
	   memcheck's "Invalid read" at each large free (jansson's tests,
	   linked -rdynamic; any run with nouserintercepts). Callgrind's runs
	   keep the scrub, so that their counts are a native run's. */
	g_scrub = g_cfg_leak_scan && !(rt_on_valgrind() && vg_replaces_malloc());
	if (g_scrub)
		held_config();
	s = rt_env("WEAVE_LEAK_EXITCODE");
	if (s && *s) {
		/* a misset CI gate says so and still fails, never passes silently */
		u64 v = parse_u64(s, 256);
		if (v > 255) {
			rt_warn("WEAVE_LEAK_EXITCODE: want a number from 0 to 255; using 23\n");
			v = 23;
		}
		g_cfg_leak_exitcode = (int)v;
	}
	s = rt_env("WEAVE_LEAK_THREADS");
	if (s && *s) {
		u64 v = parse_u64(s, ~0ull);
		if (v > 0xffffffffull) {
			rt_warn("WEAVE_LEAK_THREADS: want a number of threads; choosing them by the idle CPUs\n");
			v = 0;
		}
		g_cfg_leak_threads = (u32)v;
	}
	s = rt_env("WEAVE_SUPPRESSIONS");
	if (s && strlen(s) < sizeof g_cfg_supp)
		memcpy(g_cfg_supp, s, strlen(s) + 1);
}

/* Whether str[0:n) matches tmpl[0:m) (TemplateMatch, see above). */
RT_RARE static int ls_match(const char *t, wsize m, const char *str)
{
	const char *end = t + m;
	int start = 0, star = 0;
	if (!str || !*str)
		return 0;
	if (t < end && *t == '^')
		start = 1, t++;
	while (t < end) {
		const char *q, *hit = NULL;
		wsize k, sl;
		if (*t == '*') {
			t++, start = 0, star = 1;
			continue;
		}
		if (*t == '$')
			return !*str || star;
		if (!*str)
			return 0;
		for (q = t; q < end && *q != '*' && *q != '$'; q++)
			;
		k = (wsize)(q - t);
		for (sl = 0; str[sl]; sl++)
			if (!hit && !strncmp(str + sl, t, k) && strlen(str + sl) >= k)
				hit = str + sl;
		if (!hit || (start && hit != str))
			return 0;
		str = hit + k;
		t = q;
		start = star = 0;
	}
	return 1;
}

struct ls_supp {
	char *text; /* the file, NUL-terminated */
	u64 len;
	int loaded;
};
static struct ls_supp g_ls_supp;

RT_RARE static void ls_supp_load(void)
{
	struct tmpmem tm = {.k = 0};
	int fd;
	ssize_t k;
	u64 cap = 1 << 16;
	if (g_ls_supp.loaded || !g_cfg_supp[0])
		return;
	g_ls_supp.loaded = 1;
	fd = open(g_cfg_supp, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !(g_ls_supp.text = tmp_alloc(&tm, cap + 1))) {
		if (fd >= 0)
			close(fd);
		rt_warn("cannot read WEAVE_SUPPRESSIONS file\n");
		return;
	}
	while (g_ls_supp.len < cap && (k = read(fd, g_ls_supp.text + g_ls_supp.len, cap - g_ls_supp.len)) != 0) {
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			break;
		g_ls_supp.len += (u64)k;
	}
	close(fd);
	g_ls_supp.text[g_ls_supp.len] = 0;
}

/* The object file fn was linked into (as dladdr names it), or "". */
RT_RARE static const char *ls_module(const void *fn)
{
	return fn ? rt_object_name(fn) : "";
}

RT_RARE static int ls_frame_match(const char *t, wsize m, const struct __weave_fn *fn)
{
	return ls_match(t, m, fn->name) || ls_match(t, m, fn->file) || ls_match(t, m, ls_module(fn));
}

/* Whether the pattern elements e[0..k) (outer first) match the frames
   from f up, the innermost element f. */
RT_RARE static int ls_chain_at(const char *const *e, const wsize *el, int k, struct rt_node *f)
{
	int j = k - 1;
	for (; j >= 0 && f->kind == KIND_F && ls_frame_match(e[j], el[j], f->pub.key); j--)
		f = node_at(node_parent(f));
	return j < 0;
}

/* Whether the pattern elements e[0..k) (outer first) match consecutive
   frames from n up (n the innermost). */
RT_RARE static int ls_chain_match(const char *const *e, const wsize *el, int k, struct rt_node *n)
{
	for (; n->kind == KIND_F; n = node_at(node_parent(n)))
		if (ls_chain_at(e, el, k, n))
			return 1;
	return 0;
}

/* Whether leaf a's chain is suppressed. */
RT_RARE static int ls_suppressed(struct rt_node *a)
{
	const char *mod = hs_module(a->pub.key); /* a hidden leaf's caller object: as
						    LeakSanitizer matches any frame's module */
	const char *p, *end;
	if (!g_ls_supp.text)
		return 0;
	end = g_ls_supp.text + g_ls_supp.len;
	for (p = g_ls_supp.text; p < end;) {
		const char *nl = memchr(p, '\n', (wsize)(end - p)), *q, *e[16];
		wsize el[16];
		int k = 0;
		if (!nl)
			nl = end;
		while (p < nl && (*p == ' ' || *p == '\t'))
			p++;
		q = nl;
		while (q > p && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\r'))
			q--;
		if (q - p > 5 && memcmp(p, "leak:", 5) == 0) {
			for (p += 5; p < q && k < 16; k++) {
				const char *gt = memchr(p, '>', (wsize)(q - p));
				if (!gt)
					gt = q;
				e[k] = p;
				el[k] = (wsize)(gt - p);
				p = gt + 1;
			}
			if (k && ls_chain_match(e, el, k, node_at(node_parent(a))))
				return 1;
			/* The caller's object, then its woven callers. */
			if (k && *mod && ls_match(e[k - 1], el[k - 1], mod) &&
			    (k == 1 || ls_chain_at(e, el, k - 1, node_at(node_parent(a)))))
				return 1;
		}
		p = nl + 1;
	}
	return 0;
}

/* -------------------------------------------------------------- groups */

/* The leaks merged by chain (site and functions up to the root) across
   threads, one group per chain and kind. */
struct ls_group {
	u64 hash;
	u32 node; /* a leaf with this chain, 0 for an empty slot */
	int kind;
	u64 blocks, bytes;
};

static struct {
	struct ls_group *g;
	u64 cap;
	u64 kept_blocks[4], kept_bytes[4]; /* by kind, suppressed ones apart */
	u64 supp_blocks, supp_bytes;
} g_lg;

RT_RARE static u64 ls_chain_hash(struct rt_node *a)
{
	u64 h = mix64((u64)(uintptr_t)a->pub.key);
	struct rt_node *n;
	for (n = node_at(node_parent(a)); n->kind == KIND_F; n = node_at(node_parent(n)))
		h = mix64(h ^ (u64)(uintptr_t)n->pub.key);
	return h;
}

RT_RARE static int ls_same_chain(struct rt_node *a, struct rt_node *b)
{
	if (a->pub.key != b->pub.key)
		return 0;
	for (a = node_at(node_parent(a)), b = node_at(node_parent(b)); a->kind == KIND_F && b->kind == KIND_F;
	     a = node_at(node_parent(a)), b = node_at(node_parent(b)))
		if (a->pub.key != b->pub.key)
			return 0;
	return a->kind == b->kind;
}

RT_RARE static void ls_group_add(struct rt_node *a, u64 h, int kind, u64 blocks, u64 bytes)
{
	u64 i = (h ^ (u64)kind) & (g_lg.cap - 1);
	for (; g_lg.g[i].node; i = (i + 1) & (g_lg.cap - 1)) {
		struct ls_group *g = &g_lg.g[i];
		if (g->hash == h && g->kind == kind && ls_same_chain(node_at(g->node), a))
			break;
	}
	if (!g_lg.g[i].node) {
		g_lg.g[i].node = a->self;
		g_lg.g[i].hash = h;
		g_lg.g[i].kind = kind;
	}
	g_lg.g[i].blocks += blocks;
	g_lg.g[i].bytes += bytes;
}

/* Groups the tallies by chain and applies the suppressions. */
RT_RARE static void ls_group_all(void)
{
	struct rt_thread *T;
	u64 n = 0, cap = 64, i;
	int k;
	for (i = 0; i < g_ls.ntally_cap; i++)
		n += g_ls.tally[i].node != 0;
	while (cap < 4 * n + 64)
		cap *= 2;
	if (!(g_lg.g = rt_map(cap * sizeof *g_lg.g)))
		return;
	g_lg.cap = cap;
	ls_supp_load();
	for (T = g_threads; T; T = T->next) {
		u32 nn = __atomic_load_n(&T->nnodes, __ATOMIC_ACQUIRE), j, idx;
		for (idx = T->first, j = 0; j < nn; j++) {
			struct rt_node *a = node_at(idx);
			const struct ls_tally *t = a->kind == KIND_A ? ls_tally_find(idx) : NULL;
			if (t) {
				int supp = (t->blocks[0] | t->blocks[1] | t->blocks[2]) && ls_suppressed(a);
				u64 h = ls_chain_hash(a);
				for (k = 0; k < 4; k++) {
					if (!t->blocks[k])
						continue;
					if (supp && k < 3) {
						g_lg.supp_blocks += t->blocks[k];
						g_lg.supp_bytes += t->bytes[k];
						continue;
					}
					g_lg.kept_blocks[k] += t->blocks[k];
					g_lg.kept_bytes[k] += t->bytes[k];
					if (k < 3)
						ls_group_add(a, h, k, t->blocks[k], t->bytes[k]);
				}
			}
			if (j + 1 < nn)
				idx = a->next;
		}
	}
}

/* ---------------------------------------------------------- the output */

static const char *const ls_kind_names[4] = {"definitely lost", "indirectly lost", "possibly lost", "still reachable"};

/* O records: the object file of each function a leak chain can name (a
   kept node's, a site's), for suppressions; not of the F records that only
   name a frameless function or a pruned node's (a woven git: 32,735 of its
   32,741 F records, an O record each, 36% of every profile). */
RT_RARE static void ls_modules(struct writer *w)
{
	u32 i;
	for (i = 0; i < w->chain_fns; i++) {
		const char *m = ls_module(w->fns.by_id[i]);
		u32 id;
		if (!*m)
			continue;
		id = intern(w, m);
		out_ch(w->o, 'O');
		out_field(w->o, i);
		out_field(w->o, id);
		out_ch(w->o, '\n');
		w->o->records++;
	}
}

/* M leak_scan: how long the scan took, when it ran; how the other threads
   were stopped for it. M leak_scan_failed when it ran out of memory (its
   tables, a full address space under ulimit -v): the summary says so. */
RT_RARE static void ls_write_meta(struct out *o)
{
	static const char *const stop[] = {[LS_STOP_NONE] = "none", [LS_STOP_PTRACE] = "ptrace", [LS_STOP_SIGNAL] = "signal"};
	if (!g_ls.ok) {
		if (ls_failure()) {
			out_str(o, "M leak_scan_failed ");
			out_str(o, ls_failure());
			out_ch(o, '\n');
			o->records++;
		}
		return;
	}
	out_str(o, "M leak_scan");
	out_field(o, g_ls.ns);
	out_ch(o, '\n');
	out_str(o, "M leak_scan_threads");
	out_field(o, g_ls.threads ? g_ls.threads : 1);
	out_ch(o, '\n');
	out_str(o, "M leak_stop ");
	out_str(o, stop[g_ls.stop]);
	out_ch(o, '\n');
	out_str(o, "M leak_stop_ns");
	out_field(o, g_ls.stop_ns);
	out_ch(o, '\n');
	o->records += 4;
}

/* The K record of leaf node (profile id id), if it has blocks in use. */
RT_RARE static void ls_write_node(struct out *o, u32 node, u32 id)
{
	const struct ls_tally *t = ls_tally_find(node);
	int k;
	if (!t)
		return;
	out_ch(o, 'K');
	out_field(o, id);
	for (k = 0; k < 4; k++) {
		out_field(o, t->blocks[k]);
		out_field(o, t->bytes[k]);
	}
	out_ch(o, '\n');
	o->records++;
}

RT_RARE static void ls_summary(struct out *o, const char *P)
{
	struct ls_group *top[1000];
	u32 ntop = 0, want = g_cfg_leaks, j;
	u64 more = 0, i;
	int k;
	out_str(o, P);
	out_str(o, "LEAK SUMMARY:\n");
	for (k = 0; k < 5; k++) {
		static const char *const pad[5] = {"   ", "   ", "     ", "   ", "        "};
		if (k == 4 && !g_cfg_supp[0])
			break;
		out_str(o, P);
		out_str(o, pad[k]);
		out_str(o, k < 4 ? ls_kind_names[k] : "suppressed");
		out_str(o, ": ");
		out_commas(o, k < 4 ? g_lg.kept_bytes[k] : g_lg.supp_bytes);
		out_str(o, " bytes in ");
		out_commas(o, k < 4 ? g_lg.kept_blocks[k] : g_lg.supp_blocks);
		out_str(o, " blocks\n");
	}
	if (want > 1000)
		want = 1000;
	/* Definitely and indirectly lost first, then by bytes. */
	for (i = 0; i < g_lg.cap; i++) {
		struct ls_group *g = &g_lg.g[i];
		if (!g->node)
			continue;
		more++;
		for (j = ntop; j > 0; j--) {
			struct ls_group *p = top[j - 1];
			if ((p->kind == 2) < (g->kind == 2) ||
			    ((p->kind == 2) == (g->kind == 2) && p->bytes >= g->bytes))
				break;
			if (j < want)
				top[j] = p;
		}
		if (j < want) {
			top[j] = g;
			if (ntop < want)
				ntop++;
		}
	}
	if (!ntop)
		return;
	out_str(o, P);
	out_str(o, "top leaks:\n");
	for (j = 0; j < ntop; j++) {
		out_str(o, P);
		out_str(o, "  ");
		out_commas(o, top[j]->bytes);
		out_str(o, " bytes in ");
		out_commas(o, top[j]->blocks);
		out_str(o, " blocks ");
		out_str(o, ls_kind_names[top[j]->kind]);
		out_str(o, " at ");
		out_chain(o, node_at(top[j]->node));
		out_ch(o, '\n');
	}
	if (more > ntop) {
		out_str(o, P);
		out_str(o, "  ... and ");
		out_commas(o, more - ntop);
		out_str(o, " more\n");
	}
}

/* Whether the scan found definitely or indirectly lost blocks that no
   suppression matched: what fails weave check, LeakSanitizer's report. */
RT_RARE static int ls_lost(void)
{
	return g_ls.ok && (g_lg.kept_blocks[0] | g_lg.kept_blocks[1]);
}

/* WEAVE_LEAK_EXITCODE: after the exit writer, a process with definitely
   or indirectly lost blocks (not suppressed) ends with that status, its
   stdio flushed first as exit would. */
RT_RARE static void ls_exit_status(void)
{
	if (g_cfg_leak_exitcode < 0 || !ls_lost())
		return;
	fflush(NULL);
	for (;;)
		syscall(SYS_exit_group, g_cfg_leak_exitcode);
}
