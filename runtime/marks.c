//go:build ignore

/* marks.c: WEAVE_MARK (weave_api.h) and `weave mark PID LABEL`: named
   points of the run, in G records, and the generation each starts.

   A mark records its time (the timeline's clock), the heap then (bytes
   and blocks in use, allocations and frees so far) and starts a new
   generation: g_gen, the number of marks set so far, goes with every
   block allocated after it in the side table (side.c). Marks are kept in
   a fixed table (MARKS_MAX; later ones are counted, M marks_dropped),
   their labels copied into memory of the runtime's own. Under
   g_mk.lock, a spinlock taken with in_rt set; never malloc or stdio. */

#include "internal.h"

#define MARKS_MAX 4096
#define LABEL_MAX 200
#define LABEL_CHUNK 65536u

struct mark {
	const char *label;
	u64 ns, bytes, blocks, allocs, frees;
	u32 gen;    /* the generation it started */
	u32 thread; /* T id of the thread that set it, ~0: none (weave mark) */
};

static struct {
	u32 lock;
	u32 n;
	u64 dropped;
	struct mark m[MARKS_MAX];
	struct bump labels;
} g_mk;

/* The current generation: the number of marks set; read (relaxed) by
   every allocation, written under g_mk.lock. */
static u32 g_gen;

/* Copies label (at most LABEL_MAX bytes, newlines kept: the writer
   escapes them) into the runtime's memory; NULL when out of memory. Under
   the caller's lock. */
static const char *label_copy(struct bump *b, const char *label)
{
	wsize n = label ? strnlen(label, LABEL_MAX) : 0;
	char *s = bump_take(b, n + 1, LABEL_CHUNK);
	if (s) {
		memcpy(s, label ? label : "", n);
		s[n] = 0;
	}
	return s;
}

/* Sets a mark labelled label, by thread T (NULL: from outside). in_rt
   set. */
static void mark_set(const char *label, struct rt_thread *T)
{
	struct mark *m;
	spin_lock(&g_mk.lock);
	if (g_mk.n >= MARKS_MAX || !(label = label_copy(&g_mk.labels, label))) {
		g_mk.dropped++;
		spin_unlock(&g_mk.lock);
		return;
	}
	m = &g_mk.m[g_mk.n];
	m->label = label;
	m->ns = vm_now();
	m->bytes = vm_load(&g_vm.bytes);
	m->allocs = vm_load(&g_vm.allocs);
	m->frees = vm_load(&g_vm.frees);
	m->blocks = m->allocs > m->frees ? m->allocs - m->frees : 0;
	m->thread = T ? T->num : ~0u;
	m->gen = g_gen + 1;
	__atomic_store_n(&g_gen, m->gen, __ATOMIC_RELAXED);
	g_mk.n++;
	spin_unlock(&g_mk.lock);
}

void __weave_mark(const char *label)
{
	struct rt_local *l = &rt_local;
	int e = errno;
	if (l->in_rt || !rt_is_active())
		return;
	rt_enter(l);
	mark_set(label, l->state == ST_LIVE ? l->thr : NULL);
	rt_exit(l);
	errno = e;
}

/* Writes s to the end of a record, escaped as S records are. */
static void out_label(struct out *o, const char *s)
{
	out_ch(o, ' ');
	out_escaped(o, s);
}

/* The G records (and M marks_dropped). Exit writer, g_lock held. */
static void marks_write(struct out *o, const u32 *ids)
{
	u32 i;
	(void)ids;
	spin_lock(&g_mk.lock);
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
static void marks_fork_child(void)
{
	g_mk.n = 0;
	g_mk.dropped = 0;
	spin_unlock(&g_mk.lock);
}
