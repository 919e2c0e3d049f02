//go:build ignore

/* regions.c: WEAVE_REGION and weave_region_begin/end (weave_api.h), KPROF's
   labelled regions and ghc's cost centres: while a region is open, its
   thread's pseudo-stack has one more frame, a pseudo-function named after
   the label (file "(region)"), so everything inside is charged to it in
   every table, the time tables included.

   A label's function record is interned once (g_rg: by content, so the
   same label anywhere is one function; copied into the runtime's memory,
   never freed). The push and the pop are a woven function's that calls
   setjmp, __weave_enter_slot and __weave_leave, so timing and
   tracepoints treat a region as one, and its frame has a slot on the
   timed frames' stack, by which an end knows it is still there. Each
   thread keeps its open regions (rt_regions); an end pops the innermost
   one if its frame is still the thread's innermost (the function that
   opened it still runs there), and otherwise only forgets it: its frame
   went with a return or a longjmp. The regions' spans (first begin, last
   end, count, per thread and label, consecutive instances merged) go to
   U records for the timeline. */

#include "internal.h"

#define REGION_FNS 4096u /* the intern table: distinct labels at most half of it */
#define REGION_OPEN 64   /* open regions per thread; deeper ones are counted only */
#define SPANS_MAX 4096

struct region_open {
	struct __weave_frame f;
	const struct __weave_fn *fn;
	unsigned depth; /* the timed frames' stack's depth before the push */
	int pushed;
	u64 t0;
};

/* Per thread: the open regions, n of them, then over more not kept. A
   map of the thread's first begin (rt_regions), not a thread-local: 2.8
   KiB of TLS in every thread's stack map made one more page of each
   thread resident, and few threads open a region. */
struct regions {
	struct region_open r[REGION_OPEN];
	unsigned n, over;
	int last[REGION_OPEN]; /* per level: the index+1 of its last span in g_spans, 0: none */
};
static __thread struct regions *rt_regions;

/* The thread's regions, mapped at its first call; NULL if out of
   memory. A signal handler's begin between the check and the store maps
   its own, which the outer call then finds and keeps. */
static struct regions *regions_get(void)
{
	struct regions *g = rt_regions, *m;
	if (__builtin_expect(g != NULL, 1))
		return g;
	if (!(m = rt_map(sizeof *m)))
		return NULL;
	if ((g = rt_regions)) { /* a handler's came first */
		rt_unmap(m, sizeof *m);
		return g;
	}
	return rt_regions = m;
}

/* At thread exit: the thread's regions go (a later end finds none). */
static void regions_thread_exit(void)
{
	struct regions *g = rt_regions;
	rt_regions = NULL;
	if (g)
		rt_unmap(g, sizeof *g);
}

/* The interned region functions: an open-addressing table by label hash,
   under g_rg.lock (a spinlock taken with in_rt set). */
static struct {
	u32 lock;
	u32 n;
	const struct __weave_fn *tab[REGION_FNS];
	struct bump mem;
} g_rg RT_LARGE;

/* The spans: slots taken by an atomic counter, each written by its
   thread only. */
struct span {
	const struct __weave_fn *fn;
	u32 thread;
	u64 t0, t1, count;
};
static struct span g_spans[SPANS_MAX] RT_LARGE;
static u32 g_nspans;
static u64 g_spans_dropped;

/* Passes the regions' memory to f (the leak scan's exclusions). */
RT_RARE static void rg_exclude(void (*f)(const void *p, u64 n))
{
	f(&g_rg, sizeof g_rg);
	bump_each(&g_rg.mem, f);
	f(g_spans, sizeof g_spans);
}

/* label's function record, interned; NULL when the table or memory is
   full. in_rt set. */
RT_RARE static const struct __weave_fn *region_fn(const char *label)
{
	u32 h = 2166136261u, i;
	wsize n = label ? strnlen(label, LABEL_MAX) : 0, k;
	struct __weave_fn *fn = NULL;
	for (k = 0; k < n; k++)
		h = (h ^ (unsigned char)label[k]) * 16777619u;
	spin_lock(&g_rg.lock);
	for (i = h & (REGION_FNS - 1); g_rg.tab[i]; i = (i + 1) & (REGION_FNS - 1)) {
		const char *s = g_rg.tab[i]->name;
		if (strlen(s) == n && !memcmp(s, label, n)) {
			spin_unlock(&g_rg.lock);
			return g_rg.tab[i];
		}
	}
	if (g_rg.n < REGION_FNS / 2 && (fn = bump_take(&g_rg.mem, sizeof *fn, LABEL_CHUNK))) {
		if ((fn->name = label_copy(&g_rg.mem, label))) {
			fn->file = "(region)";
			__atomic_store_n(&g_rg.tab[i], fn, __ATOMIC_RELEASE);
			g_rg.n++;
		} else {
			fn = NULL;
		}
	}
	spin_unlock(&g_rg.lock);
	return fn;
}

/* Forgets the open regions of g whose frames a longjmp took (no guard
   ran). */
