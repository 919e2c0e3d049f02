//go:build ignore

/* timed.c: the timed push and pop (exact mode, and function tracepoints),
   and the clock they read. __weave_enter and __weave_leave (weave.h) go to
   __weave_enter_timed and __weave_leave_timed while the thread's timing
   byte is set; they stamp each slot's entry tick (t0) and, at the pop, add
   the slot's ticks to its node's inclusive time if it is the node's
   outermost open activation (rt_node.tdepth). The slot keeps the node
   the pop goes back to (the frame's word holds its depth). The
   pseudo-stack's own paths (enter.c's slow enter and setjmp resync) push
   and close timed frames through time_push and time_drop here. What is done with the
   times (calibration, sampling, the profile's D records) is the
   runtime's: runtime/timing.c, which sets the mode and the clock at
   start-up. */

#include "internal.h"

enum { TIME_OFF, TIME_SAMPLED, TIME_EXACT };

static int g_time_mode = TIME_SAMPLED; /* written once by time_global_init */

static int time_exact(void) { return g_time_mode == TIME_EXACT; }
static int g_time_tsc;                 /* exact mode's clock is the TSC */

/* Out of line, so that the TSC path of its callers needs no stack frame. */
__attribute__((noinline, cold)) static u64 time_tick_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

static inline u64 time_tick(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (__builtin_expect(g_time_tsc, 1))
		return __builtin_ia32_rdtsc();
#endif
	return time_tick_mono();
}

static inline void time_add(struct rt_node *n, u64 d)
{
	__atomic_store_n(&n->time, __atomic_load_n(&n->time, __ATOMIC_RELAXED) + d, __ATOMIC_RELAXED);
}

/* Exact mode: a push of node c at depth D makes it the node's outermost
   open activation, unless one is open below D. A recorded activation that
   is not on the stack any more (frames dropped by a longjmp the runtime
   did not see) is stale and replaced. */
static inline __attribute__((always_inline)) void
time_mark_open(struct __weave_thread *t, struct __weave_node *c, unsigned D)
{
	struct rt_node *n = (struct rt_node *)(void *)c;
	u32 od = n->tdepth;
	if (!(od && od < D && t->stack[od].node == c))
		n->tdepth = D;
}

/* Exact mode: slot i closes (closing: its activation ends) at tick now;
   its time counts if it is its node's outermost activation. */
static inline __attribute__((always_inline)) void
time_slot_end(struct __weave_slot *s, unsigned i, u64 now, int closing)
{
	struct rt_node *n = (struct rt_node *)(void *)s->node;
	if (!n || n->tdepth != i)
		return;
	if (now > s->t0)
		time_add(n, now - s->t0);
	if (closing)
		n->tdepth = 0;
}

/* Closes t's open frames (exact mode) at tick now: their nodes get the
   time so far, and their t0 moves to now. Owner thread. */
static void time_close(struct __weave_thread *t, u64 now)
{
	unsigned i;
	if (!t->stack || t->depth >= t->cap)
		return;
	for (i = t->depth; i >= 1; i--) {
		struct __weave_slot *s = &t->stack[i];
		time_slot_end(s, i, now, 0);
		s->t0 = now;
	}
}

/* The timed push and pop, for a clock known at compile time (tsc: the TSC;
   else time_tick_mono), so that the TSC versions need no stack frame. */
static inline __attribute__((always_inline)) u64 time_tick_is(int tsc)
{
#if defined(__x86_64__) || defined(__i386__)
	if (tsc)
		return __builtin_ia32_rdtsc();
#endif
	(void)tsc;
	return time_tick_mono();
}

/* The push of c from p into slot d + 1, stamped: the depth first, cur
   last (a signal handler's woven code in between pushes above it). */
static inline __attribute__((always_inline)) void
time_slot_push(struct __weave_thread *t, unsigned d, struct __weave_node *p, struct __weave_node *c, int tsc)
{
	struct __weave_slot *s;
	t->depth = d + 1;
	fence();
	s = &t->stack[d + 1];
	s->node = c;
	s->parent = p;
	time_mark_open(t, c, d + 1);
	s->t0 = time_tick_is(tsc);
	fence();
	__atomic_store_n(&t->cur, c, __ATOMIC_RELAXED);
}

