//go:build ignore

/* enter.c: the woven interface's slow paths. weave.h's __weave_enter and
   __weave_leave are inlined into woven code; their out-of-line copies,
   for code that takes their address or is built without inlining, are
   generated from weave.h (pseudostack.OutOfLine). __weave_enter_slow
   sets the thread up and looks the child up when the caches miss; __weave_setjmp_return re-synchronises after a longjmp.

   __weave_setjmp_return also re-synchronises for a frame whose enter did
   not push (__WEAVE_NOT_PUSHED): its word then holds cur as the enter
   found it.

   __weave_register_unit counts the frameless functions of every woven
   unit (--frames auto), for the profile, and keeps the units, for the
   trace patterns that select only such functions (tracepoints/unframed.c). */

#include "internal.h"

/* p's child for fn, as an entry finds it: p's one-entry cache, the
   second-level cache, else the tree (filling both caches; a first cache
   that has lost more entries to others than it holds is replaced by a
   larger one). Owner thread, in_rt set. */
static inline __attribute__((always_inline)) struct __weave_node *fn_child(struct rt_thread *T, struct __weave_node *p, const struct __weave_fn *fn)
{
	struct __weave_thread *t = &__weave_tls;
	struct __weave_node *c = p->cache;
	struct __weave_cc *e;
	struct rt_node *n;
	if (c->key == fn)
		return c;
	e = &t->cc[__weave_cc_index(p, fn, t->ccmask)];
	if (e->key == fn && e->parent == p) {
		c = e->child;
	} else {
		if (!(n = child(T, (struct rt_node *)(void *)p, fn, KIND_F)))
			return 0;
		c = &n->pub;
		if (e->key && ++T->cc_lost > t->ccmask && cc_grow(T, t))
			e = &t->cc[__weave_cc_index(p, fn, t->ccmask)];
		e->key = 0;
		fence();
		e->child = c;
		e->parent = p;
		fence();
		e->key = fn;
	}
	p->cache = c;
	return c;
}

struct __weave_frame __weave_enter_slow(const struct __weave_fn *fn)
{
	struct __weave_thread *t = &__weave_tls;
	struct rt_local *l = &rt_local;
	struct __weave_frame f = {(__weave_size_t)t->cur | __WEAVE_NOT_PUSHED};
	struct rt_thread *T;
	struct __weave_node *p, *c;

	if (l->in_rt)
		return f;
	rt_enter(l);
	T = l->thr;
	if (!T && l->state == ST_NEW)
		T = thread_setup(l);
	if (!T || l->state != ST_LIVE)
		goto out;
	if (__builtin_expect(__atomic_load_n(&g_tp_unframed, __ATOMIC_RELAXED), 0))
		tp_unframed_start();
	p = t->cur;
	if (!(c = fn_child(T, p, fn)))
		goto out;
	if (t->timing && time_exact()) {
		time_push(T, t, p, c, &f); /* exact mode: a timed frame */
		goto out;
	}
	/* The push, exactly as in __weave_enter. */
	c->calls++;
	fence();
	__atomic_store_n(&t->cur, c, __ATOMIC_RELAXED); /* the sampler reads it */
	f.v = (__weave_size_t)p;
	if (t->lim != lim_of(t->cap) && !t->timing)
		lim_update(t); /* tracing was turned off */
out:
	rt_exit(l);
	return f;
}

/* The out-of-line copies of weave.h's x86-64 fast paths, for code that
   takes their address or is built without inlining: the C fast paths do
   the same. Not generated from their asm, which the runtime, built for
   any target and assembler syntax (-masm=intel), could not assemble.
   Not folded by gcc's identical code folding: what it would leave in
   place of one, a call of the other, cannot inline an always_inline
   function. */
#if defined(__GNUC__) && !defined(__clang__)
#define NO_ICF __attribute__((no_icf))
#else
#define NO_ICF
#endif

NO_ICF struct __weave_frame __weave_enter_x64(const struct __weave_fn *fn)
{
	return __weave_enter(fn);
}

NO_ICF void __weave_leave_x64(struct __weave_frame *f)
{
	__weave_leave(f);
}

