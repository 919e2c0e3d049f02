//go:build ignore

/* unframed.c: a trace pattern that selects only functions without a
   frame. A frameless function (--frames auto) has no tracepoint, so
   WEAVE_TRACE=tick, tick an allocation leaf, would record nothing and say
   nothing. Every woven unit registers its function table
   (__weave_register_unit, pseudostack/enter.c), each function flagged
   frameless or not; a pattern that matches functions of the registered
   units, none of them with a frame, gets one line naming them and how to
   give them one (weave --frame). WEAVE_TRACE's patterns are checked at
   the first slow enter after start-up (the units' constructors run after
   the runtime's), weave trace's in its answer. */

#include "internal.h"

/* Appends to out "; " and, if some function patterns of the list pats
   match registered functions, none of them framed, those patterns, the
   functions (the first few) and how to frame them. Returns how many
   patterns it named. units_lock keeps a dlclose from unmapping a table
   while it is read. */
static int tp_unframed(const char *pats, struct sbuf *out)
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
static void tp_unframed_start(void)
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
