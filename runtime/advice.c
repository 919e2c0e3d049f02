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

/* A block about to go back to the allocator: its bytes zeroed when the
   leak scan will run, if it is no larger than SCRUB_MAX. A block the
   allocator hands out again keeps the bytes its program did not write
   (glibc's writes only its first 16): memcheck calls them undefined and
   never reads them as pointers; read as such, a stale pointer in a lost
   block made what it pointed to look indirectly lost (a struct freed with
   its array, its memory reused). glibc's tcache and fastbins hand small
   blocks out again at once; a larger block keeps its bytes, so a stale
   pointer in its reused memory can still differ from memcheck (zeroing it
   would cost a memset of the block on every free). A block under 8
   bytes holds no pointer. */
#define SCRUB_MAX 256
typedef u64 scrub16 __attribute__((vector_size(16), aligned(8), may_alias));
typedef u64 scrub8 __attribute__((may_alias));

/* scrub_freed's blocks of 65 to SCRUB_MAX bytes. 16-byte stores from
   each end, which overlap in the middle (as memset does), here and below:
   a loop costs more (or becomes a call to memset). */
static __attribute__((noinline)) void scrub_big(void *p, u64 n)
{
	const scrub16 z = {0};
	scrub16 *a = p, *e = (scrub16 *)((char *)p + n) - 1;
	if (n > 128) {
		a[7] = a[6] = a[5] = a[4] = z;
		e[-7] = e[-6] = e[-5] = e[-4] = z;
	}
	a[3] = a[2] = a[1] = a[0] = z;
	e[-3] = e[-2] = e[-1] = e[0] = z;
}

