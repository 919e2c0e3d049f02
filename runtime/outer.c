//go:build ignore

/* outer.c: declared allocators (weave.h, struct __weave_outer). A call of a
   function the user declared an allocator (--alloc, --calloc, --realloc,
   --free) or that carries __attribute__((malloc, alloc_size)) is an
   allocation site at its caller. While the outermost such call of a thread
   runs (rt_local.outer != 0), note_alloc records nothing: the malloc inside
   the wrapper - woven, or interposed in a library that was not - is the
   wrapper's block, which the call's end records once, at the caller's site,
   with the size the caller asked for. A call nested in another (a wrapper
   calling a wrapper: luaM_malloc_ calling l_alloc) records no block either.
   Frees are always honoured: a free-style or realloc-style call forgets its
   pointer argument before the wrapper runs (once freed, the address may be
   handed to another thread, which will record it), and charges its free when
   the wrapper frees (free-style: always; realloc-style: when it returns a
   block or was asked for size 0, which frees like Lua's l_alloc).
   A longjmp out of the call ends it: __weave_setjmp_return clears outer
   when the setjmp frame is the call's caller or an outer one. */

#include "internal.h"

enum { OUTER_OFF, OUTER_TOP, OUTER_NESTED };

struct __weave_outer __weave_outer_begin(const struct __weave_site *s)
{
	struct rt_local *l = &rt_local;
	struct __weave_outer o;
	memset(&o, 0, sizeof o);
	o.site = s;
	o.count = 1;
	if (l->in_rt)
		return o; /* a signal handler inside the runtime: pass through */
	if (l->outer) {
		o.state = OUTER_NESTED;
		return o;
	}
	o.state = OUTER_TOP;
	l->outer = (uintptr_t)__builtin_dwarf_cfa(); /* where the caller's frame ends */
	l->outer_allocs = 0;
	return o;
}

void *__weave_outer_ptr(struct __weave_outer *o, const void *p)
{
	struct rt_local *l = &rt_local;
	struct ent old;
	int e;
	if (o->state == OUTER_OFF || !p || l->in_rt)
		return (void *)(uintptr_t)p;
	rt_enter(l);
	e = errno;
	if (side_remove((uintptr_t)p, &old)) {
		if (o->site->op == __WEAVE_FREE) {
			charge_free(thread_get(l), &old);
		} else {
			o->old_addr = old.addr;
			o->old_val = old.val;
		}
	}
	errno = e;
	rt_exit(l);
	return (void *)(uintptr_t)p;
}

/* The bracket lies in the caller's frame, which may still be live at exit
   (main's, calling exit itself): its copies of the returned and the old
   pointer are the runtime's, no root, so they go before anything else (a
   block the program dropped was still reachable through them). */
void __weave_outer_end(struct __weave_outer *o)
{
	struct rt_local *l = &rt_local;
	const void *ret = o->ret;
	u64 old_addr = o->old_addr, n;
	int e;
	o->ret = 0;
	o->old_addr = 0;
	if (o->state == OUTER_OFF)
		return;
	if (o->state == OUTER_TOP)
		l->outer = 0;
	if (l->in_rt)
		return;
	rt_enter(l);
	e = errno;
	if (old_addr) {
		/* realloc-style: the old block went unless the call failed or
		   the wrapper kept it without allocating (sqlite3Realloc to
		   the same rounded size): then it is as it was. */
		struct ent old = {(uintptr_t)old_addr, o->old_val, 0}, stale;
		int kept = o->state == OUTER_TOP && (uintptr_t)ret == (uintptr_t)old_addr && !l->outer_allocs;
		if (kept) {
			side_insert(old.addr, old.val, &stale);
			errno = e;
			rt_exit(l);
			return;
		}
		if (ret || o->size == 0)
			charge_free(thread_get(l), &old);
		else
			side_insert(old.addr, old.val, &stale);
	}
	if (o->state == OUTER_TOP && ret && o->site->op != __WEAVE_FREE &&
	    !(o->site->op == __WEAVE_REALLOC && o->size == 0)) {
		if (__builtin_mul_overflow((u64)o->size, (u64)o->count, &n))
			n = ~0ull >> 1;
		note_alloc(l, o->site, (void *)(uintptr_t)ret, n);
	}
	errno = e;
	rt_exit(l);
}

/* The end of a value-returning call (weave.h): F's result in, the same out. */
void *__weave_outer_ret(struct __weave_outer *o, const void *ret)
{
	o->ret = ret;
	__weave_outer_end(o);
	return (void *)(uintptr_t)ret;
}