RT_RARE static void regions_prune(struct regions *g)
{
	struct __weave_thread *t = &__weave_tls;
	while (g->n) {
		const struct region_open *r = &g->r[g->n - 1];
		if (r->pushed && (t->depth <= r->depth || t->stack[r->depth + 1].node->key != r->fn))
			g->n--;
		else
			break;
	}
}

/* Returns the region's level (the number of regions open on the thread
   with it), which WEAVE_REGION's guard hands back: 1, the region not
   kept, when the thread's regions cannot be mapped. */
RT_RARE int __weave_region_begin(const char *label)
{
	struct rt_local *l = &rt_local;
	int e = errno;
	const struct __weave_fn *fn = NULL;
	struct region_open *r;
	struct regions *g = regions_get();
	if (!g) {
		errno = e;
		return 1;
	}
	if (!l->in_rt && rt_is_active() && g->n < REGION_OPEN && !g->over) {
		rt_enter(l);
		fn = region_fn(label);
		rt_exit(l);
	}
	regions_prune(g);
	if (!fn) {
		g->over++;
		errno = e;
		return (int)(g->n + g->over);
	}
	r = &g->r[g->n];
	r->fn = fn;
	r->depth = __weave_tls.depth;
	r->f = __weave_enter_slot(fn);
	r->pushed = (r->f.v & __WEAVE_TIMED) && __weave_tls.depth == r->depth + 1 && __weave_tls.cur->key == fn;
	if (!(r->f.v & __WEAVE_TAGS))
		__weave_leave(&r->f); /* pushed with no slot (none to be had): not kept */
	r->t0 = vm_now();
	g->n++;
	errno = e;
	return (int)g->n;
}

/* Adds the span of region r, which ends now, merged into the thread's
   last span if that is the same region's. */
RT_RARE static void span_add(struct regions *g, const struct region_open *r, unsigned level)
{
	struct rt_local *l = &rt_local;
	int *last = &g->last[level];
	u64 t1 = vm_now();
	u32 k;
	if (l->state != ST_LIVE)
		return;
	if (*last && g_spans[*last - 1].fn == r->fn) {
		struct span *s = &g_spans[*last - 1];
		__atomic_store_n(&s->t1, t1, __ATOMIC_RELAXED);
		__atomic_store_n(&s->count, s->count + 1, __ATOMIC_RELAXED);
		return;
	}
	k = __atomic_fetch_add(&g_nspans, 1, __ATOMIC_RELAXED);
	if (k >= SPANS_MAX) {
		__atomic_store_n(&g_nspans, SPANS_MAX, __ATOMIC_RELAXED);
		__atomic_fetch_add(&g_spans_dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	g_spans[k].thread = l->thr->num;
	g_spans[k].t0 = r->t0;
	g_spans[k].t1 = t1;
	g_spans[k].count = 1;
	__atomic_store_n(&g_spans[k].fn, r->fn, __ATOMIC_RELEASE);
	*last = (int)k + 1;
}

RT_RARE void __weave_region_end(void)
{
	struct __weave_thread *t = &__weave_tls;
	struct regions *g = rt_regions;
	struct region_open *r;
	int e = errno;
	if (!g)
		return; /* an end without a begin */
	if (g->over) {
		g->over--;
		return;
	}
	if (!g->n)
		return;
	r = &g->r[--g->n];
	if (r->pushed && t->depth == r->depth + 1 && t->cur->key == r->fn)
		__weave_leave(&r->f);
	span_add(g, r, g->n);
	errno = e;
}

/* WEAVE_REGION's cleanup: ends its region (*level, negated once the
   block ran to its end) and any region opened inside it and left open. */
RT_RARE void __weave_region_guard(int *level)
{
	unsigned lv = (unsigned)(*level < 0 ? -*level : *level);
	struct regions *g;
	while (lv && (g = rt_regions) && g->n + g->over >= lv)
		__weave_region_end();
}

/* The U records: thread t0 t1 count label. Exit writer, g_lock held. */
RT_RARE static void regions_write(struct out *o)
{
	u32 i, n = __atomic_load_n(&g_nspans, __ATOMIC_RELAXED);
	for (i = 0; i < n && i < SPANS_MAX; i++) {
		const struct span *s = &g_spans[i];
		const struct __weave_fn *fn = __atomic_load_n(&s->fn, __ATOMIC_ACQUIRE);
		if (!fn)
			continue;
		out_ch(o, 'U');
		out_field(o, s->thread);
		out_field(o, s->t0);
		out_field(o, __atomic_load_n(&s->t1, __ATOMIC_RELAXED));
		out_field(o, __atomic_load_n(&s->count, __ATOMIC_RELAXED));
		out_label(o, fn->name);
		out_ch(o, '\n');
		o->records++;
	}
	if (g_spans_dropped) {
		out_str(o, "M region_spans_dropped ");
		out_u64(o, g_spans_dropped);
		out_ch(o, '\n');
		o->records++;
	}
}