static inline __attribute__((always_inline)) void scrub_freed(void *p, u64 n)
{
	const scrub16 z = {0};
	scrub16 *a = p, *e = (scrub16 *)((char *)p + n) - 1;
	if (!__builtin_expect(g_scrub, 1) || n > SCRUB_MAX || n < 8)
		return;
	if (n < 16) {
		*(scrub8 *)p = 0;
		return;
	}
	if (n > 64) {
		scrub_big(p, n);
		return;
	}
	if (n > 32)
		a[1] = e[-1] = z;
	a[0] = e[0] = z;
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

/* A stale entry that an allocation replaced: counted as freed. */
static __attribute__((noinline)) void charge_stale(struct rt_thread *T, const struct ent *old)
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
	if (__builtin_expect(a->pub.key != s, 0) && !(a = leaf_of(T, cur, s)))
		return;
	if (!side_insert((uintptr_t)p, rec << NODE_BITS | a->self, &old))
		return;
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
   trees' paths are inline; a free looks first in the tree coarse_hint
   names, so it reads one slot, not two. Anything else takes the general
   path, from the start: a fast path that gives up has written nothing. */

/* Counts block n bytes allocated (is_free 0) or freed at node nd's heap
   counters and bins b, as note_alloc and charge_free do: a free of
   another thread's node atomically, in rf and rg. l is &rt_local, read
   once by the caller (each TLS access here costs a call's clobbers). */
static inline __attribute__((always_inline)) void fast_count(struct rt_local *l, const struct rt_node *nd, struct bin *b, u64 n,
							     int is_free)
{
	struct heapc *h = nd->u.heap;
	int c = size_class(n);
	/* The heap timeline last: a peak snapshot (vm_up) reads the counters
	   with this allocation, and nothing is live across its slow path's
	   call. */
	bin_add(b, n, is_free);
	if (is_free && __builtin_expect(nd->thread != l->num, 0)) {
		__atomic_fetch_add(&h->rf[c], 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&h->rg[c], n, __ATOMIC_RELAXED);
		vm_free_in(l->vm, n);
	} else if (is_free) {
		h->f[c]++;
		h->g[c] += n;
		vm_free_in(l->vm, n);
	} else {
		h->a[c]++;
		h->b[c] += n;
		vm_alloc_in(l->vm, n);
	}
}

/* alloc_fast for a block of COARSE_MIN bytes or more. */
static inline __attribute__((always_inline)) int alloc_coarse(struct rt_local *l, struct bin *b, struct rt_node *a, uintptr_t ad, u64 n)
{
	void *sl;
	if (n >= SLOT_SIZE_MAX || !(sl = radix_slot(1, ad, 0)) || slot_load(1, sl) ||
	    __atomic_load_n(&g_spill_count, __ATOMIC_RELAXED))
		return 0;
	slot_store(1, sl, slot_make(1, ad, n << NODE_BITS | a->self));
	fast_count(l, a, b, n, 0);
	return 1;
}

/* Records block p (not NULL) of n bytes at site s; 0 if it cannot. */
static inline __attribute__((always_inline)) int alloc_fast(struct rt_local *l, struct bin *b, const struct __weave_site *s, void *p, u64 n)
{
	struct rt_node *a = ((struct rt_node *)(void *)__weave_tls.cur)->u.acache;
	uintptr_t ad = (uintptr_t)p;
	u32 *sl;
	if (__builtin_expect(a->pub.key != s, 0))
		return 0;
	if (__builtin_expect(n >= COARSE_MIN, 0))
		return alloc_coarse(l, b, a, ad, n);
	if (__builtin_expect(a->self > FINE_NODE_MAX, 0))
		return 0;
	if (__builtin_expect((sl = fine_slot(ad)) == NULL, 0))
		return 0;
	if (__builtin_expect(__atomic_load_n(sl, __ATOMIC_RELAXED) != 0, 0))
		return 0;
	if (__builtin_expect(__atomic_load_n(&g_spill_count, __ATOMIC_RELAXED) != 0, 0))
		return 0;
	__atomic_store_n(sl, fine_make(ad, (u32)n, a->self), __ATOMIC_RELAXED);
	fast_count(l, a, b, n, 0);
	return 1;
}

/* free_fast in the fine tree, whose slot for block ad is sl (may be
   NULL): 1 if it held the block. */
static inline __attribute__((always_inline)) int free_in_fine(struct rt_local *l, struct bin *b, uintptr_t ad, u32 *sl)
{
	u32 v, n;
	if (__builtin_expect(!sl, 0) || !fine_holds(v = __atomic_load_n(sl, __ATOMIC_RELAXED), ad))
		return 0;
	__atomic_store_n(sl, 0, __ATOMIC_RELAXED);
	n = fine_size(v);
	fast_count(l, node_at(fine_node(v)), b, n, 1);
	scrub_freed((void *)ad, n);
	return 1;
}

/* free_fast in the coarse tree, then, if fsl is not NULL, in the fine
   tree's slot fsl: 1 if one held block ad. */
static inline __attribute__((always_inline)) int free_coarse(struct rt_local *l, struct bin *b, uintptr_t ad, u32 *fsl)
{
	void *sl = radix_slot(1, ad, 0);
	u64 v, val;
	if (!sl || !slot_holds(1, v = slot_load(1, sl), ad) || !((val = slot_val(1, v)) & NODE_MASK))
		return fsl && free_in_fine(l, b, ad, fsl);
	slot_store(1, sl, 0);
	fast_count(l, node_at((u32)(val & NODE_MASK)), b, val >> NODE_BITS, 1);
	scrub_freed((void *)ad, val >> NODE_BITS);
	return 1;
}

/* free_coarse out of line, for a block the fine tree did not hold. */
static __attribute__((noinline)) int free_coarse_only(struct rt_local *l, struct bin *b, uintptr_t ad)
{
	return free_coarse(l, b, ad, NULL);
}

/* Whether block ad is likely in the coarse tree. Under the C library's
   malloc (g_hint_mask all ones: g_spaced) the size word of its chunk,
   just below it, says: 160 bytes or more (the flags in its low 3 bits
   change no comparison with a multiple of 16) is a request of 137 or
   more (glibc's chunk is the request + 8, rounded up to 16), so a free of
   a block of COARSE_MIN bytes or more reads one tree's slot, not a miss
   in the fine tree's first. It is a hint: a chunk memalign or a shrinking
   realloc left larger, or one of 144 bytes (requests 121-136), may be in
   the other tree, which free_fast tries next. free reads the word anyway,
   so its cache miss is only moved. The mask is 0 otherwise, and the
   test false for NULL. */
static inline int coarse_hint(uintptr_t ad)
{
	return (ad & __atomic_load_n(&g_hint_mask, __ATOMIC_RELAXED)) && ((const wsize *)ad)[-1] >= 160;
}

/* Forgets and counts the free of block p, with bins b; 0 if it cannot. */
static inline __attribute__((always_inline)) int free_fast(struct rt_local *l, struct bin *b, void *p)
{
	uintptr_t ad = (uintptr_t)p;
	u32 *fsl = fine_slot(ad);
	/* The fine slot's cache miss overlaps the chunk header's. */
	if (fsl)
		__builtin_prefetch(fsl);
	if (coarse_hint(ad))
		return free_coarse(l, b, ad, fsl);
	return free_in_fine(l, b, ad, fsl) || free_coarse_only(l, b, ad);
}

/* The thread's bins if the fast paths may run now (see above), else
   NULL; outer matters to an allocation only. */
static inline struct bin *fast_bins(struct rt_local *l, int alloc)
{
	if (__builtin_expect((l->in_rt | (alloc ? l->outer : 0) | __atomic_load_n(&g_tp_attn, __ATOMIC_RELAXED)) != 0, 0))
		return NULL;
	return l->bins;
}

/* note_alloc keeping errno, in_rt set: the general path of an allocation
   the fast path made but could not record. */
static __attribute__((noinline)) void note_kept(struct rt_local *l, const struct __weave_site *s, void *p, u64 n)
{
	int *ep = rt_errno(l), e = *ep;
	note_alloc(l, s, p, n);
	*ep = e;
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
	}                                                           \
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
	rt_exit(l);                         \
	return r

static __attribute__((noinline)) void *malloc_general(const struct __weave_site *s, wsize n)
{
	RT_ALLOC(lib_malloc(n), n);
}

void *__weave_malloc(const struct __weave_site *s, wsize n)
{
	struct rt_local *l = &rt_local;
	struct bin *b = fast_bins(l, 1);
	void *r;
	if (__builtin_expect(!b, 0))
		return malloc_general(s, n);
	rt_enter(l);
	r = g_real.malloc(n); /* real_direct: ATTN_LIB is clear */
	if (r && !alloc_fast(l, b, s, r, n))
		note_kept(l, s, r, n);
	rt_exit(l);
	return r;
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
		e = *ep;
		scrub_freed(p, note_free(l, p));
		*ep = e;
	}
	lib_free(p);
	rt_exit(l);
}

void __weave_free(const struct __weave_site *s, void *p)
{
	struct rt_local *l = &rt_local;
	struct bin *b = fast_bins(l, 0);
	(void)s;
	if (__builtin_expect(!b, 0)) {
		free_general(p);
		return;
	}
	rt_enter(l);
	if (__builtin_expect(!free_fast(l, b, p), 0)) {
		rt_exit(l);
		free_general(p);
		return;
	}
	g_real.free(p); /* real_direct (ATTN_LIB is clear); p was recorded, so not a boot block */
	rt_exit(l);
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
		}
		rt_exit(l);
		return r;
	}
	/* Forget p before the real call: once it is freed its address may be
	   handed to another thread, which will record it. */
	ep = rt_errno(l);
	e = *ep;
	T = thread_get(l);
	known = side_remove((uintptr_t)p, &old);
	*ep = e;
	r = REAL;
	e = *ep;
	if (r || total == 0) {
		/* Moved, resized in place, or (glibc, size 0) freed. */
		if (known)
			charge_free(T, &old);
		if (r)
			note_alloc(l, s, r, total);
	} else if (known) {
		/* Failed: p is still allocated. */
		struct ent stale;
		side_insert(old.addr, old.val, &stale);
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

