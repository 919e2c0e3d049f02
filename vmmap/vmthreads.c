//go:build ignore

/* vmthreads.c: the heap in use with several threads (vmmap.c keeps it
   with one).

   Each thread counts its allocations and frees in its own record (struct
   vm_thread, a cache line of its own) and moves the heap on credit: bytes
   reserved in g_vm.bytes ahead of its allocations. Its x is minus its
   credit, so the fast paths are vmmap.c's (an allocation adds to x and
   goes slow at 0 or more; a free subtracts and goes slow below lo_rel):
   an allocation past the credit reserves what it lacks and a credit of K
   more (one atomic add to g_vm.bytes); a free that leaves more than 2K
   gives back all but K. So g_vm.bytes is the heap plus the credits held,
   which are at most 2K a thread, and the heap's accounting writes no
   cache line another thread writes (nor do the advice's fast paths but
   for a free of another thread's block: advice.c).

   K is the peak over 128 times the threads set up, at least
   VT_CREDIT_MIN: g_vm.bytes exceeds the heap by at most 1/64 of the
   peak, or 2 KiB a thread on a small heap. With several threads the
   peak is the largest g_vm.bytes, taken at every reservation: never
   below the heap the threads had at any time (no thread allocates past
   its credit without reserving more), and at most the credits above it.
   A point of the timeline, a peak snapshot and the exit read the heap
   as g_vm.bytes plus every record's x (each read racily: exact when the
   threads are quiet).

   The first thread keeps vmmap.c's one-thread scheme (state VT_ONE: its
   heap is g_vm.hi + x) until a second thread is set up: vm_multi, in the
   new thread, swaps VM_FAR into its x and adds g_vm.hi + what x held to
   g_vm.bytes (VT_FOLDED), so that its next event takes its slow path,
   which adds what it did since (x less VM_FAR; or x less what was folded,
   g_vm.folded, when its own add to x raced the swap and stored a value
   below 0 again) and puts it on credit (vt_convert). Until then its
   events are counted in x alone, as before. A thread that exits
   gives its credit back and its counts to g_vm (vm_thread_exit); its
   later events, and those of threads never set up, go to g_vm directly
   (g_vm_none: every event slow, atomic adds).

   Threading: a record's x, lo_rel and counts are written by its thread
   (x and lo_rel of the first by vm_multi too, under g_vm.lock, as the
   one-thread scheme's rearm writes them), read by others with relaxed
   loads; state is written by its thread or vm_multi (g_vm.lock), or under
   g_lock at set-up; g_vm.bytes, allocs and frees are atomic. */

#include "internal.h"

#define VT_CREDIT_MIN 1024  /* bytes */
#define VT_CREDIT_SHIFT 7   /* the peak / 128, shared among the threads */

/* A record for a thread being set up (g_lock held): the first thread's
   is g_vm_first; 0 if memory is short. */
static struct vm_thread *vm_thread_new(void)
{
	struct vm_thread *v;
	__atomic_fetch_add(&g_vm.nthreads, 1, __ATOMIC_RELAXED);
	if (!g_vm.first_taken) {
		g_vm.first_taken = 1;
		return &g_vm_first;
	}
	if (!(v = arena_line(sizeof *v)))
		return NULL;
	v->state = VT_CREDIT; /* no credit: its first allocation reserves */
	return v;
}

/* A second thread is being set up (g_lock held, g_multi set): the first
   thread's heap goes to g_vm.bytes, and its next event to its slow path
   (see the top). */
static void vm_multi(void)
{
	struct vm_thread *v = &g_vm_first;
	long long old;
	spin_lock(&g_vm.lock);
	if (__atomic_load_n(&v->state, __ATOMIC_RELAXED) == VT_ONE) {
		old = __atomic_exchange_n(&v->x, VM_FAR, __ATOMIC_RELAXED);
		g_vm.folded = old;
		__atomic_add_fetch(&g_vm.bytes, vm_load(&g_vm.hi) + (u64)old, __ATOMIC_RELAXED);
		__atomic_store_n(&v->lo_rel, VM_NEVER, __ATOMIC_RELAXED);
		__atomic_store_n(&v->state, VT_FOLDED, __ATOMIC_RELAXED);
	}
	spin_unlock(&g_vm.lock);
}

/* What the folded first thread did since vm_multi (its x less VM_FAR, or
   less what was folded when its add raced the swap). */
