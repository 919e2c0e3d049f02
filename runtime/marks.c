//go:build ignore

/* marks.c: WEAVE_MARK (weave_api.h) and `weave mark PID LABEL`: named
   points of the run, in G records, and the generation each starts.

   A mark records its time (the timeline's clock), the heap then (bytes
   and blocks in use, allocations and frees so far) and starts a new
   generation: g_gen, the number of marks set so far, goes with every
   block allocated after it in the side table (side.c). Marks are kept in
   a fixed table (MARKS_MAX; later ones are counted, M marks_dropped),
   their labels copied into memory of the runtime's own. Under
   g_mk.lock, a spinlock taken with in_rt set (lock order: g_lock, then
   g_mk.lock, then the side table's locks); never malloc or stdio.

   The blocks live at a mark, for weave report --between A B (KBDB's
   two-breakpoint leak view): at each mark the runtime walks the side
   table once and keeps, per allocation leaf and generation g >= 1 (the
   blocks allocated after mark g), the blocks still live and their bytes:
   W records. Blocks of generation 0 (allocated before any mark) are not
   kept, nor anything per block. So what a profile holds grows with the
   distinct (leaf, generation) pairs live at each mark, not with the
   heap; a mark costs a walk of the side table (as KBDB's breakpoint
   cost a collector's mark), and all marks together keep at most
   LIVE_CELLS pairs: a mark past that keeps none (M marks_live_dropped
   lists it). */

#include "internal.h"

#define MARKS_MAX 4096
#define LABEL_MAX 200
#define LABEL_CHUNK 65536u
#define LIVE_CELLS (1u << 20)

/* Blocks of leaf node, of generation gen, live at a mark. */
struct cell {
	u32 node, gen;
	u64 blocks, bytes;
};

struct mark {
	const char *label;
	u64 ns, bytes, blocks, allocs, frees;
	u32 gen;    /* the generation it started */
	u32 thread; /* T id of the thread that set it, ~0: none (weave mark) */
	u32 first, ncells; /* its cells in g_mk.cells */
	int dropped;       /* no room for its cells */
};

static struct {
	u32 lock;
	u32 n;
	u64 dropped;
	struct mark m[MARKS_MAX];
	struct bump labels;
	struct cell *cells; /* LIVE_CELLS, mapped at the first mark with live blocks */
	u32 ncells;
} g_mk RT_LARGE;
/* A mark was asked for (atomic): else the exit writer leaves g_mk alone,
   whose lock would make a page of it resident. */
static int g_mk_asked;

/* Passes the marks' memory to f (the leak scan's exclusions). */
RT_RARE static void mk_exclude(void (*f)(const void *p, u64 n))
{
	f(&g_mk, sizeof g_mk);
	f(g_mk.cells, g_mk.cells ? (u64)LIVE_CELLS * sizeof(struct cell) : 0);
	bump_each(&g_mk.labels, f);
}

/* A mark's scan: cells by (node, gen), open addressing in an mmap. */
struct live_scan {
	struct cell *tab;
	u32 cap, n, limit; /* limit: the mark's generation */
	int full;
};

RT_RARE static int live_grow(struct live_scan *sc)
{
	u32 cap = sc->cap ? sc->cap * 2 : 4096, i, j;
	struct cell *t = rt_map((wsize)cap * sizeof *t);
	if (!t)
		return 0;
	for (i = 0; i < sc->cap; i++) {
		if (!sc->tab[i].blocks)
			continue;
		for (j = (u32)mix64((u64)sc->tab[i].node << 32 | sc->tab[i].gen) & (cap - 1); t[j].blocks; j = (j + 1) & (cap - 1))
			;
		t[j] = sc->tab[i];
	}
	if (sc->tab)
		rt_unmap(sc->tab, (wsize)sc->cap * sizeof *t);
	sc->tab = t;
	sc->cap = cap;
	return 1;
}

/* side_each's callback: counts a block of generation 1 .. limit-1. */
RT_RARE static void live_block(uintptr_t a, u64 val, u32 gen, void *arg)
{
	struct live_scan *sc = arg;
	u32 node = (u32)(val & NODE_MASK), j;
	if (!gen || gen >= sc->limit || !node || sc->full)
		return;
	if ((sc->n + 1) * 4 > sc->cap * 3 && !live_grow(sc)) {
		sc->full = 1;
		return;
	}
	for (j = (u32)mix64((u64)node << 32 | gen) & (sc->cap - 1); sc->tab[j].blocks; j = (j + 1) & (sc->cap - 1))
		if (sc->tab[j].node == node && sc->tab[j].gen == gen)
			break;
	if (!sc->tab[j].blocks) {
		sc->tab[j].node = node;
		sc->tab[j].gen = gen;
		sc->n++;
	}
	sc->tab[j].blocks++;
	sc->tab[j].bytes += val_size(a, val);
}

/* Keeps mark m's cells: the blocks of earlier generations live now.
   g_mk.lock held. */
RT_RARE static void live_take(struct mark *m)
{
	struct live_scan sc = {.limit = m->gen};
	u32 i;
	m->first = g_mk.ncells;
	if (m->gen == 1)
		return; /* every block is of generation 0 */
	side_each(live_block, &sc);
	if (sc.full || g_mk.ncells + sc.n > LIVE_CELLS ||
	    (sc.n && !g_mk.cells && !(g_mk.cells = rt_map((wsize)LIVE_CELLS * sizeof(struct cell))))) {
		m->dropped = 1;
	} else {
		for (i = 0; i < sc.cap; i++)
			if (sc.tab[i].blocks)
				g_mk.cells[g_mk.ncells++] = sc.tab[i];
		m->ncells = g_mk.ncells - m->first;
	}
	if (sc.tab)
		rt_unmap(sc.tab, (wsize)sc.cap * sizeof *sc.tab);
}

