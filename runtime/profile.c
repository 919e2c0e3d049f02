//go:build ignore

/* profile.c: the profile writer: one record per line, in the order
   profile/format.go describes (M, S/F/A, T, N, C/H, B, D, E). Strings,
   functions and sites are interned once and referenced by id; nodes are
   numbered densely in creation order. save.c chooses the file. */

#include "internal.h"

/* Pointer -> dense id. */
struct pmap {
	const void **key;
	u32 *id;
	u32 mask, n;
};

static int pmap_init(struct pmap *m, struct tmpmem *tm, u32 want)
{
	u32 cap = 64;
	while (cap < 2 * want + 64)
		cap *= 2;
	m->key = tmp_alloc(tm, (wsize)cap * sizeof *m->key);
	m->id = tmp_alloc(tm, (wsize)cap * sizeof *m->id);
	m->mask = cap - 1;
	m->n = 0;
	return m->key && m->id;
}

static u32 pmap_get(struct pmap *m, const void *k, int *fresh)
{
	u32 i = (u32)mix64((u64)(uintptr_t)k) & m->mask;
	for (; m->key[i]; i = (i + 1) & m->mask) {
		if (m->key[i] == k) {
			*fresh = 0;
			return m->id[i];
		}
	}
	m->key[i] = k;
	*fresh = 1;
	return m->id[i] = m->n++;
}

struct writer {
	struct out *o;
	u32 *ids; /* node index -> N id */
	u32 nids; /* the node indexes ids covers */
	struct pmap strs; /* keyed by string content, see intern */
	struct pmap fns, sites;
	const struct __weave_fn **fn_of;   /* by F id */
	const struct __weave_site **site_of; /* by A id */
};

