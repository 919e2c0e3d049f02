//go:build ignore

/* unload.c: a woven shared library unloaded (dlclose) before exit. Its
   functions' and sites' records (struct __weave_fn, __weave_site, and
   their strings), which the nodes of the tree point to, go with it: the
   copy of the runtime linked into the library, inactive, tells the active
   copy from its destructor (__weave_rt_unload, bound to the active copy's
   as every __weave_* symbol is), which copies them into never-freed memory
   and points the nodes at the copies, so the exit writer never reads
   unmapped memory. */

#include "internal.h"

/* The address range of the loaded object holding this copy. */
struct unload_range {
	uintptr_t lo, hi;
	int found;
};

RT_RARE static int unload_range_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct unload_range *r = data;
	uintptr_t a = (uintptr_t)&g_lock, lo = ~(uintptr_t)0, hi = 0;
	int i, mine = 0;
	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
		if (ph->p_type != PT_LOAD)
			continue;
		lo = s < lo ? s : lo;
		hi = e > hi ? e : hi;
		mine |= a >= s && a < e;
	}
	if (!mine)
		return 0;
	r->lo = lo;
	r->hi = hi;
	r->found = 1;
	return 1;
}

/* An inactive copy's destructor: its object is going away. */
RT_RARE static void unload_notify(void)
{
	struct unload_range r = {0, 0, 0};
	dl_iterate_phdr(unload_range_cb, &r);
	if (r.found)
		__weave_rt_unload((const void *)r.lo, (const void *)r.hi);
}

RT_RARE static int in_range(const void *p, uintptr_t lo, uintptr_t hi)
{
	return (uintptr_t)p >= lo && (uintptr_t)p < hi;
}

/* A copy of s in the arena if it lies in [lo, hi); s otherwise. */
RT_RARE static const char *unload_str(const char *s, uintptr_t lo, uintptr_t hi)
{
	wsize n;
	char *c;
	if (!s || !in_range(s, lo, hi))
		return s;
	n = strlen(s) + 1;
	if (!(c = arena_alloc(n)))
		return "?";
	memcpy(c, s, n);
	return c;
}

/* The copy of key k (a function, else a site), made once: m maps the old
   records to their copies. */
struct unload_map {
	const void **old;
	const void **copy;
	u32 mask;
};

RT_RARE static const void *unload_key(struct unload_map *m, const void *k, int fn, uintptr_t lo, uintptr_t hi)
{
	u32 i = (u32)mix64((u64)(uintptr_t)k) & m->mask;
	void *c;
	for (; m->old[i]; i = (i + 1) & m->mask)
		if (m->old[i] == k)
			return m->copy[i];
	if (fn) {
		const struct __weave_fn *f = k;
		struct __weave_fn *nf = arena_alloc(sizeof *nf);
		if (!nf)
			return k;
		*nf = *f;
		nf->name = unload_str(f->name, lo, hi);
		nf->file = unload_str(f->file, lo, hi);
		c = nf;
	} else {
		const struct __weave_site *s = k;
		struct __weave_site *ns = arena_alloc(sizeof *ns);
		if (!ns)
			return k;
		*ns = *s;
		ns->file = unload_str(s->file, lo, hi);
		ns->type = unload_str(s->type, lo, hi);
		if (s->fn && in_range(s->fn, lo, hi))
			ns->fn = unload_key(m, s->fn, 1, lo, hi);
		c = ns;
	}
	/* The recursive call for s->fn may have filled slot i: probe again. */
	for (i = (u32)mix64((u64)(uintptr_t)k) & m->mask; m->old[i]; i = (i + 1) & m->mask)
		;
	m->old[i] = k;
	m->copy[i] = c;
	return c;
}

/* The active copy: the object [lo, hi) is being unloaded. */
RT_RARE void __weave_rt_unload(const void *lo, const void *hi)
{
	struct rt_local *l = &rt_local;
	struct tmpmem tm = {.k = 0};
	struct unload_map m;
	struct rt_thread *T;
	struct rt_node *n;
	u32 i, k, cap = 64;
	u64 nodes;
	int was = l->in_rt;
	if (!rt_is_active())
		return;
	rt_enter(l);
	pthread_mutex_lock(&g_lock);
	nodes = threads_snap();
	while (cap < 2 * nodes + 64)
		cap *= 2;
	m.old = tmp_alloc(&tm, (wsize)cap * sizeof *m.old);
	m.copy = tmp_alloc(&tm, (wsize)cap * sizeof *m.copy);
	m.mask = cap - 1;
	for (T = g_threads; m.old && m.copy && T; T = T->next) {
		EACH_NODE(T, i, n, k) {
			if (n->kind != KIND_R && in_range(n->pub.key, (uintptr_t)lo, (uintptr_t)hi))
				n->pub.key = unload_key(&m, n->pub.key, n->kind == KIND_F, (uintptr_t)lo, (uintptr_t)hi);
		}
	}
	pthread_mutex_unlock(&g_lock);
	tmp_free(&tm);
	fence();
	l->in_rt = was;
}