/* Copies label (at most LABEL_MAX bytes, newlines kept: the writer
   escapes them) into the runtime's memory; NULL when out of memory. Under
   the caller's lock. */
RT_RARE static const char *label_copy(struct bump *b, const char *label)
{
	wsize n = label ? strnlen(label, LABEL_MAX) : 0;
	char *s = bump_take(b, n + 1, LABEL_CHUNK);
	if (s) {
		memcpy(s, label ? label : "", n);
		s[n] = 0;
	}
	return s;
}

/* Sets a mark labelled label, by thread T (NULL: from outside, weave
   mark: the control request runs with g_lock held). Returns its
   generation, 0 when it was not kept. in_rt set. */
RT_RARE static u32 mark_set(const char *label, struct rt_thread *T)
{
	struct mark *m;
	u32 gen;
	__atomic_store_n(&g_mk_asked, 1, __ATOMIC_RELAXED);
	spin_lock(&g_mk.lock);
	if (g_mk.n >= MARKS_MAX || !(label = label_copy(&g_mk.labels, label))) {
		g_mk.dropped++;
		spin_unlock(&g_mk.lock);
		return 0;
	}
	m = &g_mk.m[g_mk.n];
	m->label = label;
	m->ns = vm_now();
	m->bytes = vm_bytes();
	vm_counts(&m->allocs, &m->frees);
	m->blocks = m->allocs > m->frees ? m->allocs - m->frees : 0;
	m->thread = T ? T->num : ~0u;
	m->gen = g_gen + 1;
	m->ncells = 0;
	m->dropped = 0;
	__atomic_store_n(&g_gen, m->gen, __ATOMIC_RELAXED);
	__atomic_fetch_or(&g_tp_attn, ATTN_GEN, __ATOMIC_RELAXED); /* advice.c's fast paths */
	live_take(m);
	g_mk.n++;
	gen = m->gen;
	spin_unlock(&g_mk.lock);
	return gen;
}

RT_RARE void __weave_mark(const char *label)
{
	struct rt_local *l = &rt_local;
	int e = errno;
	if (l->in_rt || !rt_is_active())
		return;
	rt_enter(l);
	mark_set(label, thread_get(l));
	rt_exit(l);
	errno = e;
}

/* Writes s to the end of a record, escaped as S records are. */
RT_RARE static void out_label(struct out *o, const char *s)
{
	out_ch(o, ' ');
	out_escaped(o, s);
}

/* Takes g_mk.lock unless a thread holds it for long (a crash in a
   mark's scan): then 0. */
RT_RARE static int marks_lock_writer(void)
{
	unsigned n;
	for (n = 0; __atomic_exchange_n(&g_mk.lock, 1, __ATOMIC_ACQUIRE); n++) {
		if (n > 100000)
			return 0;
		sched_yield();
	}
	return 1;
}

/* The G and W records (and M marks_dropped, marks_live_dropped). Exit
   writer, g_lock held. */
RT_RARE static void marks_write(struct writer *w)
{
	struct out *o = w->o;
	u32 i, k, ndropped = 0;
	if (!__atomic_load_n(&g_mk_asked, __ATOMIC_RELAXED) || !marks_lock_writer())
		return;
	for (i = 0; i < g_mk.n; i++) {
		const struct mark *m = &g_mk.m[i];
		out_ch(o, 'G');
		out_field(o, m->gen);
		out_field(o, m->ns);
		out_field(o, m->bytes);
		out_field(o, m->blocks);
		out_field(o, m->allocs);
		out_field(o, m->frees);
		out_field(o, m->thread == ~0u ? ~0ull : m->thread);
		out_label(o, m->label);
		out_ch(o, '\n');
		o->records++;
		ndropped += m->dropped;
		for (k = m->first; k < m->first + m->ncells; k++) {
			const struct cell *c = &g_mk.cells[k];
			if (c->node >= w->nids || w->ids[c->node] == NO_ID)
				continue;
			out_ch(o, 'W');
			out_field(o, m->gen);
			out_field(o, w->ids[c->node]);
			out_field(o, c->gen);
			out_field(o, c->blocks);
			out_field(o, c->bytes);
			out_ch(o, '\n');
			o->records++;
		}
	}
	if (ndropped) {
		out_str(o, "M marks_live_dropped");
		for (i = 0; i < g_mk.n; i++)
			if (g_mk.m[i].dropped)
				out_field(o, g_mk.m[i].gen);
		out_ch(o, '\n');
		o->records++;
	}
	if (g_mk.dropped) {
		out_str(o, "M marks_dropped ");
		out_u64(o, g_mk.dropped);
		out_ch(o, '\n');
		o->records++;
	}
	spin_unlock(&g_mk.lock);
}

/* Fork: the child counts only what it does itself (exit.c), so it starts
   with no marks; the generation goes on. */
static void marks_fork_prepare(void) { spin_lock(&g_mk.lock); }
static void marks_fork_parent(void) { spin_unlock(&g_mk.lock); }
RT_RARE static void marks_fork_child(void)
{
	g_mk.n = 0;
	g_mk.dropped = 0;
	g_mk.ncells = 0;
	spin_unlock(&g_mk.lock);
}
