//go:build ignore

/* pool.c: the pool API (weave_api.h). A program's own allocator (an arena,
   a pool of fixed-size objects) tells the runtime about its objects, as
   valgrind's VALGRIND_MEMPOOL_* requests do:
   - weave_pool_alloc(pool, p, size) records p as a block of size bytes in
     the side table, as malloc's blocks are: allocated at the call's site
     (the weaver makes the call an allocation site, with the type of a
     sizeof in size) in the current context, then freed, kept or leaked
     like one;
   - weave_pool_free(pool, p) frees it;
   - weave_pool_destroy(pool) frees every object of the pool still recorded;
   - weave_pool_backing(expr) evaluates expr (the pool's malloc of the
     memory it carves objects from) without recording the blocks it
     allocates: the totals then count the objects, not their backing as
     well; freeing those blocks later counts nothing.
   Pool membership is g_pools, an open-addressing table object -> pool in
   memory of the runtime's own (mmap, no malloc), under g_pool_lock, which
   is never held while another lock is taken. Destroying a pool walks the
   table once; it has at most four slots per object recorded when it was
   last rehashed, at least 1024. */

#include "internal.h"

struct pool_ent {
	uintptr_t obj; /* 0: empty, 1: deleted */
	const void *pool;
};

static struct {
	struct pool_ent *tab;
	u32 cap, live, used; /* used: live + deleted */
	u32 gen;             /* rehashes: a destroy's walk restarts after one */
} g_pools;
static u32 g_pool_lock; /* a leaf: held with no other lock taken inside */

/* __weave_site of the calls the weaver did not rewrite (in a function it
   left unwoven): charged to the innermost frame. */
static const struct __weave_site rt_pool_site = {0, "", 0, 0, __WEAVE_POOL_ALLOC, __WEAVE_SITE_CALLER, 0, 0};

static struct pool_ent *pool_slot(uintptr_t obj, int insert)
{
	u32 mask = g_pools.cap - 1, i = (u32)mix64(obj) & mask;
	struct pool_ent *del = NULL;
	for (;; i = (i + 1) & mask) {
		struct pool_ent *e = &g_pools.tab[i];
		if (e->obj == obj)
			return e;
		if (e->obj == 1 && !del)
			del = e;
		if (e->obj == 0)
			return insert ? (del ? del : e) : NULL;
	}
}

/* Makes room for one more entry: a table of at least 1024 slots, at most
   3/4 used, rehashed without the deleted ones. */
static int pool_room(void)
{
	struct pool_ent *old = g_pools.tab;
	u32 ocap = g_pools.cap, ncap = 1024, i;
	if (old && (g_pools.used + 1) * 4 <= ocap * 3)
		return 1;
	while (ncap < (g_pools.live + 1) * 4)
		ncap *= 2;
	g_pools.tab = rt_map((wsize)ncap * sizeof *old);
	if (!g_pools.tab) {
		g_pools.tab = old;
		return 0;
	}
	g_pools.cap = ncap;
	g_pools.used = g_pools.live;
	g_pools.gen++;
	for (i = 0; i < ocap; i++)
		if (old[i].obj > 1)
			*pool_slot(old[i].obj, 1) = old[i];
	if (old)
		rt_unmap(old, (wsize)ocap * sizeof *old);
	return 1;
}

static void pool_note(const void *pool, const void *p)
{
	struct pool_ent *e;
	spin_lock(&g_pool_lock);
	if (pool_room()) {
		e = pool_slot((uintptr_t)p, 1);
		if (e->obj <= 1) {
			g_pools.live++;
			g_pools.used += e->obj == 0;
		}
		e->obj = (uintptr_t)p;
		e->pool = pool;
	}
	spin_unlock(&g_pool_lock);
}

void __weave_weave_pool_alloc(const struct __weave_site *s, const void *pool, const void *p, __weave_size_t n)
{
	struct rt_local *l = &rt_local;
	int e;
	if (l->in_rt || !p)
		return;
	rt_enter(l);
	e = errno;
	note_alloc(l, s, (void *)(uintptr_t)p, n);
	pool_note(pool, p);
	errno = e;
	rt_exit(l);
}

void weave_pool_alloc(const void *pool, const void *p, __weave_size_t n)
{
	__weave_weave_pool_alloc(&rt_pool_site, pool, p, n);
}

/* weave_pool_free and weave_pool_destroy call these through the dynamic
   symbol table: a woven shared library's copy keeps the names of the API
   out of its exports (driver/link.go, hiddenRuntimeNames), and its calls
   reach the active copy's records. */
void __weave_pool_free(const void *pool, const void *p);
void __weave_pool_destroy(const void *pool);
void weave_pool_free(const void *pool, const void *p) { __weave_pool_free(pool, p); }
void weave_pool_destroy(const void *pool) { __weave_pool_destroy(pool); }

void __weave_pool_free(const void *pool, const void *p)
{
	struct rt_local *l = &rt_local;
	struct pool_ent *pe;
	int e;
	(void)pool;
	if (l->in_rt || !p)
		return;
	rt_enter(l);
	e = errno;
	spin_lock(&g_pool_lock);
	if (g_pools.tab && (pe = pool_slot((uintptr_t)p, 0))) {
		pe->obj = 1;
		g_pools.live--;
	}
	spin_unlock(&g_pool_lock);
	note_free(l, (void *)(uintptr_t)p);
	errno = e;
	rt_exit(l);
}

void __weave_pool_destroy(const void *pool)
{
	struct rt_local *l = &rt_local;
	uintptr_t obj;
	u32 i = 0, gen = 0;
	int e;
	if (l->in_rt)
		return;
	rt_enter(l);
	e = errno;
	for (;;) {
		obj = 0;
		spin_lock(&g_pool_lock);
		if (gen != g_pools.gen)
			i = 0;
		gen = g_pools.gen;
		for (; g_pools.tab && i < g_pools.cap && !obj; i++) {
			struct pool_ent *pe = &g_pools.tab[i];
			if (pe->obj > 1 && pe->pool == pool) {
				obj = pe->obj;
				pe->obj = 1;
				g_pools.live--;
			}
		}
		spin_unlock(&g_pool_lock);
		if (!obj)
			break;
		note_free(l, (void *)obj);
	}
	errno = e;
	rt_exit(l);
}

/* weave_pool_backing(expr): __weave_pool_backing_begin() before expr,
   __weave_pool_backing_end(what it returned) after; the blocks allocated in between
   are not recorded (as in a declared allocator's call, outer.c). */
int __weave_pool_backing_begin(void)
{
	struct rt_local *l = &rt_local;
	if (l->outer)
		return 0;
	l->outer = (uintptr_t)__builtin_dwarf_cfa(); /* where the caller's frame ends (outer.c) */
	return 1;
}

void __weave_pool_backing_end(int began)
{
	if (began)
		rt_local.outer = 0;
}

/* rt_fork_prepare and rt_fork_parent (the child too): the lock. */
static void pool_lock(void) { spin_lock(&g_pool_lock); }
static void pool_unlock(void) { spin_unlock(&g_pool_lock); }
