//go:build ignore

/* cct.c: the calling-context tree: its nodes, the child lookup behind
   weave.h's caches, and recursion folding.

   Nodes. All CCT nodes live in one global node array addressed by a 32-bit
   index (only NODE_BITS = 28 bits are used, so that a side-table entry can
   hold one). The array is a fixed table of chunk pointers, each chunk
   CHUNK_NODES nodes mmap'd on first use. Index 0 is never used ("none").
   Threads take batches of indices from a global atomic counter (8 at
   first, doubling up to NODE_BATCH, so that short-lived threads waste
   little), so creating a node takes no lock. Trees are per thread: a node's fields are
   written by the thread that created it (its owner) only, except the
   "remote" free counters, which other threads add to atomically.

   Kinds: R (a thread's root), F (a woven function, key = struct __weave_fn),
   A (an allocation leaf, key = struct __weave_site, always a child of an R
   or F node, holding the heap counters of struct heapc).

   Child lookup. weave.h's __weave_enter hits when cur->cache is the child
   for the function; otherwise __weave_enter_slow looks the child up in the
   thread's open-addressing hash keyed by (parent index, key), creating it on
   first use. Allocation leaves use the same hash, with a one-entry cache per
   parent (u.acache) in front of it.

   Recursion is folded (except in exact timing mode, whose self times
   need one node per activation depth): a function appears at most twice
   on a path of the tree. Entering f below a node whose path already holds f twice
   goes to the nearer of the two (the child lookup returns that
   ancestor; the pseudo-stack still pushes it). For direct recursion
   main > f > f > f ... the tree is main > f > f', where f' counts every
   call of f from f (the report's recursive calls) and holds the
   allocations of all deeper levels. So the tree stays bounded by the
   program's functions, not its recursion depth; the frames' words (one
   a level, in the program's own stack) and the timed frames' slots (24
   bytes a timed level, committed on demand) are the only per-level
   memory. */

#include "internal.h"