static long long vt_since(long long x)
{
	return x >= VM_FAR / 2 ? x - VM_FAR : x - g_vm.folded;
}

/* What record v holds of the heap beyond g_vm.bytes (racy but for its
   own thread). */
static long long vt_part(const struct vm_thread *v)
{
	int st = __atomic_load_n(&v->state, __ATOMIC_RELAXED);
	long long x = __atomic_load_n(&v->x, __ATOMIC_RELAXED);
	if (st == VT_ONE)
		return (long long)vm_load(&g_vm.hi) + x;
	if (st == VT_FOLDED)
		return vt_since(x);
	return st == VT_CREDIT ? x : 0;
}

/* The heap in use now: exact with one thread (its own or in_rt set), else
   as the records read racily say. */
static u64 vm_bytes(void)
{
	const struct rt_thread *T;
	u64 b = vm_load(&g_vm.bytes);
	if (!__atomic_load_n(&g_multi, __ATOMIC_RELAXED))
		return b + (u64)vt_part(&g_vm_first);
	for (T = __atomic_load_n(&g_threads, __ATOMIC_ACQUIRE); T; T = __atomic_load_n(&T->next, __ATOMIC_ACQUIRE))
		if (T->vm)
			b += (u64)vt_part(T->vm);
	return b;
}

/* Allocations and frees counted so far (as vm_bytes). */
static void vm_counts(u64 *allocs, u64 *frees)
{
	const struct rt_thread *T;
	*allocs = vm_load(&g_vm.allocs);
	*frees = vm_load(&g_vm.frees);
	if (!__atomic_load_n(&g_multi, __ATOMIC_RELAXED)) {
		*allocs += vm_load(&g_vm_first.allocs);
		*frees += vm_load(&g_vm_first.frees);
		return;
	}
	for (T = __atomic_load_n(&g_threads, __ATOMIC_ACQUIRE); T; T = __atomic_load_n(&T->next, __ATOMIC_ACQUIRE)) {
		if (T->vm) {
			*allocs += vm_load(&T->vm->allocs);
			*frees += vm_load(&T->vm->frees);
		}
	}
}

/* Blocks in use now. */
static u64 vm_blocks(void)
{
	u64 a, f;
	vm_counts(&a, &f);
	return a > f ? a - f : 0;
}

/* K, a thread's credit (see the top). */
static long long vt_credit(void)
{
	u32 n = __atomic_load_n(&g_vm.nthreads, __ATOMIC_RELAXED);
	u64 k = (vm_load(&g_vm.peak) >> VT_CREDIT_SHIFT) / (n ? n : 1);
	return k < VT_CREDIT_MIN ? VT_CREDIT_MIN : (long long)k;
}

/* After an event that moved g_vm.bytes to b: the peak (an allocation),
   its time and counts, a peak snapshot, a
   timeline point, as vm_up does with one thread. in_rt set. */
static void vt_check(u64 b, int is_free)
{
	int due = __atomic_load_n(&g_vm.due, __ATOMIC_RELAXED);
	if (!is_free && b > vm_load(&g_vm.peak))
		vm_peak_raise(b);
	if (!due && b <= vm_load(&g_vm.tl_hi) && b >= vm_load(&g_vm.tl_lo) && b <= vm_load(&g_vm.snap_next) &&
	    b <= vm_load(&g_vm.stamp_next))
		return;
	spin_lock(&g_vm.lock);
	if (!is_free && b > g_vm.stamp_next && b >= vm_load(&g_vm.peak)) {
		g_vm.peak_ns = vm_now();
		__atomic_store_n(&g_vm.stamp_next, b + (b >> VM_STAMP_SHIFT), __ATOMIC_RELAXED);
		vm_peak_counts();
	}
	if (!is_free && b > g_vm.snap_next && b >= vm_load(&g_vm.peak))
		vm_peak_take(b);
	if (due || b > vm_load(&g_vm.tl_hi) || b < vm_load(&g_vm.tl_lo)) {
		vm_point(vm_bytes(), 0);
		vm_arm(b); /* the next point's thresholds around what is checked against them */
	}
	spin_unlock(&g_vm.lock);
}