NO_ICF struct __weave_frame __weave_enter_fsx64(const struct __weave_fn *fn)
{
	return __weave_enter(fn);
}

NO_ICF void __weave_leave_fsx64(struct __weave_frame *f)
{
	__weave_leave(f);
}

NO_ICF struct __weave_frame __weave_enter_x64o(const struct __weave_fn *fn, __weave_size_t o)
{
	(void)o;
	return __weave_enter(fn);
}

NO_ICF void __weave_leave_x64o(struct __weave_frame *f, __weave_size_t o)
{
	(void)o;
	__weave_leave(f);
}

NO_ICF struct __weave_frame __weave_enter_ptr_x64o(const struct __weave_fn *fn, __weave_size_t t, __weave_size_t o)
{
	(void)o;
	return __weave_enter_ptr(fn, t);
}

NO_ICF struct __weave_frame __weave_enter_ptr_x64(const struct __weave_fn *fn, __weave_size_t t)
{
	return __weave_enter_ptr(fn, t);
}

NO_ICF struct __weave_frame __weave_enter_ptr_fsx64(const struct __weave_fn *fn, __weave_size_t t)
{
	return __weave_enter_ptr(fn, t);
}

NO_ICF struct __weave_frame __weave_enter_lex64(const struct __weave_fn *fn)
{
	return __weave_enter(fn);
}

NO_ICF void __weave_leave_lex64(struct __weave_frame *f)
{
	__weave_leave(f);
}

NO_ICF struct __weave_frame __weave_enter_ptr_lex64(const struct __weave_fn *fn, __weave_size_t t)
{
	return __weave_enter_ptr(fn, t);
}

NO_ICF struct __weave_frame __weave_enter_iex64(const struct __weave_fn *fn)
{
	return __weave_enter(fn);
}

NO_ICF void __weave_leave_iex64(struct __weave_frame *f)
{
	__weave_leave(f);
}

NO_ICF struct __weave_frame __weave_enter_ptr_iex64(const struct __weave_fn *fn, __weave_size_t t)
{
	return __weave_enter_ptr(fn, t);
}

NO_ICF int __weave_pushed_x64(const struct __weave_frame *f)
{
	return __weave_pushed(f);
}

/* The offsets written into weave.h's x86-64 asm. */
#if defined(__x86_64__) && defined(__LP64__)
#define OFF(s, f, n) (__builtin_offsetof(struct s, f) == (n))
_Static_assert(OFF(__weave_thread, cur, 0) && OFF(__weave_thread, stack, 8) && OFF(__weave_thread, depth, 16) &&
		       OFF(__weave_thread, cap, 20) && OFF(__weave_thread, timing, 24) && OFF(__weave_thread, lim, 28) &&
		       OFF(__weave_thread, cc, 32) && OFF(__weave_thread, ccmask, 40) && OFF(__weave_node, key, 0) &&
		       OFF(__weave_node, cache, 8) &&
		       OFF(__weave_node, calls, 16) && OFF(__weave_node, up, 24) &&
		       OFF(__weave_cc, parent, 0) && OFF(__weave_cc, key, 8) && OFF(__weave_cc, child, 16) &&
		       sizeof(struct __weave_cc) == 24 && sizeof(struct __weave_frame) == 8,
	       "weave.h's x86-64 asm has the old layout written in");
#undef OFF
#endif

/* __weave_enter_stub and __weave_leave_stub, called from weave.h's
   x86-64 asm (__weave_enter_x64, __weave_leave_x64) at any stack
   alignment: they keep every general register but rax and rdx (the
   compiler saves the ones it uses, and all that a call may change) and
   xmm0-15 (here, in either assembler syntax), and take no SSE registers
   themselves. */
#if defined(__x86_64__) && defined(__LP64__) && \
	((defined(__clang__) && __clang_major__ >= 11) || (!defined(__clang__) && __GNUC__ >= 9))
