//go:build ignore

/* thread.c: a thread's set-up (its T record, root node, pseudo-stack,
   bins, heap and time accounts) and its exit: the runtime's side of a
   thread, which ties the pseudo-stack (pseudostack/) to the allocation
   advice, the heap timeline (vmmap/), timing and the leak scan.

   Allocation before any woven function ran, or in a thread that never ran
   woven code, is charged to the thread's root (threads are set up lazily
   from the allocation and free paths too).

   Maximum pseudo-stack depth MAX_DEPTH: deeper enters do not push. The
   stack is an address-space reservation (PROT_NONE) committed on demand
   with mprotect, so it never moves: an enter interrupted by a signal
   handler whose woven code grows the stack still writes to valid memory. */

#include "internal.h"

/* A thread's map holds its bins (TBINS_BYTES, rows in reverse order:
   internal.h), its first child cache (CC_FIRST entries, at CC_AT) and
   its stack of timed frames, in that order, so that a thread that
   allocates sizes up to 511 bytes (and times frames 21 deep or less)
   makes one page resident: the map's second, which holds bins 0-511,
   the cache and the stack's first levels (apart, the cache's entries alone, spread by
   their hash, took 2-3 pages of a thread's 24 KiB, the stack one, and
   64-bit bins of 16 bytes a row two pages more: with 64 threads alive,
   the runtime's maps were 35 KiB a thread; now 4). Larger sizes write
   the first page, deeper timed frames the next ones, as they come: the pages
   become resident as they are written. The
   larger cache that replaces the first when it keeps missing (cc_grow)
   is a map of its own, TMAP_BYTES. Entries are written only inside
   rt_enter/rt_exit, where a signal handler's woven code does not write
   them. */
#define CC_FIRST 64u
#define CC_BYTES ((wsize)__WEAVE_CC_SIZE * sizeof(struct __weave_cc))
#define TMAP_BYTES CC_BYTES
#define CC_AT 6144u
#define HEAD_BYTES (CC_AT + CC_FIRST * sizeof(struct __weave_cc))
_Static_assert(CC_AT >= TBINS_BYTES && CC_AT % 4096 == 2048, "bins 0-511 (2 KiB) and the cache on one page");
#define HEAD_SLOTS (HEAD_BYTES / sizeof(struct __weave_slot))
_Static_assert(HEAD_BYTES % sizeof(struct __weave_slot) == 0, "the pseudo-stack's slots aligned in the thread's map");

/* n rounded up to a whole number of pages. */
static wsize page_up(wsize n)
{
	wsize pg = (wsize)getauxval(AT_PAGESZ);
	if (!pg)
		pg = 4096;
	return (n + pg - 1) / pg * pg;
}

/* Reserves the thread's map, with room for up to MAX_DEPTH levels of
   pseudo-stack (fewer if the address space is short), and commits its
   head and the first STACK_INIT levels. *slots: its size in slots. */
static struct __weave_slot *tmap_reserve(wsize *slots)
{
	wsize n = MAX_DEPTH;
	for (; n >= STACK_INIT; n /= 2) {
		wsize bytes = HEAD_BYTES + n * sizeof(struct __weave_slot);
		void *p = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			continue;
		rt_own(p, bytes);
		if (mprotect(p, page_up(HEAD_BYTES + STACK_INIT * sizeof(struct __weave_slot)), PROT_READ | PROT_WRITE) != 0) {
			rt_unmap(p, bytes);
			return NULL;
		}
		*slots = bytes / sizeof(struct __weave_slot);
		return p;
	}
	return NULL;
}

static int stack_grow(struct rt_thread *T, struct __weave_thread *t)
{
	wsize cap = t->cap, ncap = cap * 2, max = T->reserved - HEAD_SLOTS;
	char *from = (char *)T->stack + page_up(HEAD_BYTES + cap * sizeof *t->stack);
	if (cap >= max)
		return 0;
	if (ncap > max)
		ncap = max;
	if (mprotect(from, page_up(HEAD_BYTES + ncap * sizeof *t->stack) - (wsize)(from - (char *)T->stack),
		     PROT_READ | PROT_WRITE) != 0)
		return 0;
	t->cap = (unsigned)ncap;
	lim_update(t);
	return 1;
}

/* Replaces the thread's first child cache by one of __WEAVE_CC_SIZE
   entries, its entries copied (weave.h: the cache before its mask). The
   first stays where it is, in the thread's map: woven code interrupted
   between its read of cc and its read of the entry reads it. */
static int cc_grow(struct rt_thread *T, struct __weave_thread *t)
{
	struct __weave_cc *cc = T->cc ? NULL : rt_map(CC_BYTES);
	u32 i;
	T->cc_lost = 0;
	if (!cc)
		return 0;
	for (i = 0; i <= t->ccmask; i++) {
		const struct __weave_cc *e = &t->cc[i];
		if (e->key)
			cc[__weave_cc_index(e->parent, e->key, __WEAVE_CC_SIZE - 1)] = *e;
	}
	T->cc = cc;
	t->cc = cc;
	fence();
	t->ccmask = __WEAVE_CC_SIZE - 1;
	return 1;
}

/* 1 while one thread is set up: weave.h's x86-64 guard then fills its
   site caches. */
unsigned char __weave_solo;

/* Sets up the calling thread: its root, stack, bins and T record. Called
   with in_rt set, in state ST_NEW. */
static struct rt_thread *thread_setup(struct rt_local *l)
{
	struct __weave_thread *t = &__weave_tls;
	struct rt_thread *T;
	struct rt_node *root = NULL;
	struct __weave_slot *map;
	wsize reserved = 0;

