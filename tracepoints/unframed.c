//go:build ignore

/* unframed.c: what a trace pattern can select, checked against the
   woven functions there are: a pattern that matches nothing, and one that
   selects only functions without a frame.

   A run-time pattern (weave trace) that matches no woven function and,
   for alloc:, no site seen and no woven function's file, is refused
   whole, the patterns unchanged: a typo would otherwise turn tracing to
   nothing and be answered "tracing nosuchfn". A function of a library
   not loaded yet cannot be named before it is.

   Only frameless ones: a frameless function (--frames auto) has no
   tracepoint, so WEAVE_TRACE=tick, tick an allocation leaf, would record nothing and say
   nothing. Every woven unit registers its function table
   (__weave_register_unit, pseudostack/enter.c), each function flagged
   frameless or not; a pattern that matches functions of the registered
   units, none of them with a frame, gets one line naming them and how to
   give them one (weave --frame). WEAVE_TRACE's patterns are checked at
   the first slow enter after start-up (the units' constructors run after
   the runtime's), weave trace's in its answer. */

#include "internal.h"

/* Whether pattern [p, pe) matches a woven function or (alloc:) a site
   seen or a woven function's file (a site's line is known once it has
   allocated). g_lock and units_lock held. */
RT_RARE static int tp_selects(const char *p, const char *pe)
{
	int alloc = tp_prefix(p, pe, "alloc:");
	if (alloc) {
		const char *c = pe;
		p += 6;
		if (pe - p == 1 && *p == '*')
			return 1;
		for (struct rt_thread *T = g_threads; T; T = T->next) {
			u32 n = __atomic_load_n(&T->nnodes, __ATOMIC_ACQUIRE);
			for (u32 i = T->first; i && n; i = node_at(i)->next, n--) {
				const struct rt_node *x = node_at(i);
				if (x->kind == KIND_A && tp_site_match(p, pe, x->pub.key))
					return 1;
			}
		}
		while (c > p && c[-1] >= '0' && c[-1] <= '9')
			c--;
		if (c < pe && c > p && c[-1] == ':')
			pe = c - 1; /* FILE:LINE: FILE */
	}
	for (const struct __weave_unit *u = g_units; u; u = u->next)
		for (unsigned i = 0; i < u->n; i++)
			if (alloc ? tp_file(p, pe, u->fns[i].file) : tp_fn_match(p, pe, &u->fns[i]))
				return 1;
	return 0;
}

/* Appends to out "error " and the patterns of the list pats that select
   nothing (tp_selects), if any; returns how many. g_lock held. */
RT_RARE static int tp_unmatched(const char *pats, struct sbuf *out)
{
	int n = 0;
	units_lock();
	for (const char *p = pats; *p;) {
		const char *pe = p;
		while (*pe && *pe != ',')
			pe++;
		if (!tp_selects(p, pe)) {
			sb_str(out, n++ ? ", '" : "error '");
			sb_mem(out, p, (wsize)(pe - p));
			sb_str(out, "'");
		}
		p = *pe ? pe + 1 : pe;
	}
	units_unlock();
	if (n)
		sb_str(out, n > 1 ? " match no woven function or allocation site: tracing unchanged"
				  : " matches no woven function or allocation site: tracing unchanged");
	return n;
}

/* Appends to out "; " and, if some function patterns of the list pats
   match registered functions, none of them framed, those patterns, the
   functions (the first few) and how to frame them. Returns how many
   patterns it named. units_lock keeps a dlclose from unmapping a table
   while it is read. */
RT_RARE static int tp_unframed(const char *pats, struct sbuf *out)
{
	const char *names[4], *one = NULL, *one_end = NULL;
	u64 total = 0;
	int named = 0, glob = 1;
	units_lock();
	for (const char *p = pats; *p;) {
		const char *pe = p;
		u64 n = 0;
		int framed = 0;
		while (*pe && *pe != ',')
			pe++;
		for (const struct __weave_unit *u = g_units; u && !framed && !tp_prefix(p, pe, "alloc:"); u = u->next) {
			for (unsigned i = 0; i < u->n && !framed; i++) {
				const struct __weave_fn *fn = &u->fns[i];
				if (tp_fn_match(p, pe, fn)) {
					framed = !(fn->flags & __WEAVE_FN_FRAMELESS);
					if (!framed && total + n < 4)
						names[total + n] = fn->name;
					n++;
				}
			}
		}
		if (n && !framed) {
			sb_str(out, named++ ? ", '" : "; '");
			sb_mem(out, p, (wsize)(pe - p));
			sb_str(out, "'");
			one = p;
			one_end = pe;
			glob = glob && !memchr(p, ':', (wsize)(pe - p));
			total += n;
		}
		p = *pe ? pe + 1 : pe;
	}
	units_unlock();
	if (!named)
		return 0;
	sb_str(out, named > 1 ? " match" : " matches");
	sb_str(out, " only functions without a frame, which have no tracepoint: ");
	for (u64 i = 0; i < total && i < 4; i++) {
		sb_str(out, i ? ", " : "");
		sb_str(out, names[i]);
	}
	if (total > 4) {
		sb_str(out, " and ");
		sb_u64(out, total - 4);
		sb_str(out, " more");
	}
	sb_str(out, " (give them one with --frame ");
	if (named == 1 && glob) {
		sb_str(out, "'");
		sb_mem(out, one, (wsize)(one_end - one));
		sb_str(out, "'");
	} else {
		sb_str(out, "GLOB");
	}
	sb_str(out, ", or --frames=all)");
	return named;
}

/* The first slow enter after WEAVE_TRACE was set: one line on stderr if
   a pattern selects only functions without a frame. in_rt set. */
RT_RARE static void tp_unframed_start(void)
{
	struct sbuf b = {.n = 0};
	const char *s;
	int e = errno;
	if (!__atomic_exchange_n(&g_tp_unframed, 0, __ATOMIC_RELAXED))
		return;
	s = rt_env("WEAVE_TRACE");
	if (s && tp_unframed(s, &b)) {
		struct sbuf m = {.n = 0};
		sb_str(&m, "WEAVE_TRACE:");
		sb_str(&m, b.s + 1); /* after the first "; " */
		sb_str(&m, "\n");
		rt_warn(m.s);
	}
	errno = e;
}