#define X64_STUBS 1 /* timing.c calibrates through them */
#define STUB __attribute__((no_caller_saved_registers, force_align_arg_pointer, target("general-regs-only"), noinline, used))
/* xmm k to and from 16*k(buf), in AT&T and in Intel syntax. */
#define XMM_TO(k) "{movups %%xmm" #k ", " #k "*16(%0)|movups [%0+" #k "*16], xmm" #k "}\n\t"
#define XMM_FROM(k) "{movups " #k "*16(%0), %%xmm" #k "|movups xmm" #k ", [%0+" #k "*16]}\n\t"
#define XMM_ALL(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15)

/* The enter's rare paths, in a call of its own: nothing of it (not even
   the thread pointer's lookup) may move before the registers are saved. */
__attribute__((noinline)) static struct __weave_frame enter_rare(const struct __weave_fn *fn)
{
	if (__weave_tls.timing)
		return __weave_enter_timed(fn);
	return __weave_enter_slow(fn);
}

STUB struct __weave_frame __weave_enter_stub(const struct __weave_fn *fn)
{
	unsigned char x[256];
	struct __weave_frame f;
	__asm__ volatile(XMM_ALL(XMM_TO) : : "r"(x) : "memory");
	f = enter_rare(fn);
	__asm__ volatile(XMM_ALL(XMM_FROM) : : "r"(x) : "memory");
	return f;
}

STUB void __weave_leave_stub(__weave_size_t v)
{
	unsigned char x[256];
	__asm__ volatile(XMM_ALL(XMM_TO) : : "r"(x) : "memory");
	__weave_leave_timed(v);
	__asm__ volatile(XMM_ALL(XMM_FROM) : : "r"(x) : "memory");
}
#endif

/* The number of frameless functions of all registered units, and the
   distinct pointcut texts (NUL-separated in g_pc_text), both taken at
   registration, from constructors that may run before the runtime is set
   up, on any thread. The units themselves are kept in g_units (through
   their next field) until their destructor unregisters them (at exit, or
   when a library holding one is dlclosed). g_pc_lock is a spinlock (a
   registration takes microseconds). */
static u64 g_frameless, g_call_framed;
static char g_pc_text[16384] RT_LARGE;
static unsigned g_pc_len;
static int g_pc_lock;
static struct __weave_unit *g_units;

static void units_lock(void)
{
	while (__atomic_exchange_n(&g_pc_lock, 1, __ATOMIC_ACQUIRE))
		;
}

static void units_unlock(void) { __atomic_store_n(&g_pc_lock, 0, __ATOMIC_RELEASE); }

/* The program's own image (its PT_LOAD segments), set at start-up: it is
   never unloaded, so its units outlive their destructors. */
static uintptr_t g_program_lo, g_program_hi;

/* Forgets unit u: its object is being unloaded, or the process exits. A
   unit of the program itself is kept: the exit writer, which runs after
   the destructors, names its frameless functions from it. */
RT_RARE void __weave_unregister_unit(struct __weave_unit *u)
{
	if ((uintptr_t)u >= g_program_lo && (uintptr_t)u < g_program_hi)
		return;
	units_lock();
	for (struct __weave_unit **p = &g_units; *p; p = &(*p)->next) {
		if (*p == u) {
			*p = u->next;
			break;
		}
	}
	units_unlock();
}

void __weave_register_unit(struct __weave_unit *u)
{
	u64 n = 0;
	unsigned i;
	wsize k;
	u64 c = 0;
	for (i = 0; i < u->n; i++) {
		n += (u->fns[i].flags & __WEAVE_FN_FRAMELESS) != 0;
		c += (u->fns[i].flags & __WEAVE_FN_CALLS) != 0;
	}
	__atomic_fetch_add(&g_frameless, n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&g_call_framed, c, __ATOMIC_RELAXED);
	units_lock();
	u->next = g_units;
	g_units = u;
	if (!u->pointcut || !*u->pointcut) {
		units_unlock();
		return;
	}
	for (i = 0; i < g_pc_len; i += (unsigned)strlen(g_pc_text + i) + 1)
		if (!strcmp(g_pc_text + i, u->pointcut))
			break;
	k = strlen(u->pointcut) + 1;
	if (i >= g_pc_len && g_pc_len + k <= sizeof g_pc_text) {
		memcpy(g_pc_text + g_pc_len, u->pointcut, k);
		g_pc_len += (unsigned)k;
	}
	units_unlock();
}