	pthread_once(&g_once, rt_global_init);
	l->errp = &errno;
	l->state = ST_FAILED;
	map = tmap_reserve(&reserved);
	/* A second thread: g_spaced decided (not under g_lock: dlsym takes
	   the dynamic linker's lock, whose holder may be waiting for ours). */
	if (__atomic_load_n(&g_threads, __ATOMIC_ACQUIRE))
		real_ready();
	pthread_mutex_lock(&g_lock);
	/* Only the first thread's woven code fills the x86-64 guard's site
	   caches (weave.h): two threads filling them in turn would pass the
	   cache lines between their cores at every call. */
	__atomic_store_n(&__weave_solo, !g_nthreads, __ATOMIC_RELAXED);
	if (g_nthreads) {
		if (!__atomic_load_n(&g_spaced, __ATOMIC_RELAXED)) {
			__atomic_store_n(&g_claim, 1, __ATOMIC_SEQ_CST); /* see side_put */
			__atomic_fetch_or(&g_tp_attn, ATTN_CLAIM, __ATOMIC_SEQ_CST); /* advice.c's fast paths */
		}
		__atomic_store_n(&g_multi, 1, __ATOMIC_SEQ_CST);
		vm_multi();
	}
	T = arena_line(sizeof *T); /* its owner writes it, others read it */
	if (!T || !map)
		goto fail;
	memset(T, 0, sizeof *T);
	T->num = g_nthreads;
	if (!(T->vm = vm_thread_new()))
		goto fail;
	T->bins = (struct bin *)(void *)((char *)map + CC_AT) - 1; /* row 0, just before the cache */
	T->stack = map;
	T->reserved = reserved;
	if (!chash_grow(T, 1) || !(root = node_new(T, NULL, NULL, KIND_R)))
		goto fail;
	T->root = root->self;
	T->tid = (int)syscall(SYS_gettid);
	g_nthreads++;
	__atomic_store_n(g_threads_tail, T, __ATOMIC_RELEASE); /* vm_leaves_take walks the list */
	g_threads_tail = &T->next;
	pthread_mutex_unlock(&g_lock);

	map[HEAD_SLOTS].node = &root->pub;
	t->stack = map + HEAD_SLOTS;
	t->cc = (struct __weave_cc *)(void *)((char *)map + CC_AT);
	fence();
	t->ccmask = CC_FIRST - 1; /* after the cache (weave.h) */
	t->depth = 0;
	t->cap = STACK_INIT;
	fence();
	__atomic_store_n(&t->cur, &root->pub, __ATOMIC_RELAXED);
	if (g_key_ok)
		pthread_setspecific(g_key, T);
	l->thr = T;
	l->bins = T->bins;
	l->num = T->num;
	l->vm = T->vm;
	l->state = ST_LIVE;
	time_thread_setup(T, t);
	lim_update(t); /* after the timing byte's set-up */
	if (T->num)
		ctl_threads(); /* a second thread: the control channel (tracepoints/control.c) */
	return T;
fail:
	/* The arena record and any node indices taken are lost: harmless. */
	pthread_mutex_unlock(&g_lock);
	if (map)
		rt_unmap(map, reserved * sizeof *map);
	return NULL;
}

static inline struct rt_thread *thread_get(struct rt_local *l)
{
	if (__builtin_expect(l->thr != NULL, 1))
		return l->thr;
	return l->state == ST_NEW ? thread_setup(l) : NULL;
}

/* pthread key destructor: the thread is exiting. Releases its map (bins,
   stack) and child cache; its nodes stay. Later woven code in this thread (other TSD
   destructors) does not push, and its allocations are charged below the
   node current at that time. */
static void rt_thread_exit(void *arg)
{
	struct rt_thread *T = arg;
	struct rt_local *l = &rt_local;
	struct __weave_thread *t = &__weave_tls;
	struct bin *b;
	int was = l->in_rt;
	u32 i;

	if (!T || l->thr != T || l->state != ST_LIVE)
		return;
	rt_enter(l);
	own_note(); /* its maps go below */
	ls_thread_exit((uintptr_t)__builtin_frame_address(0), (uintptr_t)__builtin_return_address(0));
	time_thread_exit(T, t);
	vm_thread_exit(T);
	t->lim = 0;
	fence();
	t->cap = 0;
	fence();
	t->depth = 0;
	fence();
	__atomic_store_n(&t->cur, &node_at(T->root)->pub, __ATOMIC_RELAXED);
	t->stack = NULL;
	t->ccmask = 0; /* the mask before the cache (weave.h), both before its map goes */
	fence();
	t->cc = rt_cc_none;
	fence();
	pthread_mutex_lock(&g_lock);
	b = T->bins;
	T->bins = NULL;
	l->bins = NULL;
	__atomic_store_n(&g_shared_bins_used, 1, __ATOMIC_RELAXED);
	for (i = 0; i < NBINS; i++) {
		const struct bin *r = bin_row(b, i);
		if (!(r->allocs | r->frees))
			continue;
		__atomic_fetch_add(&g_shared_bins[i].allocs, r->allocs, __ATOMIC_RELAXED);
		__atomic_fetch_add(&g_shared_bins[i].frees, r->frees, __ATOMIC_RELAXED);
	}
	__atomic_fetch_add(&g_shared_bins[BIN_BYTES].allocs, bin_bytes(b)->allocs, __ATOMIC_RELAXED);
	__atomic_fetch_add(&g_shared_bins[BIN_BYTES].frees, bin_bytes(b)->frees, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&g_lock);
	rt_unmap(T->stack, T->reserved * sizeof *T->stack);
	T->stack = NULL;
	if (T->cc)
		rt_unmap(T->cc, TMAP_BYTES);
	T->cc = NULL;
	regions_thread_exit();
	l->state = ST_DEAD;
	fence();
	l->in_rt = was;
}

