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

/* A thread's second-level child cache and its bins share one map, whose
   pages become resident as they are written (in thread-local storage the
   cache's 24 KiB were all written at thread start, zeroed by the dynamic
   linker). Entries are written only inside rt_enter/rt_exit, where a
   signal handler's woven code does not write them. */
#define CC_BYTES ((wsize)__WEAVE_CC_SIZE * sizeof(struct __weave_cc))
#define TMAP_BYTES (CC_BYTES + NBINS * sizeof(struct bin))

/* Reserves the thread's pseudo-stack and commits its first STACK_INIT
   slots. */
static struct __weave_slot *stack_reserve(wsize *reserved)
{
	wsize n = MAX_DEPTH;
	for (; n >= STACK_INIT; n /= 2) {
		void *p = mmap(NULL, n * sizeof(struct __weave_slot), PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			continue;
		rt_own(p, n * sizeof(struct __weave_slot));
		if (mprotect(p, STACK_INIT * sizeof(struct __weave_slot), PROT_READ | PROT_WRITE) != 0) {
			rt_unmap(p, n * sizeof(struct __weave_slot));
			return NULL;
		}
		*reserved = n;
		return p;
	}
	return NULL;
}

static int stack_grow(struct rt_thread *T, struct __weave_thread *t)
{
	wsize cap = t->cap, ncap = cap * 2;
	if (cap >= T->reserved)
		return 0;
	if (ncap > T->reserved)
		ncap = T->reserved;
	if (mprotect(t->stack + cap, (ncap - cap) * sizeof *t->stack, PROT_READ | PROT_WRITE) != 0)
		return 0;
	t->cap = (unsigned)ncap;
	lim_update(t);
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
	struct bin *bins = NULL;
	struct __weave_cc *cc;
	struct __weave_slot *stack = NULL;
	wsize reserved = 0;

	pthread_once(&g_once, rt_global_init);
	l->errp = &errno;
	l->state = ST_FAILED;
	cc = rt_map(TMAP_BYTES);
	if (cc)
		bins = (struct bin *)(void *)((char *)cc + CC_BYTES);
	stack = stack_reserve(&reserved);
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
	if (!T || !bins || !stack)
		goto fail;
	memset(T, 0, sizeof *T);
	T->num = g_nthreads;
	if (!(T->vm = vm_thread_new()))
		goto fail;
	T->bins = bins;
	T->cc = cc;
	T->stack = stack;
	T->reserved = reserved;
	if (!chash_grow(T) || !(root = node_new(T, NULL, NULL, KIND_R)))
		goto fail;
	T->root = root->self;
	T->tid = (int)syscall(SYS_gettid);
	g_nthreads++;
	__atomic_store_n(g_threads_tail, T, __ATOMIC_RELEASE); /* vm_leaves_take walks the list */
	g_threads_tail = &T->next;
	pthread_mutex_unlock(&g_lock);

	stack[0].node = &root->pub;
	t->stack = stack;
	t->cc = cc;
	t->depth = 0;
	t->cap = STACK_INIT;
	fence();
	__atomic_store_n(&t->cur, &root->pub, __ATOMIC_RELAXED);
	if (g_key_ok)
		pthread_setspecific(g_key, T);
	l->thr = T;
	l->bins = bins;
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
	if (cc)
		rt_unmap(cc, TMAP_BYTES);
	if (stack)
		rt_unmap(stack, reserved * sizeof *stack);
	return NULL;
}

static inline struct rt_thread *thread_get(struct rt_local *l)
{
	if (__builtin_expect(l->thr != NULL, 1))
		return l->thr;
	return l->state == ST_NEW ? thread_setup(l) : NULL;
}

/* pthread key destructor: the thread is exiting. Releases its stack and
   bins; its nodes stay. Later woven code in this thread (other TSD
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
	t->cc = rt_cc_none; /* before its map goes: woven code reads it first */
	fence();
	rt_unmap(T->stack, T->reserved * sizeof *T->stack);
	T->stack = NULL;
	pthread_mutex_lock(&g_lock);
	b = T->bins;
	T->bins = NULL;
	l->bins = NULL;
	__atomic_store_n(&g_shared_bins_used, 1, __ATOMIC_RELAXED);
	for (i = 0; i < NBINS; i++) {
		if (!(b[i].allocs | b[i].frees))
			continue;
		__atomic_fetch_add(&g_shared_bins[i].allocs, b[i].allocs, __ATOMIC_RELAXED);
		__atomic_fetch_add(&g_shared_bins[i].frees, b[i].frees, __ATOMIC_RELAXED);
		__atomic_fetch_add(&g_shared_bins[i].bytes, b[i].bytes, __ATOMIC_RELAXED);
		__atomic_fetch_add(&g_shared_bins[i].fbytes, b[i].fbytes, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&g_lock);
	rt_unmap(T->cc, TMAP_BYTES);
	T->cc = NULL;
	l->state = ST_DEAD;
	fence();
	l->in_rt = was;
}