/* The number of frameless functions in the registered units. */
RT_RARE static u64 frameless_count(void)
{
	return __atomic_load_n(&g_frameless, __ATOMIC_RELAXED);
}

/* The number of functions framed around their calls in the registered
   units. */
RT_RARE static u64 call_framed_count(void)
{
	return __atomic_load_n(&g_call_framed, __ATOMIC_RELAXED);
}

/* Writes the distinct pointcuts of the registered units as one M pointcut
   record (" ; " between them). Skipped if a registration holds the lock
   (the writer may run in a crash handler). */
RT_RARE static void pointcut_record(struct out *o)
{
	unsigned i;
	if (__atomic_exchange_n(&g_pc_lock, 1, __ATOMIC_ACQUIRE))
		return;
	for (i = 0; i < g_pc_len; i += (unsigned)strlen(g_pc_text + i) + 1) {
		out_str(o, i ? " ; " : "M pointcut ");
		out_str(o, g_pc_text + i);
	}
	if (g_pc_len) {
		out_ch(o, '\n');
		o->records++;
	}
	__atomic_store_n(&g_pc_lock, 0, __ATOMIC_RELEASE);
}

/* Calls each(arg, fn) for every frameless function of the registered
   units, so that the profile names those that allocated nothing (a diff
   then knows their calls were not counted, rather than stopped). Skipped,
   as pointcut_record, if a registration holds the lock. The units of
   shared libraries are unregistered by their destructors, which run
   before the writer: theirs are not named. */
RT_RARE static void each_frameless(void (*each)(void *, const struct __weave_fn *), void *arg)
{
	const struct __weave_unit *u;
	unsigned i;
	if (__atomic_exchange_n(&g_pc_lock, 1, __ATOMIC_ACQUIRE))
		return;
	for (u = g_units; u; u = u->next)
		for (i = 0; i < u->n; i++)
			if (u->fns[i].flags & __WEAVE_FN_FRAMELESS)
				each(arg, &u->fns[i]);
	__atomic_store_n(&g_pc_lock, 0, __ATOMIC_RELEASE);
}

/* The guard as calls (weave.h): code compiled without optimisation. */
struct __weave_frame __weave_enter_call(const struct __weave_fn *fn)
{
	return __weave_enter(fn);
}

void __weave_leave_call(struct __weave_frame *f)
{
	__weave_leave(f);
}

struct __weave_frame __weave_enter_ptr_call(const struct __weave_fn *fn, __weave_size_t t)
{
	return __weave_enter_ptr(fn, t);
}

/* Room for one more slot on the calling thread's timed stack. */
static int slot_room(struct __weave_thread *t)
{
	struct rt_local *l = &rt_local;
	int ok;
	if (t->depth + 1 < t->cap)
		return 1;
	if (l->in_rt || l->state != ST_LIVE || !l->thr)
		return 0;
	rt_enter(l);
	ok = stack_grow(l->thr, t);
	rt_exit(l);
	return ok;
}

struct __weave_frame __weave_enter_slot(const struct __weave_fn *fn)
{
	struct __weave_thread *t = &__weave_tls;
	struct __weave_frame f = __weave_enter(fn);
	unsigned d;
	if ((f.v & __WEAVE_TAGS) || !slot_room(t))
		return f; /* timed (its slot pushed), not pushed, or no room */
	d = t->depth;
	t->depth = d + 1;
	fence();
	t->stack[d + 1].node = t->cur;
	t->stack[d + 1].parent = (struct __weave_node *)f.v;
	t->stack[d + 1].t0 = 0;
	f.v = time_word(d);
	return f;
}

