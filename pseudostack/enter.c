//go:build ignore

/* enter.c: the woven interface's slow paths. weave.h's __weave_enter and
   __weave_leave are inlined into woven code; their out-of-line copies,
   for code that takes their address or is built without inlining, are
   generated from weave.h (pseudostack.OutOfLine). __weave_enter_slow
   sets the thread up, grows its stack and looks the child up when the
   caches miss; __weave_setjmp_return re-synchronises after a longjmp.

   __weave_setjmp_return also re-synchronises for a frame whose enter did
   not push (parent == 0): its depth field then holds the depth the
   function ran at.

   __weave_register_unit keeps the units that have frameless functions
   (woven under --frames auto), for the profile's count. */

#include "internal.h"

/* p's child for fn, as an entry finds it: p's one-entry cache, the
   second-level cache, else the tree (filling both caches). Owner thread,
   in_rt set. */
static inline __attribute__((always_inline)) struct __weave_node *fn_child(struct rt_thread *T, struct __weave_node *p, const struct __weave_fn *fn)
{
	struct __weave_node *c = p->cache;
	struct __weave_cc *e;
	struct rt_node *n;
	if (c->key == fn)
		return c;
	e = &rt_cc[__weave_cc_index(p, fn)];
	if (e->key == fn && e->parent == p) {
		c = e->child;
	} else {
		if (!(n = child(T, (struct rt_node *)(void *)p, fn, KIND_F)))
			return 0;
		c = &n->pub;
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
	struct __weave_frame f = {0, t->depth};
	struct rt_thread *T;
	struct __weave_node *p, *c;
	unsigned d;

	if (l->in_rt)
		return f;
	if (__builtin_expect(__atomic_load_n(&g_tp_attn, __ATOMIC_RELAXED) & TP_ATTN_CONTROL, 0))
		ctl_poll();
	rt_enter(l);
	T = l->thr;
	if (!T && l->state == ST_NEW)
		T = thread_setup(l);
	if (!T || l->state != ST_LIVE)
		goto out;
	d = t->depth;
	f.depth = d;
	if (d + 1 >= t->cap && !stack_grow(T, t))
		goto out;
	p = t->cur;
	if (!(c = fn_child(T, p, fn)))
		goto out;
	/* The push, exactly as in __weave_enter. */
	c->calls++;
	t->depth = d + 1;
	fence();
	t->stack[d + 1].node = c;
	fence();
	t->cur = c;
	f.parent = p;
	if (t->timing && time_exact())
		time_push_stamp(t, d, &f); /* exact mode: a timed frame */
out:
	rt_exit(l);
	return f;
}

/* The units with a pointcut, pushed by their constructors, possibly
   before the runtime is set up, from any thread; and the number of
   frameless functions of all registered units, counted at registration:
   a unit of a library dlclosed before exit is unmapped then. */
static struct __weave_unit *g_units;
static u64 g_frameless;

void __weave_register_unit(struct __weave_unit *u)
{
	u64 n = 0;
	unsigned i;
	for (i = 0; i < u->n; i++)
		n += (u->fns[i].flags & __WEAVE_FN_FRAMELESS) != 0;
	__atomic_fetch_add(&g_frameless, n, __ATOMIC_RELAXED);
	if (!u->pointcut)
		return;
	u->next = __atomic_load_n(&g_units, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&g_units, &u->next, u, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

/* The number of frameless functions in the registered units. */
static u64 frameless_count(void)
{
	return __atomic_load_n(&g_frameless, __ATOMIC_RELAXED);
}

/* Writes the distinct pointcuts of the registered units as one M pointcut
   record (" ; " between them). */
static void pointcut_record(struct out *o)
{
	struct __weave_unit *first = __atomic_load_n(&g_units, __ATOMIC_ACQUIRE), *u, *v;
	int any = 0;
	for (u = first; u; u = u->next) {
		if (!u->pointcut)
			continue;
		for (v = first; v != u; v = v->next)
			if (v->pointcut && !strcmp(v->pointcut, u->pointcut))
				break;
		if (v != u)
			continue;
		out_str(o, any ? " ; " : "M pointcut ");
		out_str(o, u->pointcut);
		any = 1;
	}
	if (any) {
		out_ch(o, '\n');
		o->records++;
	}
}

int __weave_setjmp_return(struct __weave_frame *f, int v)
{
	struct __weave_thread *t = &__weave_tls;
	unsigned d = f->parent ? f->depth + 1
		     : f->depth & __WEAVE_TIMED ? (f->depth & ~(unsigned)(__WEAVE_TIMED | TP_TRACED)) + 1
					       : f->depth;
	/* cap == 0 (thread not set up, or exited): nothing to re-synchronise. */
	if (d < t->cap) {
		if (t->timing && time_exact())
			time_drop(t, d); /* exact mode: close the frames dropped */
		t->depth = d;
		fence();
		t->cur = t->stack[d].node;
	}
	/* A longjmp out of a declared allocator's call (its caller at depth
	   d or deeper) ended it. */
	if (rt_local.outer > d)
		rt_local.outer = 0;
	return v;
}