/* An event of a thread without a record of its own: straight to g_vm. */
static void vt_direct(struct vm_thread *v, u64 n, int is_free)
{
	u64 b;
	__atomic_store_n(&v->x, VM_FAR, __ATOMIC_RELAXED); /* other such threads' adds race: it stays far */
	__atomic_fetch_add(is_free ? &g_vm.frees : &g_vm.allocs, 1, __ATOMIC_RELAXED);
	b = __atomic_add_fetch(&g_vm.bytes, is_free ? -n : n, __ATOMIC_RELAXED);
	vt_check(b, is_free);
}

/* The first thread's first slow path after a second thread was set up:
   what its x holds of the heap (this event's included; all of it if
   vm_multi did not fold it yet) to g_vm.bytes, and on credit from now
   on, with none. Returns g_vm.bytes. */
static u64 vt_convert(struct vm_thread *v)
{
	u64 b;
	spin_lock(&g_vm.lock);
	b = __atomic_add_fetch(&g_vm.bytes, (u64)vt_part(v), __ATOMIC_RELAXED);
	__atomic_store_n(&v->x, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&v->state, VT_CREDIT, __ATOMIC_RELAXED);
	spin_unlock(&g_vm.lock);
	return b;
}

/* vm_up with several threads: the allocation of n bytes went past the
   thread's credit. in_rt set. */
static void vm_up_threads(struct vm_thread *v, u64 n)
{
	long long k;
	u64 b;
	if (v->state == VT_NONE || v->state == VT_DEAD) {
		vt_direct(v, n, 0);
		return;
	}
	VM_COUNT(v->allocs);
	if (v->state == VT_ONE || v->state == VT_FOLDED) {
		vt_check(vt_convert(v), 0);
		return;
	}
	k = vt_credit();
	b = __atomic_add_fetch(&g_vm.bytes, (u64)(v->x + k), __ATOMIC_RELAXED);
	__atomic_store_n(&v->x, -k, __ATOMIC_RELAXED);
	vt_check(b, 0); /* the heap reaches b at most, until the next reservation */
}

/* vm_down with several threads: the free of n bytes left the thread more
   than twice its credit, or the timer asked for a point. in_rt set. */
static void vm_down_threads(struct vm_thread *v, u64 n)
{
	long long k = vt_credit(), x;
	u64 b;
	if (v->state == VT_NONE || v->state == VT_DEAD) {
		vt_direct(v, n, 1);
		return;
	}
	VM_COUNT(v->frees);
	if (v->state == VT_ONE || v->state == VT_FOLDED) {
		b = vt_convert(v);
		vm_peak_raise(b + n); /* the first thread's heap before this free: not in g_vm.bytes until now */
	} else if ((x = v->x) < -k) {
		b = __atomic_sub_fetch(&g_vm.bytes, (u64)(-x - k), __ATOMIC_RELAXED);
		__atomic_store_n(&v->x, -k, __ATOMIC_RELAXED);
	} else
		b = vm_load(&g_vm.bytes);
	__atomic_store_n(&v->lo_rel, -2 * k, __ATOMIC_RELAXED);
	vt_check(b, 1);
}

/* Thread T is exiting (its own thread, in_rt set): its credit given back,
   its counts to g_vm; its later events go there directly. */
static void vm_thread_exit(struct rt_thread *T)
{
	struct vm_thread *v = T->vm;
	if (!v)
		return;
	spin_lock(&g_vm.lock);
	__atomic_add_fetch(&g_vm.bytes, (u64)vt_part(v), __ATOMIC_RELAXED);
	__atomic_fetch_add(&g_vm.allocs, v->allocs, __ATOMIC_RELAXED);
	__atomic_fetch_add(&g_vm.frees, v->frees, __ATOMIC_RELAXED);
	__atomic_store_n(&v->state, VT_DEAD, __ATOMIC_RELAXED);
	__atomic_store_n(&v->allocs, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&v->frees, 0, __ATOMIC_RELAXED);
	rt_local.vm = &g_vm_none;
	spin_unlock(&g_vm.lock);
}

/* A fork child (one thread): its record starts afresh, on the one-thread
   scheme if it is the only thread there ever was. */
RT_RARE static void vm_thread_fork_child(void)
{
	struct vm_thread *v = rt_local.vm;
	g_vm.nthreads = 1;
	if (v == &g_vm_none)
		return;
	v->x = v->lo_rel = 0;
	v->allocs = v->frees = 0;
	v->state = __atomic_load_n(&g_multi, __ATOMIC_RELAXED) ? VT_CREDIT : VT_ONE;
}