int __weave_setjmp_return(struct __weave_frame *f, int v)
{
	struct __weave_thread *t = &__weave_tls;
	__weave_size_t x = f->v;
	struct __weave_node *c = NULL;
	if (x & __WEAVE_TIMED) {
		unsigned d = (unsigned)(x >> __WEAVE_DEPTH_SHIFT) + 1;
		/* cap == 0 (thread not set up, or exited): nothing to re-synchronise. */
		if (d < t->cap) {
			if (t->timing && time_exact())
				time_drop(t, d); /* exact mode: close the frames dropped */
			t->depth = d;
			c = t->stack[d].node;
		}
	} else if (x & __WEAVE_NOT_PUSHED) {
		c = (struct __weave_node *)(x & ~(__weave_size_t)__WEAVE_TAGS);
	} else {
		/* The enter found no room for the slot: the child the parent
		   entered last, this frame's unless a signal handler's woven
		   code entered another since. */
		c = ((struct __weave_node *)x)->cache;
	}
	if (c) {
		fence();
		__atomic_store_n(&t->cur, c, __ATOMIC_RELAXED);
	}
	/* A longjmp out of a declared allocator's call (its caller the frame
	   that called setjmp or one outer: its guard at or above the stack
	   address the call's frame ends at) ended it. */
	if (rt_local.outer && (uintptr_t)f >= rt_local.outer)
		rt_local.outer = 0;
	return v;
}


/* A context suspended deeper than __WEAVE_CTX_SLOTS timed frames keeps
   the slots below its top CTX_WIN in a map of the runtime's, whose address
   takes slot[0] (c->n is then CTX_SPILLED): the contexts share the thread's
   stack, and one resumed in between pushes its own frames over those slots
   (in exact mode a coroutine's frames are all timed, each pop's parent
   comes from its slot: 17 deep, the frames under the top 16 went back to
   the other side's nodes and its calls were charged there). The restore
   puts them back and unmaps the copy; a context never resumed keeps it. */
enum { CTX_WIN = __WEAVE_CTX_SLOTS - 1, CTX_SPILLED = __WEAVE_CTX_SLOTS + 1 };

/* The bytes of the copy of a context suspended at depth d. */
static wsize ctx_spill_bytes(unsigned d)
{
	return page_up((wsize)(d - CTX_WIN) * sizeof(struct __weave_slot));
}

void __weave_ctx_save(struct __weave_ctx *c)
{
	struct __weave_thread *t = &__weave_tls;
	unsigned d = t->depth;
	struct __weave_slot *spill;
	c->t = t;
	c->cur = t->cur;
	c->depth = d;
	c->n = 0;
	if (d >= t->cap)
		return;
	if (d < __WEAVE_CTX_SLOTS) {
		c->n = d + 1;
		memcpy(c->slot, &t->stack[0], c->n * sizeof c->slot[0]);
		return;
	}
	/* Slots 1..d - CTX_WIN to the map, d - CTX_WIN + 1..d to slot[1..]. */
	c->n = CTX_SPILLED;
	spill = rt_map(ctx_spill_bytes(d));
	if (spill)
		memcpy(spill, &t->stack[1], (d - CTX_WIN) * sizeof *spill);
	c->slot[0].node = (struct __weave_node *)(void *)spill;
	c->slot[0].parent = 0;
	c->slot[0].t0 = 0;
	memcpy(&c->slot[1], &t->stack[d + 1 - CTX_WIN], CTX_WIN * sizeof c->slot[0]);
}

/* noinline: &__weave_tls is this thread's, read after the switch. */
__attribute__((noinline)) int __weave_ctx_restore(struct __weave_ctx *c, int v)
{
	struct __weave_thread *t = &__weave_tls;
	unsigned d = c->depth;
	struct __weave_slot *spill = NULL;
	if (c->n == CTX_SPILLED) {
		spill = (struct __weave_slot *)(void *)c->slot[0].node;
		c->slot[0].node = 0; /* resumed again: the top alone */
	}
	if (t == c->t && c->n && d < t->cap) {
		if (c->n != CTX_SPILLED) {
			memcpy(&t->stack[d + 1 - c->n], c->slot, c->n * sizeof c->slot[0]);
		} else {
			memcpy(&t->stack[d + 1 - CTX_WIN], &c->slot[1], CTX_WIN * sizeof c->slot[0]);
			if (spill)
				memcpy(&t->stack[1], spill, (d - CTX_WIN) * sizeof *spill);
		}
		t->depth = d;
		fence();
		__atomic_store_n(&t->cur, c->cur, __ATOMIC_RELAXED);
	}
	if (spill)
		rt_unmap(spill, ctx_spill_bytes(d));
	return v;
}