/* __weave_enter_slow's push of c from p in exact mode (in_rt): a timed
   frame, if the stack has room (else an untimed one, whose time is its
   caller's). */
static void time_push(struct rt_thread *T, struct __weave_thread *t, struct __weave_node *p, struct __weave_node *c,
		      struct __weave_frame *f)
{
	unsigned d = t->depth;
	c->calls++;
	f->v = (__weave_size_t)p;
	if (d + 1 >= t->cap && !stack_grow(T, t)) {
		fence();
		__atomic_store_n(&t->cur, c, __ATOMIC_RELAXED);
		return;
	}
	time_slot_push(t, d, p, c, g_time_tsc);
	f->v = time_word(d);
	if (__builtin_expect(g_tp_on, 0) && ((struct rt_node *)(void *)c)->traced) {
		tp_timed_enter(c, d + 1, 1);
		f->v |= TP_TRACED;
	}
}

/* __weave_setjmp_return re-synchronises to depth d (< cap) in exact mode:
   the frames above it were dropped by a longjmp; close them now. */
static void time_drop(struct __weave_thread *t, unsigned d)
{
	u64 now = time_tick();
	unsigned i;
	if (t->depth >= t->cap)
		return;
	for (i = t->depth; i > d; i--)
		time_slot_end(&t->stack[i], i, now, 1);
}

static inline __attribute__((always_inline)) struct __weave_frame
time_enter(const struct __weave_fn *fn, int tsc)
{
	struct __weave_thread *t = &__weave_tls;
	struct __weave_node *p = t->cur;
	struct __weave_node *c = p->cache;
	unsigned d = t->depth;
	struct __weave_frame f;
	if (__builtin_expect(c->key != fn || d + 1 >= t->cap, 0))
		return __weave_enter_slow(fn); /* pushes a timed frame itself */
	c->calls++;
	time_slot_push(t, d, p, c, tsc);
	f.v = time_word(d);
	if (__builtin_expect(g_tp_on, 0) && ((struct rt_node *)(void *)c)->traced) {
		tp_timed_enter(c, d + 1, 0);
		f.v |= TP_TRACED;
	}
	return f;
}

static inline __attribute__((always_inline)) void time_leave(__weave_size_t v, int tsc)
{
	u64 now = time_tick_is(tsc);
	struct __weave_thread *t = &__weave_tls;
	unsigned d = (unsigned)(v >> __WEAVE_DEPTH_SHIFT);
	struct __weave_slot *st;
	/* Opaque, so that the fence below does not make the compiler compute
	   the thread's address again. */
	__asm__("" : "+r"(t));
	/* cap == 0: the thread's stack is gone (thread exit). */
	if (__builtin_expect(d + 1 >= t->cap, 0))
		return;
	st = t->stack;
	time_slot_end(&st[d + 1], d + 1, now, 1);
	t->depth = d;
	fence();
	__atomic_store_n(&t->cur, st[d + 1].parent, __ATOMIC_RELAXED);
}

__attribute__((noinline)) static struct __weave_frame time_enter_mono(const struct __weave_fn *fn)
{
	return time_enter(fn, 0);
}

__attribute__((noinline)) static void time_leave_mono(__weave_size_t v)
{
	time_leave(v, 0);
}

/* noinline: the calibration must time these as woven code calls them. */
__attribute__((noinline)) struct __weave_frame __weave_enter_timed(const struct __weave_fn *fn)
{
	if (__builtin_expect(g_time_mode != TIME_EXACT, 0))
		return tp_enter(fn); /* the timing byte set for function tracing */
	if (__builtin_expect(!g_time_tsc, 0))
		return time_enter_mono(fn);
	return time_enter(fn, 1);
}

__attribute__((noinline)) void __weave_leave_timed(__weave_size_t v)
{
	if (__builtin_expect(v & TP_TRACED, 0)) {
		if (g_time_mode != TIME_EXACT) {
			tp_leave(v);
			return;
		}
		tp_timed_exit(v);
	}
	if (__builtin_expect(!g_time_tsc, 0))
		time_leave_mono(v);
	else
		time_leave(v, 1);
}

