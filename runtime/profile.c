//go:build ignore

/* profile.c: the profile writer: one record per line, in the order
   profile/format.go describes (M, S/F/A, T, N, C/H, B, D, E). Strings,
   functions and sites are interned once and referenced by id; nodes are
   numbered densely in creation order. save.c chooses the file. */

#include "internal.h"

/* Pointer (or, for strs, string) -> dense id, and back. Starts small and
   doubles at load 1/2: a profile's functions, sites and strings are
   usually far fewer than its nodes, and the tables' pages count in the
   process's peak RSS. Its own maps: pmap_free. */
struct pmap {
	const void **key;
	u32 *id;
	const void **by_id; /* key by id */
	u32 mask, n;
	int str; /* keys are strings, hashed and compared by content */
	int err; /* out of memory: an insert failed */
};

RT_RARE static u32 str_hash(const char *s)
{
	u32 h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

RT_RARE static inline u32 pmap_hash(const struct pmap *m, const void *k)
{
	return m->str ? str_hash(k) : (u32)mix64((u64)(uintptr_t)k);
}

/* The three arrays of a table of cap slots, in one map. */
RT_RARE static wsize pmap_bytes(u32 cap)
{
	return (wsize)cap * (sizeof(void *) + sizeof(u32) + sizeof(void *));
}

/* Makes the table cap slots (a power of two, above n), rehashing. */
RT_RARE static int pmap_resize(struct pmap *m, u32 cap)
{
	char *p = rt_map(pmap_bytes(cap));
	const void **key = (const void **)p;
	u32 *id = (u32 *)(p + (wsize)cap * sizeof(void *));
	const void **by_id = (const void **)(p + (wsize)cap * (sizeof(void *) + sizeof(u32)));
	u32 i;
	if (!p)
		return 0;
	for (i = 0; i < m->n; i++) {
		u32 j = pmap_hash(m, m->by_id[i]) & (cap - 1);
		while (key[j])
			j = (j + 1) & (cap - 1);
		key[j] = m->by_id[i];
		id[j] = i;
		by_id[i] = m->by_id[i];
	}
	if (m->key)
		rt_unmap(m->key, pmap_bytes(m->mask + 1));
	m->key = key;
	m->id = id;
	m->by_id = by_id;
	m->mask = cap - 1;
	return 1;
}

RT_RARE static int pmap_init(struct pmap *m, int str)
{
	memset(m, 0, sizeof *m);
	m->str = str;
	return pmap_resize(m, 64);
}

RT_RARE static void pmap_free(struct pmap *m)
{
	if (m->key)
		rt_unmap(m->key, pmap_bytes(m->mask + 1));
	m->key = NULL;
}

/* Returns k's id, adding it (*fresh = 1) if it is new. Out of memory with
   the table full: returns 0 and sets m->err. */
RT_RARE static u32 pmap_get(struct pmap *m, const void *k, int *fresh)
{
	u32 i = pmap_hash(m, k) & m->mask;
	for (; m->key[i]; i = (i + 1) & m->mask) {
		if (m->key[i] == k || (m->str && strcmp(m->key[i], k) == 0)) {
			*fresh = 0;
			return m->id[i];
		}
	}
	*fresh = 1;
	if (2 * (m->n + 1) > m->mask + 1 && pmap_resize(m, 2 * (m->mask + 1)))
		for (i = pmap_hash(m, k) & m->mask; m->key[i]; i = (i + 1) & m->mask)
			;
	if (m->n == m->mask) { /* full but this slot: keep one empty */
		m->err = 1;
		*fresh = 0;
		return 0;
	}
	m->key[i] = k;
	m->by_id[m->n] = k;
	return m->id[i] = m->n++;
}

/* Whether k is in m (no insert). */
RT_RARE static int pmap_has(const struct pmap *m, const void *k)
{
	u32 i = pmap_hash(m, k) & m->mask;
	for (; m->key[i]; i = (i + 1) & m->mask)
		if (m->key[i] == k || (m->str && strcmp(m->key[i], k) == 0))
			return 1;
	return 0;
}

struct writer {
	struct out *o;
	u32 *ids; /* node index -> N id; NO_ID: not written (see keep_nodes) */
	u32 nids; /* the node indexes ids covers */
	struct pmap strs; /* keyed by string content, see intern */
	struct pmap fns, sites; /* by_id: the F and A records' functions and sites */
	u32 chain_fns; /* F ids below it: the functions a leak chain can name (kept nodes', sites') */
};

/* Returns the id of string s, writing an S record the first time. */
RT_RARE static u32 intern(struct writer *w, const char *s)
{
	int fresh;
	u32 id;
	if (!s)
		s = "?";
	id = pmap_get(&w->strs, s, &fresh);
	if (!fresh)
		return id;
	out_str(w->o, "S");
	out_field(w->o, id);
	out_ch(w->o, ' ');
	out_escaped(w->o, s);
	out_ch(w->o, '\n');
	w->o->records++;
	return id;
}

RT_RARE static const char *op_name(unsigned op)
{
	static const char *const names[] = {
		"?", "malloc", "calloc", "realloc", "reallocarray", "free", "strdup", "strndup",
		"aligned_alloc", "posix_memalign", "memalign", "valloc", "pvalloc", "weave_pool_alloc",
	};
	return op < sizeof names / sizeof names[0] ? names[op] : "?";
}

/* Interns fn's strings and returns its F id (~0 for none). */
RT_RARE static u32 note_fn(struct writer *w, const struct __weave_fn *fn)
{
	int fresh;
	u32 id;
	if (!fn)
		return ~0u;
	id = pmap_get(&w->fns, fn, &fresh);
	if (fresh) {
		intern(w, fn->name);
		intern(w, fn->file);
	}
	return id;
}

RT_RARE static void note_frameless(void *w, const struct __weave_fn *fn) { note_fn(w, fn); }

RT_RARE static void note_site(struct writer *w, const struct __weave_site *s)
{
	int fresh;
	pmap_get(&w->sites, s, &fresh);
	if (!fresh)
		return;
	note_fn(w, s->fn);
	intern(w, s->file);
	intern(w, op_name(s->op));
	if (s->type)
		intern(w, s->type);
}

RT_RARE static void heap_read(const struct heapc *h, u64 v[16])
{
	int c;
	for (c = 0; c < 4; c++) {
		v[c] = h->a[c];
		v[4 + c] = h->b[c];
		v[8 + c] = h->f[c] + __atomic_load_n(&h->rf[c], __ATOMIC_RELAXED);
		v[12 + c] = h->g[c] + __atomic_load_n(&h->rg[c], __ATOMIC_RELAXED);
	}
}

/* Appends /proc/self/cmdline, arguments separated by spaces. */
RT_RARE static void out_cmdline(struct out *o)
{
	char b[4096];
	int fd = open("/proc/thread-self/cmdline", O_RDONLY | O_CLOEXEC), sep = 0; /* main may be a zombie */
	ssize_t n, i;
	if (fd < 0)
		fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	while ((n = read(fd, b, sizeof b)) > 0) {
		for (i = 0; i < n; i++) {
			if (!b[i]) {
				sep = 1;
				continue;
			}
			if (sep) {
				if (g_cfg_redact_argv) {
					out_str(o, " (redacted)");
					close(fd);
					return;
				}
				out_ch(o, ' ');
			}
			sep = 0;
			out_ch(o, b[i] == '\n' || b[i] == '\r' ? ' ' : b[i]);
		}
	}
	close(fd);
}

/* Sets each thread's snap (the nodes the writers read; nodes created
   later are left out) and returns their number. g_lock held. */
RT_RARE static u64 threads_snap(void)
{
	struct rt_thread *T;
	u64 n = 0;
	for (T = g_threads; T; T = T->next) {
		T->snap = __atomic_load_n(&T->nnodes, __ATOMIC_ACQUIRE);
		n += T->snap;
	}
	return n;
}

/* The maps of the writer: ids from tm, the pmaps their own (writer_free). */
RT_RARE static int writer_init(struct writer *w, struct tmpmem *tm)
{
	u32 maxidx = __atomic_load_n(&g_node_next, __ATOMIC_RELAXED);
	if (maxidx > MAX_NODES)
		maxidx = MAX_NODES;
	w->ids = tmp_alloc(tm, (wsize)maxidx * sizeof *w->ids + 4);
	w->nids = maxidx;
	return w->ids && pmap_init(&w->fns, 0) && pmap_init(&w->sites, 0) && pmap_init(&w->strs, 1);
}

RT_RARE static void writer_free(struct writer *w)
{
	pmap_free(&w->fns);
	pmap_free(&w->sites);
	pmap_free(&w->strs);
}

/* The first line and the M records of the process. */
RT_RARE static void write_meta(struct out *o)
{
	u64 n;

	out_str(o, "weave profile 1\n");
	out_str(o, "M pid");
	out_field(o, (u64)getpid());
	/* Second, where save_profile looks for it (see exec_profile). */
	out_str(o, "\nM end ");
	out_str(o, g_end);
	if (g_end_sig)
		out_field(o, (u64)g_end_sig);
	out_str(o, "\nM ppid");
	out_field(o, (u64)getppid());
	out_str(o, "\nM argv ");
	out_cmdline(o);
	out_str(o, "\nM start_ns");
	out_field(o, g_start_ns);
	out_str(o, "\nM end_ns");
	out_field(o, now_ns());
	out_str(o, "\nM complete ");
	out_ch(o, g_complete ? '1' : '0');
	out_str(o, "\nM runtime");
	out_field(o, RT_ABI);
	out_str(o, "\nM hidden ");
	out_ch(o, hidden_on() ? '1' : '0');
	out_ch(o, '\n');
	o->records += 9;
	if (!frees_seen()) {
		out_str(o, "M frees_seen 0\n");
		o->records++;
	}
	if (malloc_is_valgrinds()) {
		out_str(o, "M malloc valgrind\n");
		o->records++;
	}
	if ((n = frameless_count()) > 0) {
		out_str(o, "M frameless");
		out_field(o, n);
		out_ch(o, '\n');
		o->records++;
	}
	if ((n = call_framed_count()) > 0) {
		out_str(o, "M call_framed");
		out_field(o, n);
		out_ch(o, '\n');
		o->records++;
	}
	pointcut_record(o);
	if (g_forked) {
		out_str(o, "M inherited");
		out_field(o, g_inh.blocks);
		out_field(o, g_inh.bytes);
		out_str(o, "\nM inherited_freed");
		out_field(o, __atomic_load_n(&g_inh.freed, __ATOMIC_RELAXED));
		out_field(o, __atomic_load_n(&g_inh.freed_bytes, __ATOMIC_RELAXED));
		out_ch(o, '\n');
		o->records += 2;
	}
	ls_write_meta(o);
	if (g_cfg_stats) {
		own_note();
		out_str(o, "M runtime_resident");
		out_field(o, g_own_peak);
		out_ch(o, '\n');
		o->records++;
	}
}

#define NO_ID (~0u)

/* Marks node i and its ancestors kept (ids 1; 0: not yet). */
RT_RARE static void keep_chain(u32 *ids, u32 i)
{
	while (!ids[i]) {
		struct rt_node *n = node_at(i);
		ids[i] = 1;
		if (n->kind == KIND_R)
			break;
		i = node_parent(n);
	}
}

/* Which nodes the profile carries: those where this process did work of
   its own (calls, time, allocations, frees, blocks in use; a trace's
   nodes), the frames open on a thread's stack, and their ancestors. A
   fork child's inherited tree, its counts zeroed (rt_fork_child), is
   otherwise left out: its profile costs what the child did, not what its
   parent had done. Sets w->ids to 1 (kept) or 0; returns whether any
   node is left out. */
RT_RARE static int keep_nodes(struct writer *w)
{
	struct rt_thread *T;
	struct rt_node *n;
	u32 i, k;
	for (T = g_threads; T; T = T->next) {
		EACH_NODE(T, i, n, k) {
			u64 v[16], nz = 0;
			int c;
			w->ids[i] = 0; /* its ancestors came first */
			if (n->kind == KIND_A) {
				heap_read(n->u.heap, v);
				for (c = 0; c < 16; c++)
					nz |= v[c];
			} else {
				nz = n->kind == KIND_R || n->pub.calls || __atomic_load_n(&n->time, __ATOMIC_RELAXED);
			}
			if (nz || n->seen)
				keep_chain(w->ids, i);
		}
		if (T->tls) { /* the frames open: where the thread is (cur and its path), the timed ones' slots */
			struct __weave_thread *t = T->tls;
			struct __weave_slot *st = t->stack;
			unsigned d = __atomic_load_n(&t->depth, __ATOMIC_RELAXED), j;
			struct rt_node *cur = (struct rt_node *)(void *)__atomic_load_n(&t->cur, __ATOMIC_RELAXED);
			if (cur && cur != &rt_boot && cur->self < w->nids)
				keep_chain(w->ids, cur->self);
			for (j = 1; st && j <= d && j < t->cap; j++) {
				struct rt_node *m = (struct rt_node *)(void *)st[j].node;
				if (m && m->self < w->nids)
					keep_chain(w->ids, m->self);
			}
		}
	}
	for (T = g_threads; T; T = T->next)
		EACH_NODE(T, i, n, k)
			if (!w->ids[i])
				return 1;
	return 0;
}

/* The functions of the nodes left out that share a name with one written:
   their F records too, so a report names each as before ("f (file.c)"). */
RT_RARE static void note_namesakes(struct writer *w)
{
	struct rt_thread *T;
	struct rt_node *n;
	u32 i, k;
	for (T = g_threads; T; T = T->next) {
		EACH_NODE(T, i, n, k) {
			const struct __weave_fn *fn = n->pub.key;
			if (n->kind == KIND_F && !w->ids[i] && fn && fn->name &&
			    !pmap_has(&w->fns, fn) && pmap_has(&w->strs, fn->name))
				note_fn(w, fn);
		}
	}
}

/* The S, F and A records of every function and site of the nodes kept
   (keep_nodes), and the T records. */
RT_RARE static void write_keys(struct writer *w)
{
	struct out *o = w->o;
	struct rt_thread *T;
	struct rt_node *n;
	u32 i, k;
	int pruned = keep_nodes(w);
	for (T = g_threads; T; T = T->next) {
		EACH_NODE(T, i, n, k) {
			if (!w->ids[i])
				continue;
			if (n->kind == KIND_F)
				note_fn(w, n->pub.key);
			else if (n->kind == KIND_A)
				note_site(w, n->pub.key);
		}
	}
	w->chain_fns = w->fns.n;
	each_frameless(note_frameless, w);
	if (pruned)
		note_namesakes(w);
	for (i = 0; i < w->fns.n; i++) {
		const struct __weave_fn *fn = w->fns.by_id[i];
		out_ch(o, 'F');
		out_field(o, i);
		out_field(o, intern(w, fn->name));
		out_field(o, intern(w, fn->file));
		out_field(o, fn->line);
		if (fn->flags & (__WEAVE_FN_FRAMELESS | __WEAVE_FN_CALLS))
			out_str(o, fn->flags & __WEAVE_FN_FRAMELESS ? " 1" : " 2"); /* flags: calls not counted, or framed at its calls */
		out_ch(o, '\n');
	}
	for (i = 0; i < w->sites.n; i++) {
		const struct __weave_site *s = w->sites.by_id[i];
		int fresh;
		out_ch(o, 'A');
		out_field(o, i);
		out_field(o, s->fn ? pmap_get(&w->fns, s->fn, &fresh) : ~0ull);
		out_field(o, intern(w, s->file));
		out_field(o, s->line);
		out_field(o, s->col);
		out_field(o, intern(w, op_name(s->op)));
		out_field(o, s->type ? intern(w, s->type) : ~0ull);
		out_field(o, s->type_size);
		if (is_hidden_site(s))
			out_str(o, " 1"); /* flags: hidden */
		else if (s->flags & __WEAVE_SITE_CALLER)
			out_str(o, " 2"); /* flags: charged to the caller */
		out_ch(o, '\n');
	}
	o->records += w->fns.n + w->sites.n;
	/* R: where a hidden site's allocations were called from. */
	for (i = 0; i < w->sites.n; i++) {
		const struct hsite *h = hs_of(w->sites.by_id[i]);
		u64 path;
		if (!h)
			continue;
		path = h->path[0] ? intern(w, h->path) : ~0ull; /* its S record first */
		out_ch(o, 'R');
		out_field(o, i);
		out_field(o, (u64)h->pc);
		out_field(o, path);
		out_ch(o, '\n');
		o->records++;
	}
	ls_modules(w);
	for (T = g_threads; T; T = T->next) {
		out_ch(o, 'T');
		out_field(o, T->num);
		out_field(o, (u64)T->tid);
		out_ch(o, '\n');
		o->records++;
	}
}

/* The N records, numbering the nodes densely in w->ids. */
RT_RARE static void write_nodes(struct writer *w)
{
	struct out *o = w->o;
	struct rt_thread *T;
	struct rt_node *n;
	u32 i, k, nid = 0;
	for (T = g_threads; T; T = T->next) {
		EACH_NODE(T, i, n, k) {
			int fresh;
			if (!w->ids[i]) {
				w->ids[i] = NO_ID;
				continue;
			}
			w->ids[i] = nid++;
			out_ch(o, 'N');
			out_field(o, w->ids[i]);
			out_field(o, n->kind == KIND_R ? ~0ull : w->ids[node_parent(n)]);
			out_field(o, n->thread);
			out_ch(o, ' ');
			out_ch(o, "RFA"[n->kind]);
			out_field(o, n->kind == KIND_R ? ~0ull
				     : pmap_get(n->kind == KIND_F ? &w->fns : &w->sites, n->pub.key, &fresh));
			out_ch(o, '\n');
			o->records++;
		}
	}
}

/* The C and H records; the heap counters read for them go into t too. */
RT_RARE static void write_counts(struct writer *w, struct totals *t)
{
	struct out *o = w->o;
	struct rt_thread *T;
	struct rt_node *n;
	u32 i, k;
	for (T = g_threads; T; T = T->next) {
		EACH_NODE(T, i, n, k) {
			u64 v[16], nz = 0;
			int c;
			if (w->ids[i] == NO_ID) /* no counts: nothing to add */
				continue;
			if (n->kind == KIND_F && n->pub.calls) {
				out_ch(o, 'C');
				out_field(o, w->ids[i]);
				out_field(o, n->pub.calls);
				out_ch(o, '\n');
				o->records++;
			}
			if (n->kind != KIND_A)
				continue;
			heap_read(n->u.heap, v);
			totals_add(t, i, v);
			for (c = 0; c < 16; c++)
				nz |= v[c];
			if (!nz)
				continue;
			out_ch(o, 'H');
			out_field(o, w->ids[i]);
			for (c = 0; c < 16; c++)
				out_field(o, v[c]);
			out_ch(o, '\n');
			o->records++;
			ls_write_node(o, i, w->ids[i]);
		}
	}
}

/* Row i of the bin tables: the shared bins plus every live thread's. */
RT_RARE static struct bin64 bins_sum(u32 i, int shared)
{
	struct rt_thread *T;
	struct bin64 b = {0};
	if (shared) {
		b.allocs = __atomic_load_n(&g_shared_bins[i].allocs, __ATOMIC_RELAXED);
		b.frees = __atomic_load_n(&g_shared_bins[i].frees, __ATOMIC_RELAXED);
	}
	for (T = g_threads; T; T = T->next) {
		if (!T->bins)
			continue;
		if (i == BIN_BYTES) {
			b.allocs += bin_bytes(T->bins)->allocs;
			b.frees += bin_bytes(T->bins)->frees;
			continue;
		}
		b.allocs += bin_row(T->bins, i)->allocs;
		b.frees += bin_row(T->bins, i)->frees;
	}
	return b;
}

/* The B records, summed a bin at a time (no copy of the tables). */
RT_RARE static void write_bins(struct out *o)
{
	u32 i;
	int shared = __atomic_load_n(&g_shared_bins_used, __ATOMIC_RELAXED);
	for (i = 0; i < NBINS; i++) {
		struct bin64 b = bins_sum(i, shared), bytes = {b.allocs * i, b.frees * i};
		if (!(b.allocs | b.frees))
			continue;
		if (i == NBINS - 1) /* sizes of 1025 bytes or more: counted */
			bytes = bins_sum(BIN_BYTES, shared);
		out_ch(o, 'B');
		out_field(o, i);
		out_field(o, b.allocs);
		out_field(o, b.frees);
		out_field(o, bytes.allocs);
		out_field(o, bytes.frees);
		out_ch(o, '\n');
		o->records++;
	}
}

/* Writes the profile to o, and the heap totals it read into t (started
   by totals_start). g_lock held. */
RT_RARE static void write_profile(struct out *o, struct totals *t, struct tmpmem *tm)
{
	struct writer w = {.o = o};
	if (!writer_init(&w, tm)) {
		writer_free(&w);
		o->err = ENOMEM;
		return;
	}
	write_meta(o);
	write_keys(&w);
	write_nodes(&w);
	write_counts(&w, t);
	totals_end(t);
	write_bins(o);
	vm_write(o, w.ids);
	write_picture(&w, t->live_blocks);
	time_write(o, w.ids, tm);
	tp_write(o, w.ids);
	marks_write(&w);
	regions_write(o);
	if (g_refused) { /* M alloc_refused: advice.c's note_refused */
		out_str(o, "M alloc_refused");
		out_field(o, g_refused);
		out_ch(o, '\n');
		o->records++;
	}
	if (g_unrec[0]) { /* M unrecorded: advice.c's note_unrecorded */
		out_str(o, "M unrecorded");
		out_field(o, g_unrec[0]);
		out_field(o, g_unrec[1]);
		out_ch(o, '\n');
		o->records++;
	}
	out_ch(o, 'E');
	out_field(o, o->records);
	out_ch(o, '\n');
	if (w.fns.err | w.sites.err | w.strs.err)
		o->err = ENOMEM;
	writer_free(&w);
}