static int chunk_map(u32 c)
{
	struct rt_node *p, *none = NULL;
	if (__atomic_load_n(&g_chunks[c], __ATOMIC_ACQUIRE))
		return 1;
	p = rt_map((wsize)CHUNK_NODES * sizeof *p);
	if (!p)
		return 0;
	if (!__atomic_compare_exchange_n(&g_chunks[c], &none, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		rt_unmap(p, (wsize)CHUNK_NODES * sizeof *p);
	return 1;
}

static int node_refill(struct rt_thread *T)
{
	u32 i, n = T->batch ? T->batch : 8;
	if (__atomic_load_n(&g_node_next, __ATOMIC_RELAXED) >= MAX_NODES)
		return 0;
	i = __atomic_fetch_add(&g_node_next, n, __ATOMIC_RELAXED);
	if (i >= MAX_NODES)
		return 0;
	if (n > MAX_NODES - i)
		n = MAX_NODES - i;
	/* A batch may straddle two chunks. */
	if (!chunk_map(i >> CHUNK_BITS) || !chunk_map((i + n - 1) >> CHUNK_BITS))
		return 0;
	T->nnext = i ? i : 1; /* index 0 means "none" */
	T->nend = i + n;
	if (T->batch < NODE_BATCH)
		T->batch = n * 2;
	return 1;
}

/* Creates a node owned by T. Owner thread only. */
static struct rt_node *node_new(struct rt_thread *T, const struct rt_node *parent, const void *key, int kind)
{
	struct heapc *h = NULL;
	struct rt_node *n;
	u32 i;
	if (T->nnext == T->nend && !node_refill(T))
		return NULL;
	if (kind == KIND_A) {
		pthread_mutex_lock(&g_lock);
		h = arena_line(sizeof *h); /* its owner's counters: no line shared with another thread's */
		pthread_mutex_unlock(&g_lock);
		if (!h)
			return NULL;
	}
	i = T->nnext++;
	n = node_at(i);
	n->pub.key = key;
	n->pub.cache = &rt_dummy.pub;
	n->pub.calls = 0;
	if (kind == KIND_A)
		n->u.heap = h;
	else
		n->u.acache = &rt_dummy;
	n->self = i;
	n->pub.up = parent ? (struct __weave_node *)(void *)&parent->pub : NULL;
	n->next = 0;
	n->thread = T->num;
	n->kind = (u32)kind;
	if (__builtin_expect(__atomic_load_n(&g_tp_on, __ATOMIC_ACQUIRE), 0) && kind != KIND_R)
		tp_node_new(n);
	if (T->last)
		node_at(T->last)->next = i;
	else
		T->first = i;
	T->last = i;
	__atomic_store_n(&T->nnodes, T->nnodes + 1, __ATOMIC_RELEASE);
	return n;
}

static inline u32 chash_of(u32 parent, const void *key)
{
	/* Fibonacci hashing: the product's high half depends on every bit. */
	return (u32)((((u64)(uintptr_t)key + ((u64)parent << 32)) * 0x9e3779b97f4a7c15ull) >> 32);
}

/* Tables of up to CHASH_ARENA entries come from the shared arena (under
   g_lock, which the caller holds if locked: thread_setup), the ones
   they replace left there; larger ones are mmap'd. A first table of
   CHASH_INIT entries: most threads have few children, and each hashed
   entry may land on a page of its own. */
static int chash_grow(struct rt_thread *T, int locked)
{
	u32 ncap = T->chash ? (T->cmask + 1) * 2 : CHASH_INIT, i;
	u64 *nt;
	if (ncap > CHASH_ARENA)
		nt = rt_map((wsize)ncap * sizeof *nt);
	else {
		if (!locked)
			pthread_mutex_lock(&g_lock);
		nt = arena_alloc((wsize)ncap * sizeof *nt);
		if (!locked)
			pthread_mutex_unlock(&g_lock);
	}
	if (!nt)
		return 0;
	if (T->chash) {
		for (i = 0; i <= T->cmask; i++) {
			u64 k = T->chash[i];
			u32 j;
			if (!k)
				continue;
			j = chash_of((u32)(k >> 32), node_at((u32)k)->pub.key) & (ncap - 1);
			while (nt[j])
				j = (j + 1) & (ncap - 1);
			nt[j] = k;
		}
		if (T->cmask + 1 > CHASH_ARENA)
			rt_unmap(T->chash, (wsize)(T->cmask + 1) * sizeof *nt);
	}
	T->chash = nt;
	T->cmask = ncap - 1;
	return 1;
}

/* Recursion folding (see above): if the path from the root to
   p holds function key twice, returns the nearer of the two, else 0. Not
   in exact timing mode: a folded node stands for activations nested in
   one another, whose self times the tree can then no longer tell apart;
   there the tree stays exact, one node per depth (up to the depth cap). */
static struct rt_node *fold(struct rt_node *p, const void *key)
{
	struct rt_node *q, *near = NULL;
	if (time_exact())
		return NULL;
	for (q = p; q->kind == KIND_F; q = node_at(node_parent(q))) {
		if (q->pub.key != key)
			continue;
		if (near)
			return near;
		near = q;
	}
	return NULL;
}

/* Finds or creates p's child for key (for a function: folding recursion).
   The hash maps (parent, key) to the child, or to the ancestor a folded
   call goes to, so that fold's walk up the path runs once per pair.
   Owner thread only. */
static struct rt_node *child(struct rt_thread *T, struct rt_node *p, const void *key, int kind)
{
	struct rt_node *n;
	u64 e;
	u32 i;
	/* Load up to 3/4: lookups come only after both child caches
	   missed, and the table's pages count in the program's peak RSS. */
	if ((u64)(T->ccount + 1) * 4 > (u64)(T->cmask + 1) * 3 && !chash_grow(T, 0))
		return NULL;
	for (i = chash_of(p->self, key) & T->cmask; (e = T->chash[i]); i = (i + 1) & T->cmask) {
		if ((u32)(e >> 32) != p->self)
			continue;
		n = node_at((u32)e);
		if (n->pub.key == key)
			return n;
	}
	if (!(kind == KIND_F && (n = fold(p, key))) && !(n = node_new(T, p, key, kind)))
		return NULL;
	T->chash[i] = (u64)p->self << 32 | n->self;
	T->ccount++;
	return n;
}

