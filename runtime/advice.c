//go:build ignore

/* advice.c: the allocation advice, what woven code calls instead of
   malloc & co. (__weave_malloc, ...), and the recording behind it: a block
   goes into the side table (side.c), charged to the allocation leaf of the
   thread's current node (cct.c), whose heap counters and the thread's bins
   count it; its free is charged back to that leaf.

   Choices (documented behaviour):
   - free(p) of a block the runtime never saw: passes through, counts
     nothing. free(NULL): no count.
   - realloc(p, n) of a block the runtime never saw: the real realloc runs,
     and the new block is recorded as allocated at this site (no free is
     counted for the unknown old block).
   - realloc(p, 0) returning NULL counts as a free of p (glibc frees p).
     realloc(NULL, n) is malloc(n). A failed realloc leaves p recorded.
   - calloc/reallocarray overflow: the real function fails, nothing recorded.
   - Recorded size is always the requested size (pvalloc included, which
     glibc rounds up to whole pages; strdup/strndup: length of the copy + 1).
   - A malloc returning an address still in the side table means that block
     was freed behind the runtime's back (by unwoven code): the stale entry is
     counted as freed, charged to the node that allocated it. */

#include "internal.h"

/* A thread's 16-bit count of row i wrapped: 2^16 more in the shared
   table's row. */