static u32 str_hash(const char *s)
{
	u32 h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Returns the id of string s, writing an S record the first time. */
static u32 intern(struct writer *w, const char *s)
{
	struct pmap *m = &w->strs;
	u32 i;
	if (!s)
		s = "?";
	for (i = str_hash(s) & m->mask; m->key[i]; i = (i + 1) & m->mask)
		if (strcmp(m->key[i], s) == 0)
			return m->id[i];
	m->key[i] = s;
	m->id[i] = m->n++;
	out_str(w->o, "S");
	out_field(w->o, m->id[i]);
	out_ch(w->o, ' ');
	out_escaped(w->o, s);
	out_ch(w->o, '\n');
	w->o->records++;
	return m->id[i];
}

static const char *op_name(unsigned op)
{
	static const char *const names[] = {
		"?", "malloc", "calloc", "realloc", "reallocarray", "free", "strdup", "strndup",
		"aligned_alloc", "posix_memalign", "memalign", "valloc", "pvalloc", "weave_pool_alloc",
	};
	return op < sizeof names / sizeof names[0] ? names[op] : "?";
}

/* Interns fn's strings and returns its F id (~0 for none). */
static u32 note_fn(struct writer *w, const struct __weave_fn *fn)
{
	int fresh;
	u32 id;
	if (!fn)
		return ~0u;
	id = pmap_get(&w->fns, fn, &fresh);
	if (fresh) {
		w->fn_of[id] = fn;
		intern(w, fn->name);
		intern(w, fn->file);
	}
	return id;
}

static void note_site(struct writer *w, const struct __weave_site *s)
{
	int fresh;
	u32 id = pmap_get(&w->sites, s, &fresh);
	if (!fresh)
		return;
	w->site_of[id] = s;
	note_fn(w, s->fn);
	intern(w, s->file);
	intern(w, op_name(s->op));
	if (s->type)
		intern(w, s->type);
}

static void heap_read(const struct heapc *h, u64 v[16])
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
static void out_cmdline(struct out *o)
{
	char b[4096];
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC), sep = 0;
	ssize_t n, i;
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
static u64 threads_snap(void)
{
	struct rt_thread *T;
	u64 n = 0;
	for (T = g_threads; T; T = T->next) {
		T->snap = __atomic_load_n(&T->nnodes, __ATOMIC_ACQUIRE);
		n += T->snap;
	}
	return n;
}

/* The maps of the writer, sized for nnodes nodes, from tm. */
static int writer_init(struct writer *w, u64 nnodes, struct tmpmem *tm)
{
	u32 maxidx = __atomic_load_n(&g_node_next, __ATOMIC_RELAXED);
	if (maxidx > MAX_NODES)
		maxidx = MAX_NODES;
	w->ids = tmp_alloc(tm, (wsize)maxidx * sizeof *w->ids + 4);
	w->nids = maxidx;
	return w->ids && pmap_init(&w->fns, tm, (u32)nnodes) && pmap_init(&w->sites, tm, (u32)nnodes) &&
	       pmap_init(&w->strs, tm, (u32)nnodes * 3 + 16) &&
	       (w->fn_of = tmp_alloc(tm, (wsize)(w->fns.mask + 1) * sizeof *w->fn_of)) &&
	       (w->site_of = tmp_alloc(tm, (wsize)(w->sites.mask + 1) * sizeof *w->site_of));
}

/* The first line and the M records of the process. */
static void write_meta(struct out *o)
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
	if ((n = frameless_count()) > 0) {
		out_str(o, "M frameless");
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
}

/* The S, F and A records of every function and site in the tree, and the
   T records. */
static void write_keys(struct writer *w)
{
	struct out *o = w->o;
	struct rt_thread *T;
	struct rt_node *n;
	u32 i, k;
	for (T = g_threads; T; T = T->next) {
		EACH_NODE(T, i, n, k) {
			if (n->kind == KIND_F)
				note_fn(w, n->pub.key);
			else if (n->kind == KIND_A)
				note_site(w, n->pub.key);
		}
	}
	for (i = 0; i < w->fns.n; i++) {
		const struct __weave_fn *fn = w->fn_of[i];
		out_ch(o, 'F');
		out_field(o, i);
		out_field(o, intern(w, fn->name));
		out_field(o, intern(w, fn->file));
		out_field(o, fn->line);
		out_ch(o, '\n');
	}
	for (i = 0; i < w->sites.n; i++) {
		const struct __weave_site *s = w->site_of[i];
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
		const struct hsite *h = hs_of(w->site_of[i]);
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
static void write_nodes(struct writer *w)
{
	struct out *o = w->o;
	struct rt_thread *T;
	struct rt_node *n;
	u32 i, k, nid = 0;
	for (T = g_threads; T; T = T->next) {
		EACH_NODE(T, i, n, k) {
			int fresh;
			w->ids[i] = nid++;
			out_ch(o, 'N');
			out_field(o, w->ids[i]);
			out_field(o, n->kind == KIND_R ? ~0ull : w->ids[n->parent]);
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
static void write_counts(struct writer *w, struct totals *t)
{
	struct out *o = w->o;
	struct rt_thread *T;
	struct rt_node *n;
	u32 i, k;
	for (T = g_threads; T; T = T->next) {
		EACH_NODE(T, i, n, k) {
			u64 v[16], nz = 0;
			int c;
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

/* The B records: the shared bins plus every live thread's. */
static void write_bins(struct out *o, struct tmpmem *tm)
{
	struct bin *bins = tmp_alloc(tm, NBINS * sizeof *bins);
	struct rt_thread *T;
	u32 i;
	if (!bins) {
		o->err = ENOMEM;
		return;
	}
	for (i = 0; i < NBINS; i++) {
		bins[i].allocs = __atomic_load_n(&g_shared_bins[i].allocs, __ATOMIC_RELAXED);
		bins[i].frees = __atomic_load_n(&g_shared_bins[i].frees, __ATOMIC_RELAXED);
		bins[i].bytes = __atomic_load_n(&g_shared_bins[i].bytes, __ATOMIC_RELAXED);
		bins[i].fbytes = __atomic_load_n(&g_shared_bins[i].fbytes, __ATOMIC_RELAXED);
	}
	for (T = g_threads; T; T = T->next) {
		if (!T->bins)
			continue;
		for (i = 0; i < NBINS; i++) {
			bins[i].allocs += T->bins[i].allocs;
			bins[i].frees += T->bins[i].frees;
			bins[i].bytes += T->bins[i].bytes;
			bins[i].fbytes += T->bins[i].fbytes;
		}
	}
	for (i = 0; i < NBINS; i++) {
		if (!(bins[i].allocs | bins[i].frees))
			continue;
		if (i < NBINS - 1) { /* one size: bin_count counts no bytes */
			bins[i].bytes = bins[i].allocs * i;
			bins[i].fbytes = bins[i].frees * i;
		}
		out_ch(o, 'B');
		out_field(o, i);
		out_field(o, bins[i].allocs);
		out_field(o, bins[i].frees);
		out_field(o, bins[i].bytes);
		out_field(o, bins[i].fbytes);
		out_ch(o, '\n');
		o->records++;
	}
}

/* Writes the profile to o, and the heap totals it read into t (started
   by totals_start). g_lock held. */
static void write_profile(struct out *o, struct totals *t, struct tmpmem *tm)
{
	struct writer w = {.o = o};
	if (!writer_init(&w, t->nodes, tm)) {
		o->err = ENOMEM;
		return;
	}
	write_meta(o);
	write_keys(&w);
	write_nodes(&w);
	write_counts(&w, t);
	totals_end(t);
	write_bins(o, tm);
	vm_write(o, w.ids);
	write_picture(&w);
	time_write(o, w.ids, tm);
	tp_write(o, w.ids);
	marks_write(&w);
	regions_write(o);
	out_ch(o, 'E');
	out_field(o, o->records);
	out_ch(o, '\n');
}