static __attribute__((noinline, cold)) void bin_carry(u32 i, int is_free)
{
	struct bin64 *s = &g_shared_bins[i];
	__atomic_store_n(&g_shared_bins_used, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(is_free ? &s->frees : &s->allocs, (u64)1 << 16, __ATOMIC_RELAXED);
}

/* Counts an allocation or free of size bytes in a thread's mprof bins b.
   A bin under 1025 holds one size, so only the last bin counts bytes
   (bin_bytes); the profile writer computes the others' (write_bins). */
static inline __attribute__((always_inline)) void bin_add(struct bin *b, u64 size, int is_free)
{
	u32 i = bin_of(size);
	uint16_t *c = is_free ? &bin_row(b, i)->frees : &bin_row(b, i)->allocs;
	if (__builtin_expect(!++*c, 0))
		bin_carry(i, is_free);
	if (__builtin_expect(i == NBINS - 1, 0)) {
		struct bin64 *y = bin_bytes(b);
		if (is_free)
			y->frees += size;
		else
			y->allocs += size;
	}
}

/* Counts in thread T's bins (bin_add), or atomically in the shared bins
   when there is no thread record. */
static inline void bin_count(struct rt_thread *T, u64 size, int is_free)
{
	struct bin *b = T ? T->bins : NULL;
	struct bin64 *s;
	u32 i;
	if (__builtin_expect(b != NULL, 1)) {
		bin_add(b, size, is_free);
		return;
	}
	i = bin_of(size);
	s = &g_shared_bins[i];
	__atomic_fetch_add(is_free ? &s->frees : &s->allocs, 1, __ATOMIC_RELAXED);
	s = &g_shared_bins[BIN_BYTES];
	if (i == NBINS - 1)
		__atomic_fetch_add(is_free ? &s->frees : &s->allocs, size, __ATOMIC_RELAXED);
}

/* Counts the free of the block of side-table entry e, charged to the node
   that allocated it. T is the calling thread (may be 0). */
static inline __attribute__((always_inline)) u64 charge_free(struct rt_thread *T, const struct ent *e)
{
	u32 ni = (u32)(e->val & NODE_MASK);
	struct rt_node *n;
	struct heapc *h;
	u64 size = e->val >> NODE_BITS;
	int c;
	if (size == SIZE_SAT)
		size = big_take(e->addr);
	if (!ni) {
		/* Inherited from the parent of a fork: not the child's. */
		__atomic_fetch_add(&g_inh.freed, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&g_inh.freed_bytes, size, __ATOMIC_RELAXED);
		return size;
	}
	vm_free(size); /* first: fewer registers live across it */
	n = node_at(ni);
	h = n->u.heap;
	c = size_class(size);
	if (T && n->thread == T->num) {
		h->f[c]++;
		h->g[c] += size;
	} else {
		__atomic_fetch_add(&h->rf[c], 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&h->rg[c], size, __ATOMIC_RELAXED);
	}
	bin_count(T, size, 1);
	if (__builtin_expect(__atomic_load_n(&g_tp_attn, __ATOMIC_RELAXED) & TP_ATTN_ALLOCS, 0))
		tp_free(T, n, e->addr, size);
	return size;
}

/* The allocation leaf for site s under cur, or NULL: the A child of cur,
   or, for a site of a frameless allocation leaf (__WEAVE_SITE_FRAME), the A
   child of fn's node under cur, as fn's entry would have found or made it.
   Either way it goes into cur's A cache: a site belongs to one function
   and either always or never has the flag, so the site alone tells which
   path the cached node stands for, and a frameless leaf's allocations cost
   no child lookup and leave cur's entry cache (weave.h) alone. */
static __attribute__((noinline)) struct rt_node *leaf_of(struct rt_thread *T, struct rt_node *cur,
							 const struct __weave_site *s)
{
	struct rt_node *p = cur, *a;
	if (cur == &rt_boot)
		return NULL;
	if (s->flags & __WEAVE_SITE_FRAME) {
		struct __weave_node *f = fn_child(T, &cur->pub, s->fn);
		if (!f)
			return NULL;
		p = (struct rt_node *)(void *)f;
	}
	if (!(a = child(T, p, s, KIND_A)))
		return NULL;
	cur->u.acache = a;
	return a;
}

/* Blocks and bytes the runtime had no room to record (its maps failed, an
   address space full under ulimit -v, or no node left): the program has
   them all the same; the summary and M unrecorded say so. */
static u64 g_unrec[2];
/* Allocations the C library refused (NULL; n, the size asked, unused: a
   calloc's may have overflowed): under a limit (RLIMIT_AS, RLIMIT_DATA)
   that the runtime's own maps count against too, the summary says so
   (summary_limits), and M alloc_refused. */
static u64 g_refused;

static __attribute__((noinline, cold)) void note_refused(u64 n)
{
	(void)n;
	__atomic_fetch_add(&g_refused, 1, __ATOMIC_RELAXED);
}

static __attribute__((noinline, cold)) void note_unrecorded(const struct rt_node *cur, u64 n)
{
	if (cur == &rt_boot)
		return; /* before set-up: never recorded (leaf_of) */
	__atomic_fetch_add(&g_unrec[0], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&g_unrec[1], n, __ATOMIC_RELAXED);
}

/* A stale entry that an allocation replaced: counted as freed. */
RT_RARE static __attribute__((noinline)) void charge_stale(struct rt_thread *T, const struct ent *old)
{
	charge_free(T, old);
}

/* Records block p of n bytes, allocated at site s, unless a declared
   allocator's call is running (outer.c: it records its block itself). in_rt
   is set. The common case (a set-up thread, the A cache hit, a fresh slot)
   is straight-line code; the rest is out of line. */
static inline __attribute__((always_inline)) void note_alloc(struct rt_local *l, const struct __weave_site *s,
							     void *p, u64 n)
{
	struct rt_thread *T = l->thr;
	struct rt_node *cur, *a;
	struct heapc *h;
	struct ent old;
	u64 rec = n < SIZE_SAT ? n : SIZE_SAT;
	int c;
	if (__builtin_expect(!T, 0))
		T = thread_get(l);
	if (__builtin_expect(l->outer != 0, 0)) {
		l->outer_allocs++;
		return;
	}
	if (!T || !p || __builtin_expect(boot_owns(p), 0))
		return; /* a block of the static buffer (interpose.c) is never recorded: a free's fast path need not test */
	cur = (struct rt_node *)(void *)__weave_tls.cur;
	a = cur->u.acache;
	if (__builtin_expect(a->pub.key != s, 0) && !(a = leaf_of(T, cur, s))) {
		note_unrecorded(cur, n);
		return;
	}
	if (!side_insert((uintptr_t)p, rec << NODE_BITS | a->self, &old)) {
		note_unrecorded(NULL, n);
		return;
	}
	if (__builtin_expect(old.addr != 0, 0))
		charge_stale(T, &old);
	if (__builtin_expect(rec == SIZE_SAT, 0))
		big_put((uintptr_t)p, n);
	h = a->u.heap;
	c = size_class(n);
	h->a[c]++;
	h->b[c] += n;
	bin_count(T, n, 0);
	vm_alloc(n);
	if (__builtin_expect(__atomic_load_n(&g_tp_attn, __ATOMIC_RELAXED) & TP_ATTN_ALLOCS, 0))
		tp_attention(l, a, p, n);
}

/* Forgets block p (about to be freed); its size, 0 if unknown. in_rt is
   set. */
static inline __attribute__((always_inline)) u64 note_free(struct rt_local *l, void *p)
{
	struct rt_thread *T = thread_get(l);
	struct ent e;
	return side_remove((uintptr_t)p, &e) ? charge_free(T, &e) : 0;
}

/* Block a's slot in tree t (0 fine, 1 coarse), as radix_slot(t, a, 0)
   finds it, through the thread's leaf cache (rt_local.leaf: the leaf
   the walk found last and a >> its span, ~0 for none), whose span (1 MiB of addresses, resp. 4 MiB) holds most of a
   heap's blocks in turn; leaves are never freed. A hit is a compare and
   the slot's offset, not the walk's two dependent loads and three
   tests. in_rt set (a signal handler's allocation does not come here). */
static inline __attribute__((always_inline)) void *cached_slot(struct rt_local *l, int t, uintptr_t a)
{
	unsigned g = t ? GRAN_COARSE : GRAN_FINE;
	uintptr_t off = slot_index(t, a) << slot_shift(t);
	char *sl;
	if (__builtin_expect(a >> (g + LEAF_BITS) == l->leaf[t].tag, 1)) {
		sl = l->leaf[t].at + off;
		if (!sl)
			__builtin_unreachable(); /* no test of it on the hit */
		return sl;
	}
	if (!(sl = radix_slot(t, a, 0)))
		return NULL;
	l->leaf[t].tag = a >> (g + LEAF_BITS);
	l->leaf[t].at = sl - off;
	return sl;
}

/* The fast paths: an allocation or free in the common state, nothing in
   g_tp_attn (the real allocator called directly, no mark, no tracepoint
   request, no CAS needed for a slot), the thread set up with its bins, no declared allocator's call
   running, the A cache hit, the slot's mid and leaf there and, for an
   allocation, the slot and the spill table empty. Whatever the number of threads, they write
   only the thread's own state (bins, the heap timeline's record, its
   nodes' counters) but for a block of another thread's node, whose free
   is counted atomically in that node's rf and rg, and the block's slot.
   They count what note_alloc and charge_free count, without what that
   state makes moot: generations, errno (nothing here sets it). Both
   trees' paths are inline; a free reads both trees' slots at once and
   takes the one that holds its block. Anything else takes the general
   path, from the start: a fast path that gives up has written nothing. */

/* Counts the free of a block of n bytes of node nd in its heap counters
   and bins b, as charge_free does (the heap timeline apart): a block of
   another thread's node atomically, in rf and rg. l is &rt_local, read
   once by the caller (each TLS access here costs a call's clobbers). The
   caller counts the heap timeline after: a peak snapshot (vm_down) reads
   the counters with this free. */
static inline __attribute__((always_inline)) void free_count(struct rt_local *l, const struct rt_node *nd, struct bin *b, u64 n)
{
	struct heapc *h = nd->u.heap;
	u32 c = size_class(n);
	bin_add(b, n, 1);
	if (__builtin_expect(nd->thread != l->num, 0)) {
		__atomic_fetch_add(&h->rf[c], 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&h->rg[c], n, __ATOMIC_RELAXED);
	} else {
		h->f[c]++;
		h->g[c] += n;
	}
}

/* note_alloc keeping errno, in_rt set: the general path of an allocation
   the fast path made but could not record, and of the rarely called
   allocation functions (RT_ALLOC_RARE). */
static __attribute__((noinline)) void note_kept(struct rt_local *l, const struct __weave_site *s, void *p, u64 n)
{
	int *ep = rt_errno(l), e = *ep;
	note_alloc(l, s, p, n);
	*ep = e;
}

/* __weave_malloc's rare ends, out of line so that its fast path makes
   no call after the real malloc's and keeps only what it needs of its
   own across that one: block r of n bytes at site s, which the fast
   path could not record, to the general path; the heap timeline's slow
   path for it. Each returns r, with in_rt cleared. */
static __attribute__((noinline)) void *malloc_kept(struct rt_local *l, const struct __weave_site *s, void *r, u64 n)
{
	note_kept(l, s, r, n);
	rt_exit(l);
	return r;
}

static __attribute__((noinline)) void *malloc_up(struct rt_local *l, void *r, u64 n)
{
	vm_up(l->vm, n);
	rt_exit(l);
	return r;
}

/* The fast path of an allocation (see above) from the real malloc's
   block r (not NULL) of n bytes at site s to its return, in_rt
   cleared: the A cache's leaf, its slot (an empty one, and the spill
   table empty), its counts as note_alloc counts them. */
static inline __attribute__((always_inline)) void *alloc_fast(struct rt_local *l, const struct __weave_site *s, void *r, u64 n)
{
	struct rt_node *a = ((struct rt_node *)(void *)__weave_tls.cur)->u.acache;
	struct bin *b = l->bins; /* read again: nothing is kept across the real malloc but s and n */
	uintptr_t ad = (uintptr_t)r;
	struct heapc *h;
	u32 c;
	if (__builtin_expect(a->pub.key != s || !b, 0))
		return malloc_kept(l, s, r, n);
	if (__builtin_expect(n >= COARSE_MIN, 0)) {
		void *sl;
		if (n >= SLOT_SIZE_MAX || !(sl = cached_slot(l, 1, ad)) || slot_load(1, sl) ||
		    __atomic_load_n(&g_spill_count, __ATOMIC_RELAXED))
			return malloc_kept(l, s, r, n);
		slot_store(1, sl, coarse_make(ad, n, a->self));
	} else {
		u32 *sl;
		if (__builtin_expect(a->self > FINE_NODE_MAX || (sl = cached_slot(l, 0, ad)) == NULL, 0) ||
		    __builtin_expect(__atomic_load_n(sl, __ATOMIC_RELAXED) != 0, 0) ||
		    __builtin_expect(__atomic_load_n(&g_spill_count, __ATOMIC_RELAXED) != 0, 0))
			return malloc_kept(l, s, r, n);
		__atomic_store_n(sl, fine_make(ad, (u32)n, a->self), __ATOMIC_RELAXED);
	}
	h = a->u.heap;
	c = size_class(n);
	bin_add(b, n, 0);
	h->a[c]++;
	h->b[c] += n;
	if (__builtin_expect(!vm_alloc_try(l->vm, n), 0))
		return malloc_up(l, r, n);
	rt_exit(l);
	return r;
}

/* Takes block ad out of its slot sl (may be NULL) of the fine tree,
   resp. the coarse tree: 1 and the node and size it held, or 0 if the
   slot did not hold it. */
static inline __attribute__((always_inline)) int fine_take(u32 *sl, uintptr_t ad, u32 *ni, u64 *n)
{
	u32 v;
	if (__builtin_expect(!sl || !fine_holds(v = __atomic_load_n(sl, __ATOMIC_RELAXED), ad), 0))
		return 0;
	__atomic_store_n(sl, 0, __ATOMIC_RELAXED);
	*ni = fine_node(v);
	*n = fine_size(v);
	return 1;
}

static inline __attribute__((always_inline)) int coarse_take(u64 *sl, uintptr_t ad, u32 *ni, u64 *n)
{
	u64 v;
	if (__builtin_expect(!sl || !coarse_holds(v = __atomic_load_n(sl, __ATOMIC_RELAXED), ad), 0))
		return 0;
	__atomic_store_n(sl, 0, __ATOMIC_RELAXED);
	*ni = coarse_node(v);
	*n = coarse_size(v);
	return 1;
}

/* Block ad's slot of tree t through the thread's leaf cache, as
   cached_slot finds it on a hit, else g_no_slot (0: it holds no block),
   to be read only: no walk, no branch. */
static const u64 g_no_slot;
static inline __attribute__((always_inline)) const void *leaf_slot(const struct rt_local *l, int t, uintptr_t a)
{
	unsigned g = t ? GRAN_COARSE : GRAN_FINE;
	/* In integers: the leaf's address is NULL until cached (an offset
	   from NULL is undefined, and -fsanitize=undefined says so). */
	uintptr_t sl = (uintptr_t)l->leaf[t].at + (slot_index(t, a) << slot_shift(t));
	return a >> (g + LEAF_BITS) == l->leaf[t].tag ? (const void *)sl : (const void *)&g_no_slot;
}

/* The end of a fast-path free: in_rt cleared, then the real free, the
   function's last call (a jump), through free_last (interpose.c), which
   is the C library's free itself: it calls nothing the runtime
   interposes, so in_rt need not cover it (another allocator's is called
   with in_rt set, as on the general path). p was recorded, so it is not
   a boot block. */
static inline __attribute__((always_inline)) void free_done(struct rt_local *l, void *p)
{
	rt_exit(l);
	g_real.free_last(p);
}

static void free_general(void *p);

/* __weave_free's rare ends, out of line so that its fast path makes no
   call but the last and keeps no register across one (no saves): neither
   slot the leaf caches gave held block p (a leaf not cached, a node over
   FINE_NODE_MAX, the spill table, a block never recorded), so both trees
   are walked, else the general path; the heap timeline's slow path for a
   free of n bytes; the scrub of a block of more than 64 bytes. The leaf
   that held p is cached for the next free only if p is the thread's own:
   another thread's block is in that thread's arena, and caching its leaf
   would send the thread's next free of its own here too. */
static __attribute__((noinline)) void free_miss(struct rt_local *l, struct bin *b, void *p)
{
	uintptr_t ad = (uintptr_t)p;
	char *sl = radix_slot(0, ad, 0);
	const struct rt_node *nd;
	int t = 0;
	u32 ni;
	u64 n;
	if (!fine_take((u32 *)(void *)sl, ad, &ni, &n) && (t = 1, !coarse_take((u64 *)(void *)(sl = radix_slot(1, ad, 0)), ad, &ni, &n))) {
		rt_exit(l);
		free_general(p);
		return;
	}
	nd = node_at(ni);
	if (nd->thread == l->num) {
		l->leaf[t].tag = ad >> ((t ? GRAN_COARSE : GRAN_FINE) + LEAF_BITS);
		l->leaf[t].at = sl - (slot_index(t, ad) << slot_shift(t));
	}
	free_count(l, nd, b, n);
	vm_free_in(l->vm, n);
	scrub_freed(p, n);
	free_done(l, p);
}

static __attribute__((noinline)) void free_down(struct rt_local *l, void *p, u64 n)
{
	vm_down(l->vm, n);
	scrub_freed(p, n);
	free_done(l, p);
}

static __attribute__((noinline)) void free_scrub_big(struct rt_local *l, void *p, u64 n)
{
	scrub_big_inline(p, n);
	free_done(l, p);
}

/* The fast path of a free (see above) from in_rt set to the real free:
   block p's slots in both trees, read at once through the leaf caches
   (the fine tree's set here when it misses, as an allocation sets them:
   a heap of several MiB moves between leaves; the coarse tree's in
   free_miss), the one that holds it cleared, its node and size counted
   as free_count counts them. Under the fast paths' allocator no two
   recorded blocks share an address (frees do not bypass the runtime), so
   at most one of the two holds p. Before, a free read glibc's chunk
   header first to choose one tree: on mixed sizes that choice went
   either way at random and was made only once the header's line came,
   in the common case of a block freed long after it was written a miss
   (server: 40% of __weave_free's time); now the branch waits for the
   slots, whose lines are dense and warm, and the header, which the real
   free reads first, is prefetched. */
static inline __attribute__((always_inline)) void free_fast(struct rt_local *l, struct bin *b, void *p)
{
	uintptr_t ad = (uintptr_t)p;
	const u32 *fs = cached_slot(l, 0, ad);
	const u64 *cs = leaf_slot(l, 1, ad);
	u32 vf, ni;
	u64 vc, n;
	__builtin_prefetch((char *)p - sizeof(wsize));
	if (__builtin_expect(!fs, 0))
		fs = (const u32 *)(const void *)&g_no_slot;
	vf = __atomic_load_n(fs, __ATOMIC_RELAXED);
	vc = __atomic_load_n(cs, __ATOMIC_RELAXED);
	if (__builtin_expect(fine_holds(vf, ad), 1)) {
		__atomic_store_n((u32 *)fs, 0, __ATOMIC_RELAXED);
		ni = fine_node(vf);
		n = fine_size(vf);
	} else if (__builtin_expect(coarse_holds(vc, ad), 1)) {
		__atomic_store_n((u64 *)cs, 0, __ATOMIC_RELAXED);
		ni = coarse_node(vc);
		n = coarse_size(vc);
	} else {
		free_miss(l, b, p);
		return;
	}
	free_count(l, node_at(ni), b, n);
	if (__builtin_expect(!vm_free_try(l->vm, n), 0)) {
		free_down(l, p, n);
		return;
	}
	if (n > 64) {
		if (scrub_big_due()) {
			free_scrub_big(l, p, n);
			return;
		}
	} else {
		scrub_small(p, n);
	}
	free_done(l, p);
}

/* Whether the fast paths may run now (see above), the thread's bins
   apart; outer matters to an allocation only. */
static inline int fast_state(struct rt_local *l, int alloc)
{
	return __builtin_expect((l->in_rt | (alloc ? l->outer : 0) | __atomic_load_n(&g_tp_attn, __ATOMIC_RELAXED)) == 0, 1);
}

/* The allocation advice. Pattern: if re-entered, call the real function
   only; else set in_rt, call the real function, keep its errno across the
   bookkeeping. */

#define RT_ALLOC(call, size)                                        \
	struct rt_local *l = &rt_local;                             \
	void *r;                                                    \
	int e;                                                      \
	if (__builtin_expect(l->in_rt, 0))                          \
		return call;                                        \
	rt_enter(l);                                                \
	r = call;                                                   \
	if (__builtin_expect(r != NULL, 1)) {                       \
		int *ep = rt_errno(l);                              \
		e = *ep;                                            \
		note_alloc(l, s, r, size);                          \
		*ep = e;                                            \
	} else                                                      \
		note_refused(size);                                 \
	rt_exit(l);                                                 \
	return r

/* RT_ALLOC for the functions programs call rarely: the bookkeeping out
   of line (note_kept), not a copy of note_alloc in each (3-5 KiB of code
   each; these and interpose.c's HIDDEN_ALLOC_RARE took the runtime's
   code from 232 KiB to 207, and its pages are resident). */
#define RT_ALLOC_RARE(call, size)           \
	struct rt_local *l = &rt_local;     \
	void *r;                            \
	if (__builtin_expect(l->in_rt, 0))  \
		return call;                \
	rt_enter(l);                        \
	r = call;                           \
	if (__builtin_expect(r != NULL, 1)) \
		note_kept(l, s, r, size);   \
	else                                \
		note_refused(size);         \
	rt_exit(l);                         \
	return r

static __attribute__((noinline)) void *malloc_general(const struct __weave_site *s, wsize n)
{
	RT_ALLOC(lib_malloc(n), n);
}

void *__weave_malloc(const struct __weave_site *s, wsize n)
{
	struct rt_local *l = &rt_local;
	void *r;
	/* The bins are tested after the real malloc (alloc_fast): a thread
	   not set up, whose first allocation sets it up, goes from there to
	   note_alloc as it would from malloc_general. */
	if (!fast_state(l, 1))
		return malloc_general(s, n);
	rt_enter(l);
	r = g_real.malloc(n); /* real_direct: ATTN_LIB is clear */
	if (__builtin_expect(r == NULL, 0)) {
		note_refused(n);
		rt_exit(l);
		return r;
	}
	return alloc_fast(l, s, r, n);
}

void *__weave_calloc(const struct __weave_site *s, wsize n, wsize size)
{
	/* Success implies n * size did not overflow. */
	RT_ALLOC(calloc(n, size), (u64)n * size);
}

void *__weave_aligned_alloc(const struct __weave_site *s, wsize align, wsize n)
{
	RT_ALLOC_RARE(aligned_alloc(align, n), n);
}

void *__weave_memalign(const struct __weave_site *s, wsize align, wsize n)
{
	RT_ALLOC_RARE(memalign(align, n), n);
}

void *__weave_valloc(const struct __weave_site *s, wsize n)
{
	RT_ALLOC_RARE(valloc(n), n);
}

void *__weave_pvalloc(const struct __weave_site *s, wsize n)
{
	RT_ALLOC_RARE(pvalloc(n), n);
}

char *__weave_strdup(const struct __weave_site *s, const char *str)
{
	RT_ALLOC(strdup(str), strlen(r) + 1);
}

char *__weave_strndup(const struct __weave_site *s, const char *str, wsize n)
{
	RT_ALLOC_RARE(strndup(str, n), strlen(r) + 1);
}

int __weave_posix_memalign(const struct __weave_site *s, void **pp, wsize align, wsize n)
{
	struct rt_local *l = &rt_local;
	int rc;
	if (l->in_rt)
		return posix_memalign(pp, align, n);
	rt_enter(l);
	rc = posix_memalign(pp, align, n);
	if (rc == 0)
		note_kept(l, s, *pp, n);
	rt_exit(l);
	return rc;
}

/* A free or realloc of block p the runtime has no record of, outside a
   declared allocator's call: maybe a block an allocator of pointcuts got
   from malloc and handed out past a header, freed by the header's
   address, not through a declared deallocator (a debugging allocator
   declared malloc and alloc_size). The records of blocks starting in
   p's first NESTED_MAX bytes go with it, counted freed: left, such a
   record went stale, and the free of a smaller block later given its
   address scrubbed the record's size past that block's end (glibc:
   "free(): invalid next size", the woven program aborted). in_rt set;
   the callers test outer (a declared call frees its block itself). */
#define NESTED_MAX 256
static __attribute__((noinline)) void free_nested(struct rt_local *l, void *p)
{
	uintptr_t a = (uintptr_t)p, k, n;
	struct ent e;
	int *ep, err;
	/* Not where the process's free is not the runtime's: it may be the
	   program's, whose header glibc's malloc_usable_size read (SIGSEGV). */
	if (boot_owns(p) || !frees_seen())
		return;
	ep = rt_errno(l);
	err = *ep;
	n = malloc_usable_size(p);
	for (k = 8; k < n && k < NESTED_MAX; k += 8)
		if (side_remove(a + k, &e))
			charge_free(thread_get(l), &e);
	*ep = err;
}

static __attribute__((noinline)) void free_general(void *p)
{
	struct rt_local *l = &rt_local;
	int e;
	if (__builtin_expect(l->in_rt, 0)) {
		free(p);
		return;
	}
	rt_enter(l);
	if (p) {
		/* The allocator will read the chunk header (glibc: just below
		   p); let that miss overlap the side table's. */
		int *ep = rt_errno(l);
		__builtin_prefetch((char *)p - sizeof(wsize));
		u64 n;
		e = *ep;
		n = note_free(l, p);
		if (!frees_bypass()) /* else n may be a stale record's, past p's end */
			scrub_freed(p, n);
		if (__builtin_expect(!n && !l->outer, 0))
			free_nested(l, p);
		if (__builtin_expect(held_due(n), 0) && !frees_bypass()) {
			held_free(p, n);
			p = NULL; /* held, or given back already */
		}
		*ep = e;
	}
	lib_free(p);
	rt_exit(l);
}

void __weave_free(const struct __weave_site *s, void *p)
{
	struct rt_local *l = &rt_local;
	struct bin *b = fast_state(l, 0) ? l->bins : NULL;
	(void)s;
	if (__builtin_expect(!b, 0)) {
		free_general(p);
		return;
	}
	rt_enter(l);
	free_fast(l, b, p);
}

/* realloc and reallocarray (m == 0: realloc(p, n)). */
static void *re_alloc(const struct __weave_site *s, void *p, wsize n, wsize m, int array)
{
	struct rt_local *l = &rt_local;
	struct rt_thread *T;
	struct ent old;
	wsize total = n;
	void *r;
	int e, known, *ep;

#define REAL (array ? reallocarray(p, n, m) : realloc(p, n))
	if (l->in_rt)
		return REAL;
	rt_enter(l);
	if (array && __builtin_mul_overflow(n, m, &total)) {
		r = REAL; /* fails with ENOMEM, nothing to record */
		note_refused(0);
		rt_exit(l);
		return r;
	}
	if (!p) {
		/* realloc(NULL, n) is malloc(n) (gcc makes it so anyway): straight
		   to the real one. */
		r = array ? REAL : lib_malloc(n);
		if (r) {
			ep = rt_errno(l);
			e = *ep;
			note_alloc(l, s, r, total);
			*ep = e;
		} else
			note_refused(total);
		rt_exit(l);
		return r;
	}
	/* Forget p before the real call: once it is freed its address may be
	   handed to another thread, which will record it. */
	ep = rt_errno(l);
	e = *ep;
	T = thread_get(l);
	known = side_remove((uintptr_t)p, &old);
	if (__builtin_expect(!known && !l->outer, 0))
		free_nested(l, p);
	*ep = e;
	if (known && realloc_moves(&old, p, total))
		r = realloc_scrubbed(p, old.val >> NODE_BITS, total);
	else
		r = REAL;
	e = *ep;
	if (r || total == 0) {
		/* Moved, resized in place, or (glibc, size 0) freed. */
		if (known)
			charge_free(T, &old);
		if (r)
			note_alloc(l, s, r, total);
	} else {
		/* Failed: p is still allocated. */
		struct ent stale;
		if (known)
			side_insert(old.addr, old.val, &stale);
		note_refused(total);
	}
	*ep = e;
	rt_exit(l);
	return r;
#undef REAL
}

void *__weave_realloc(const struct __weave_site *s, void *p, wsize n)
{
	/* realloc(NULL, n) is malloc(n), with its fast path (Lua allocates so). */
	if (!p)
		return __weave_malloc(s, n);
	return re_alloc(s, p, n, 0, 0);
}

void *__weave_reallocarray(const struct __weave_site *s, void *p, wsize n, wsize size)
{
	return re_alloc(s, p, n, size, 1);
}

