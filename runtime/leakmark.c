//go:build ignore

/* leakmark.c: the leak scan's state, its page index and its mark
   (leakscan.c lists the blocks, finds the roots and calls it).

   The mark is memory-bound: on a heap of small blocks nearly all of its
   time is cache and TLB misses, on the words of each block and on the
   lookups (index entry, block address, size, state). So the lookups of
   one scan go through a pipeline (ls_scan), the mark stack is drained a
   batch at a time with the batch's first lines fetched together
   (ls_drain), and a long run of pushes is sorted into address order
   (ls_sort_stack). None of this changes the result: marking from the
   roots is a fixpoint, and a leader's clique is complete before the
   next leader starts. */

#include "internal.h"

#define LS_SIGNAL SIGURG
#define LS_WAIT_MS 300
#define LS_MAXTASKS 4096
#define LS_PAGE 10 /* the page index's granule: 1 KiB */
#define LS_CHUNK 30 /* a page-index chunk: 1 GiB of address space */
#define LS_TOP (48 - LS_CHUNK)
#define LS_NCHUNKS 64u /* chunks listed for unmapping: more, and the 2 MiB top is read whole */
#define LS_GLIBC_HEAP (64u << 20)
#define LS_AHEAD 2048 /* how far ahead a sequential read prefetches, bytes: past the
			 4 KiB page, where the hardware's prefetch stops */
/* A block's size takes 4 bytes in the scan (its node none: ls_merge finds
   it again), these sizes and more are kept aside, for up to LS_NBIGS
   blocks (more fail the scan). */
#define LS_SIZE_ESC 0xffffffffu
#define LS_NBIGS 64u
/* Nor does an address take 8: the blocks' addresses keep their low 32
   bits, the high ones are kept once for each run of blocks that share
   them (a 4 GiB region: the heap's, the maps'), for up to LS_NSEGS runs
   (more fail the scan). */
#define LS_NSEGS 1024u
/* Nor does its node take 4 unless the blocks are 64 bytes on average or
   more (the nodes then cost at most 1/16 of the blocks' bytes, and 64 KiB
   more): a heap of small blocks (binary-trees) has its peak at the scan,
   whose tables then cost as few bytes a block as they can; the nodes are
   found again by walking the side table a second time (ls_node_next). */
#define LS_NODE_COST 64u

enum { LS_UNREACHED, LS_INDIRECT, LS_POSSIBLE, LS_REACHABLE };
#define LS_ROOTS (~0u)     /* marking from the roots */
#define LS_EDGES (~0u - 1) /* listing the lost blocks' edges */
#define LS_GRAPH (~0u - 2) /* listing every block's edges */
#define LS_INTERIOR (1u << 31) /* an edge's flag: a pointer into the block, not to its start */
#define LS_ROOT_OWN 3u /* a marking tag: a root of the program's own (stacks, registers, its files' maps) */

/* A node's blocks by kind, in the order of the profile's L record:
   definite, indirect, possible, reachable. */
struct ls_tally {
	u32 node;
	u64 blocks[4], bytes[4];
};

/* A task stopped for the scan (leakstop.c). */
struct ls_task {
	int tid;
	int answered;      /* atomic: stopped, sp and its registers noted */
	int traced;        /* the tracer's LT_* state (ptrace) */
	int sig;           /* the signal whose delivery its ptrace stop caught */
	uintptr_t sp;
	const void *uc;    /* its signal context, while it waits (signal) */
	uintptr_t regs[16]; /* its general registers (ptrace), ls_task_regs' order */
};

/* How the other threads were stopped (M leak_stop). */
enum { LS_STOP_NONE, LS_STOP_PTRACE, LS_STOP_SIGNAL };

struct ls_range {
	uintptr_t lo, hi;
};

/* The scan's state; everything in it is mapped memory (struct tmpmem). */
static struct {
	int done, ok, nomem;                 /* scanned; the tallies are valid; the scan ran out of memory */
	int glibc; u32 root_tag;             /* the blocks are glibc's malloc's (ls_chunk_header); ls_root's tag */
	u64 ntally_cap;
	struct ls_tally *tally;              /* open addressing by node */
	u64 kind_blocks[4], kind_bytes[4];   /* totals over every block */
	u64 ns;                              /* how long the scan took */
	/* During the scan only. */
	u64 n;                               /* blocks */
	u64 nshared;                         /* blocks at the address of the one before (ls_merge) */
	u32 *alo;                            /* by address: the low 32 bits (ls_addr) */
	u32 *size;                           /* its size, or LS_SIZE_ESC: in bigs */
	u32 *node;                           /* its node, unless the blocks are small (LS_NODE_COST) */
	u64 node_map;                        /* node's mapping */
	struct ent *spill;                   /* the spill table, sorted (ls_merge) */
	u64 nspill;
	unsigned char *st;                   /* LS_* */
	u64 *gone;                           /* blocks not in readable memory, a bit each (ls_find_gone), or NULL */
	u32 *stack;
	u64 sp, stack_cap;
	u32 leader;                          /* what the mark does: LS_ROOTS, LS_EDGES, LS_GRAPH, a clique's leader */
	int graph;                           /* the edges are every block's: marks follow them */
	u32 *off, *edge;                     /* the graph: block i's edges are edge[off[i]..off[i+1]) */
	u64 edge_max;                        /* the room for edges */
	u32 threads;                         /* the last edges pass's threads (ls_par_run) */
	u64 bytes;                           /* the blocks' bytes */
	int huge;                            /* the page index in huge pages */
	u64 **top;                           /* page index: 1 + first block, count */
	u32 nchunks;                         /* the page index's chunks mapped: */
	u32 chunk[LS_NCHUNKS];               /* their top entries, the first LS_NCHUNKS */
	uintptr_t lo, hi;                    /* the blocks' span */
	struct ls_range *excl;               /* the runtime's memory, sorted */
	u32 nexcl, excl_cap;
	struct ls_task *tasks;
	u32 ntasks;
	int stop;                            /* LS_STOP_*: how they were stopped */
	u64 stop_ns;                         /* how long stopping and resuming them took */
	struct ls_range saved[2];            /* the exiting thread's registers, saved by its exit path (leakstack.c) */
	const void *sig_uc;                  /* its signal context, exit called on sigaltstack (leakstack.c) */
	/* Last: their pages are written only as far as they are used. */
	u32 nsegs, nbigs;
	struct {
		u32 hi;                      /* the high 32 bits of the addresses */
		u64 first;                   /* of the blocks from this one on */
	} segs[LS_NSEGS];
	struct {
		u64 i, size;
	} bigs[LS_NBIGS];                    /* sizes from LS_SIZE_ESC on, by block */
} g_ls RT_LARGE;

static int g_ls_hold;          /* futex: stopped threads wait while 1 */
static u64 g_ls_park_until;    /* atomic: CLOCK_MONOTONIC ns when parked threads go on anyway; 0: never (leakstop.c) */
static struct sigaction g_ls_prev;
static uintptr_t *g_ls_dead;   /* stack pointers noted by dying threads (ring) */
static u32 g_ls_ndead;         /* atomic: notes taken */
#define LS_DEAD_CAP 4096u

static int g_cfg_leak_scan = 1;      /* WEAVE_LEAK_SCAN */
static int g_cfg_leak_exitcode = -1; /* WEAVE_LEAK_EXITCODE, -1 for off */
static void ls_group_all(void);

static int ls_ok(void) { return g_ls.ok; }
static const char *ls_failure(void) { return g_ls.nomem ? "out of memory" : g_ls.done && !g_ls.ok ? "maps unreadable" : NULL; }

/* ------------------------------------------------------------ blocks */

/* The address of block i. */
static inline uintptr_t ls_addr(u64 i)
{
	u32 a = 0, b = g_ls.nsegs;
	while (b - a > 1) {
		u32 m = a + (b - a) / 2;
		if (g_ls.segs[m].first <= i)
			a = m;
		else
			b = m;
	}
	return (uintptr_t)g_ls.segs[a].hi << 32 | g_ls.alo[i];
}

/* The addresses of blocks i = 0, 1, ... in turn, without ls_addr's search. */
struct ls_cursor {
	u32 s;
	u64 next; /* the first block of segment s + 1 */
	uintptr_t hi;
};

RT_RARE static void ls_cursor_start(struct ls_cursor *c)
{
	c->s = 0;
	c->hi = g_ls.nsegs ? (uintptr_t)g_ls.segs[0].hi << 32 : 0;
	c->next = g_ls.nsegs > 1 ? g_ls.segs[1].first : ~(u64)0;
}

static inline uintptr_t ls_cursor_addr(struct ls_cursor *c, u64 i)
{
	while (i >= c->next) {
		c->s++;
		c->hi = (uintptr_t)g_ls.segs[c->s].hi << 32;
		c->next = c->s + 1 < g_ls.nsegs ? g_ls.segs[c->s + 1].first : ~(u64)0;
	}
	return c->hi | g_ls.alo[i];
}

RT_RARE static __attribute__((noinline)) u64 ls_big_size(u32 i)
{
	u32 b;
	for (b = 0; b < g_ls.nbigs; b++)
		if (g_ls.bigs[b].i == i)
			return g_ls.bigs[b].size;
	return LS_SIZE_ESC;
}

static inline u64 ls_size(u32 i)
{
	u32 s = g_ls.size[i];
	return s != LS_SIZE_ESC ? s : ls_big_size(i);
}

/* Whether block i's memory is not there to read (a stale record: freed
   where the runtime did not see it, its pages unmapped). */
static inline int ls_gone(u64 i)
{
	return g_ls.gone && (g_ls.gone[i >> 6] >> (i & 63) & 1);
}

/* Notes [p, p + n) as the runtime's: not a root. */
RT_RARE static void ls_exclude(const void *p, u64 n)
{
	if (!p || !n || g_ls.nexcl == g_ls.excl_cap)
		return;
	g_ls.excl[g_ls.nexcl].lo = (uintptr_t)p;
	g_ls.excl[g_ls.nexcl].hi = (uintptr_t)p + n;
	g_ls.nexcl++;
}

/* ------------------------------------------------------- page index */

#define LS_GRAN (1u << LS_PAGE)
#define LS_SLOTS (1u << (LS_CHUNK - LS_PAGE)) /* index entries per chunk */

/* The index entry of address p, or NULL (the chunk is not mapped; create:
   map it). */
static inline u64 *ls_entry(uintptr_t p, int create)
{
	u64 **c = &g_ls.top[p >> LS_CHUNK];
	if (!*c) {
		if (!create || !(*c = rt_map(sizeof(u64) * LS_SLOTS)))
			return NULL;
		if (g_ls.nchunks < LS_NCHUNKS)
			g_ls.chunk[g_ls.nchunks] = (u32)(p >> LS_CHUNK);
		g_ls.nchunks++;
		if (g_ls.huge) /* fewer page faults and TLB misses; not for a small heap's few entries */
			madvise(*c, sizeof(u64) * LS_SLOTS, MADV_HUGEPAGE);
		ls_exclude(*c, sizeof(u64) * LS_SLOTS);
	}
	return &(*c)[(p >> LS_PAGE) & (LS_SLOTS - 1)];
}

/* Fills the page index: each granule's entry is (1 + the first block that
   overlaps it) << 32 | how many blocks from that one to the last that
   does. Blocks nest (a pointcut's allocator carving its blocks out of a
   block it got from malloc: sqlite's lookaside slots): the blocks that
   overlap a granule inside the outer block are the outer block and those
   in the granule, with the blocks between them in address order, which
   the range must span for ls_find to see the last ones. */
RT_RARE static int ls_index(struct tmpmem *tm)
{
	struct ls_cursor c;
	u64 i;
	if (!(g_ls.top = tmp_alloc(tm, sizeof(u64 *) << LS_TOP)))
		return 0;
	if (!g_ls.n)
		return 1;
	g_ls.lo = ls_addr(0);
	g_ls.hi = 0;
	g_ls.huge = g_ls.bytes >= (256u << 20);
	ls_cursor_start(&c);
	for (i = 0; i < g_ls.n; i++) {
		u64 size = ls_size((u32)i);
		uintptr_t a = ls_cursor_addr(&c, i), end = a + (size ? size : 1), p;
		if (end > g_ls.hi)
			g_ls.hi = end;
		if (end >> 48)
			return 0;
		for (p = a & ~(uintptr_t)(LS_GRAN - 1); p < end; p += LS_GRAN) {
			u64 *e = ls_entry(p, 1);
			if (!e)
				return 0;
			if (!*e)
				*e = (i + 1) << 32 | 1;
			else
				*e = (*e & ~(u64)0xffffffffu) | (i + 2 - (*e >> 32));
		}
	}
	return 1;
}

/* The last block starting at or before p, or -1, given p's index entry e. */
static inline int64_t ls_last_start(uintptr_t p, u64 e)
{
	u64 lo = (e >> 32) - 1, hi = lo + (e & 0xffffffffu);
	/* It is in [lo, hi). */
	while (hi - lo > 1) {
		u64 mid = lo + (hi - lo) / 2;
		if (ls_addr(mid) <= p)
			lo = mid;
		else
			hi = mid;
	}
	return e && ls_addr(lo) <= p ? (int64_t)lo : -1;
}

/* The block holding p, or -1, given p's index entry e. */
static inline int64_t ls_find(uintptr_t p, u64 e)
{
	int64_t j = ls_last_start(p, e);
	u64 size;
	if (j < 0)
		return -1;
	size = g_ls.size[j];
	if (size == LS_SIZE_ESC)
		size = ls_size((u32)j);
	return p - ls_addr((u64)j) < (size ? size : 1) ? j : -1;
}

/* ------------------------------------------------------------- marking */

static inline void ls_push(u32 i)
{
	if (g_ls.sp < g_ls.stack_cap)
		g_ls.stack[g_ls.sp++] = i;
}

/* Marks block i, found from word w: memcheck's
   lc_push_without_clique_if_a_chunk_ptr (leader LS_ROOTS) and
   lc_push_with_clique_if_a_chunk_ptr (from unreached block leader). */
static inline void ls_mark(int64_t i, int start, int definite, u32 leader)
{
	unsigned char *st;
	if (i < 0)
		return;
	st = &g_ls.st[i];
	if (leader != LS_ROOTS) {
		if ((u32)i != leader && *st == LS_UNREACHED) {
			*st = LS_INDIRECT;
			ls_push((u32)i);
		}
	} else if (*st == LS_REACHABLE) {
		return;
	} else if (start && definite) {
		*st = LS_REACHABLE;
		ls_push((u32)i);
	} else if (*st == LS_UNREACHED) {
		*st = LS_POSSIBLE;
		ls_push((u32)i);
	}
}

/* Words that may be pointers go through a pipeline, LS_PIPE words per
   stage, so that the cache misses of several lookups overlap: the index
   entry prefetched, then the entry read and its first block's address,
   size and state prefetched, then the lookup and the mark (or the edge).
   The pipeline runs on across blocks and is flushed only when the mark
   stack is empty (ls_drain): marking is a fixpoint, so the delay does not
   change the result, and a clique (ls_clique_scan) is still complete
   before the next leader starts. */
#define LS_PIPE 8
#define LS_RING (4 * LS_PIPE) /* holds the two stages and the word coming in */
struct ls_cand {
	uintptr_t w;
	u64 e;   /* stage 1: the entry's address; stage 2: the entry */
	u32 tag; /* marking: whether the word is in a root or reachable block; edges: its block */
};
struct ls_pipe {
	struct ls_cand q[LS_RING];
	u32 in, mid, out;
	/* Listing edges (ls_edges): the pipe's slice of the blocks writes its
	   edges to edge[nedge..cap) and its blocks' offsets to off[enext..]. */
	u64 nedge, cap, enext;
	int over; /* more edges than cap */
};
static struct ls_pipe g_lq;                        /* the mark's, and the first slice's */
static struct ls_pipe g_lq_more[LS_THREADS_MAX - 1]; /* the helper threads' slices' */

static inline void ls_stage2(struct ls_cand *c)
{
	u64 e = *(const u64 *)(uintptr_t)c->e, first = (e >> 32) - 1;
	c->e = e;
	if (e) {
		__builtin_prefetch(&g_ls.alo[first]);
		__builtin_prefetch(&g_ls.size[first]);
		__builtin_prefetch(&g_ls.st[first]);
	}
}

/* An edge from block src to block dst (ls_edges): src comes in address
   order. Only edges between unreached blocks matter to memcheck's clique
   rule, and a block's pointers to itself to nothing. */
static inline void ls_edge(struct ls_pipe *lp, u32 src, u32 dst, int start)
{
	if (dst == src || (g_ls.leader == LS_EDGES && g_ls.st[dst] != LS_UNREACHED))
		return;
	if (lp->nedge == lp->cap) {
		lp->over = 1;
		return;
	}
	while (lp->enext <= src)
		g_ls.off[lp->enext++] = (u32)lp->nedge;
	g_ls.edge[lp->nedge++] = dst | (start ? 0 : LS_INTERIOR);
}

/* Whether offset off of a block of n requested bytes is where glibc's
   allocator keeps the next chunk's header: the chunk takes n + 8 bytes
   rounded up to 16 (at least 32) from 16 bytes before the block, and its
   last 8 bytes are the next chunk's first. The allocator's own pointers
   (its top chunk, its bins, stale ones in a free chunk) point there, into
   a block whose size is within 8 bytes of its chunk's; memcheck's
   allocator keeps none; nor the program's, but in its own roots (LS_ROOT_OWN: mawk's END cursor). */
static inline int ls_chunk_header(u64 off, u64 n)
{
	u64 s = (n + 8 + 15) & ~(u64)15;
	return off == (s < 32 ? 32 : s) - 16;
}

/* Whether a pointer off bytes into block a of n bytes counts as one to
   its start: memcheck's default leak heuristics (heuristic_reachedness,
   --leak-check-heuristics=all), the block's first words saying what the
   pointer is. newarray: 8 bytes in, after a count that divides the rest
   (which also takes in length64's 8 bytes in after the rest's size:
   sqlite's allocator); stdstring: 24 bytes in, after a length of at most
   the capacity that, with the 24 bytes and a NUL, is the block's size.
   multipleinheritance, which needs symbols to know a vtable, is left
   out: no C program has one. */
static inline int ls_heuristic(uintptr_t a, u64 off, u64 n)
{
	const u64 *w = (const u64 *)a;
	if (off == 8)
		return w[0] > 0 && (n - 8) % w[0] == 0;
	return off == 24 && 24 + w[1] + 1 == n && w[0] <= w[1];
}

/* Word c points into block j: its mark or edge. */
RT_RARE static inline void ls_emit_to(struct ls_pipe *lp, const struct ls_cand *c, int64_t j)
{
	uintptr_t a = ls_addr((u64)j);
	u64 n;
	int start = c->w == a;
	if (!start) {
		n = ls_size((u32)j);
		if (g_ls.glibc && !(g_ls.leader == LS_ROOTS && c->tag == LS_ROOT_OWN) && ls_chunk_header(c->w - a, n))
			return;
		start = !ls_gone((u64)j) && ls_heuristic(a, c->w - a, n);
	}
	if (g_ls.leader == LS_EDGES || g_ls.leader == LS_GRAPH)
		ls_edge(lp, c->tag, (u32)j, start);
	else
		ls_mark(j, start, (int)(c->tag & 1), g_ls.leader);
}

/* ls_emit once blocks share an address (ls_merge: the larger first):
   the word reaches each block that starts where the last start at or
   before it is and holds it, as a pointer to its start or into it. */
RT_RARE static __attribute__((noinline)) void ls_emit_shared(struct ls_pipe *lp, const struct ls_cand *c)
{
	int64_t j = ls_last_start(c->w, c->e);
	uintptr_t a = j >= 0 ? ls_addr((u64)j) : 0;
	for (; j >= 0 && ls_addr((u64)j) == a; j--) {
		u64 n = ls_size((u32)j);
		if (c->w - a < (n ? n : 1))
			ls_emit_to(lp, c, j);
	}
}

static inline void ls_emit(struct ls_pipe *lp, const struct ls_cand *c)
{
	int64_t j;
	if (__builtin_expect(g_ls.nshared != 0, 0)) {
		ls_emit_shared(lp, c);
		return;
	}
	if ((j = ls_find(c->w, c->e)) >= 0)
		ls_emit_to(lp, c, j);
}

/* Feeds the aligned words of [lo, hi) into the pipeline, whose counters
   the caller keeps (in registers, over many blocks). */
static inline __attribute__((always_inline)) void ls_words(struct ls_pipe *lp, uintptr_t lo, uintptr_t hi, u32 tag,
							   u32 *pin, u32 *pmid, u32 *pout)
{
	const uintptr_t *p = (const uintptr_t *)((lo + 7) & ~(uintptr_t)7), *end = (const uintptr_t *)(hi & ~(uintptr_t)7);
	uintptr_t base = g_ls.lo, span = g_ls.hi - g_ls.lo;
	struct ls_cand *q = lp->q;
	u32 in = *pin, mid = *pmid, out = *pout;
	while (p < end) {
		/* A line none of whose words falls in the blocks' span (most
		   of them: data, not pointers) costs one branch. */
		const uintptr_t *stop = p + 1;
		if (end - p >= 8) {
			/* Any eight words, aligned or not: blocks of a few
			   lines (widgets' 208 bytes) are mostly not. */
			__builtin_prefetch(p + LS_AHEAD / 8);
			if ((p[0] - base >= span) & (p[1] - base >= span) & (p[2] - base >= span) & (p[3] - base >= span) &
			    (p[4] - base >= span) & (p[5] - base >= span) & (p[6] - base >= span) & (p[7] - base >= span)) {
				p += 8;
				continue;
			}
			stop = p + 8;
		}
		for (; p < stop; p++) {
			uintptr_t w = *p;
			u64 *e;
			if (w - base >= span || !(e = ls_entry(w, 0)))
				continue;
			__builtin_prefetch(e);
			q[in % LS_RING] = (struct ls_cand){w, (u64)(uintptr_t)e, tag};
			in++;
			if (in - mid > LS_PIPE)
				ls_stage2(&q[mid++ % LS_RING]);
			if (mid - out > LS_PIPE)
				ls_emit(lp, &q[out++ % LS_RING]);
		}
	}
	*pin = in, *pmid = mid, *pout = out;
}

RT_RARE static void ls_scan(uintptr_t lo, uintptr_t hi, u32 tag)
{
	ls_words(&g_lq, lo, hi, tag, &g_lq.in, &g_lq.mid, &g_lq.out);
}

/* Completes the words in pipeline lp. */
RT_RARE static void ls_flush(struct ls_pipe *lp)
{
	while (lp->mid != lp->in)
		ls_stage2(&lp->q[lp->mid++ % LS_RING]);
	while (lp->out != lp->in)
		ls_emit(lp, &lp->q[lp->out++ % LS_RING]);
}

/* Sorts the mark stack's entries from the from'th on by block index,
   highest first (so that they pop in address order), when there are many
   and the free part of the stack can hold a copy: a block or a root range
   full of pointers (an array of them) then has the blocks it points to
   scanned in address order, which the hardware prefetcher and the TLB
   follow, not in the order of the pointers. An LSD radix sort, 11 bits a
   pass; any order gives the same marks. */
RT_RARE static void ls_sort_stack(u64 from)
{
	u32 *a = g_ls.stack + from, *b = g_ls.stack + g_ls.sp, *t, cnt[1u << 11];
	u64 n = g_ls.sp - from, i;
	int sh;
	if (n < 4096 || g_ls.stack_cap - g_ls.sp < n)
		return;
	for (sh = 0; sh < 33; sh += 11) {
		u32 sum = 0, c;
		memset(cnt, 0, sizeof cnt);
		for (i = 0; i < n; i++)
			cnt[~a[i] >> sh & 2047]++;
		for (c = 0; c < 2048; c++) {
			u32 k = cnt[c];
			cnt[c] = sum;
			sum += k;
		}
		for (i = 0; i < n; i++)
			b[cnt[~a[i] >> sh & 2047]++] = a[i];
		t = a, a = b, b = t;
	}
	/* After three passes the sorted copy is the one above the stack. */
	memcpy(g_ls.stack + from, a, n * sizeof *a);
}

/* Marks what block x points to, from the graph. */
RT_RARE static void ls_follow(u32 x)
{
	int definite = g_ls.st[x] == LS_REACHABLE;
	u64 k;
	for (k = g_ls.off[x]; k < g_ls.off[x + 1]; k++) {
		u32 y = g_ls.edge[k];
		ls_mark(y & ~LS_INTERIOR, !(y & LS_INTERIOR), definite, LS_ROOTS);
	}
}

/* Scans the blocks on the mark stack, and what they lead to, until the
   stack and the pipeline are empty: from the graph when there is one,
   else LS_PIPE blocks at a time, so that the cache misses of their first
   lines overlap. */
RT_RARE static void ls_drain(void)
{
	for (;;) {
		ls_sort_stack(0);
		while (g_ls.sp && g_ls.graph)
			ls_follow(g_ls.stack[--g_ls.sp]);
		while (g_ls.sp) {
			u32 batch[LS_PIPE], k, nb = g_ls.sp < LS_PIPE ? (u32)g_ls.sp : LS_PIPE;
			for (k = 0; k < nb; k++) {
				batch[k] = g_ls.stack[--g_ls.sp];
				__builtin_prefetch((const void *)ls_addr(batch[k]));
			}
			for (k = 0; k < nb; k++) {
				u32 i = batch[k];
				uintptr_t a = ls_addr(i);
				u64 from = g_ls.sp;
				if (!ls_gone(i))
					ls_scan(a, a + ls_size(i), g_ls.st[i] == LS_REACHABLE);
				ls_sort_stack(from);
			}
		}
		if (g_lq.out == g_lq.in)
			return;
		ls_flush(&g_lq);
	}
}

/* Scans a root range, skipping the runtime's memory. */
RT_RARE static void ls_root(uintptr_t lo, uintptr_t hi)
{
	u32 k, tag = g_ls.root_tag ? g_ls.root_tag : 1;
	g_ls.leader = LS_ROOTS;
	for (k = 0; k < g_ls.nexcl && lo < hi; k++) {
		struct ls_range *x = &g_ls.excl[k];
		if (x->hi <= lo)
			continue;
		if (x->lo >= hi)
			break;
		if (x->lo > lo)
			ls_scan(lo, x->lo, tag);
		lo = x->hi;
	}
	if (lo < hi)
		ls_scan(lo, hi, tag);
	ls_drain();
}

/* Marks from [lo, hi) of a private mapping, only from its pages that are
   resident or swapped out (pm: /proc/self/pagemap, or -1 to read them
   all). Any other page of a private mapping holds zeros or its file's
   bytes, no pointer to a block; reading it would cost time and, on
   kernels without a shared zero page, memory: a program's large static
   arrays made resident by its exit. */
RT_RARE static void ls_root_touched(int pm, uintptr_t lo, uintptr_t hi)
{
	enum { BATCH = 512 };
	u64 ent[BATCH];
	uintptr_t p = lo & ~(uintptr_t)4095, run = 0;
	while (pm >= 0 && p < hi) {
		u64 n = (hi - p + 4095) / 4096, k;
		if (n > BATCH)
			n = BATCH;
		if (pread(pm, ent, n * sizeof *ent, (off_t)(p / 4096 * sizeof *ent)) != (ssize_t)(n * sizeof *ent))
			break; /* the rest read whole */
		for (k = 0; k < n; k++, p += 4096) {
			int touched = (int)(ent[k] >> 62); /* present, swapped */
			if (touched && !run)
				run = p > lo ? p : lo;
			else if (!touched && run) {
				ls_root(run, p);
				run = 0;
			}
		}
	}
	if (p < hi && !run)
		run = p > lo ? p : lo;
	if (run)
		ls_root(run, hi);
}

/* ---------------------------------------------------------- the graph */

/* Makes room for the graph: edge_max edges, 4 per block and 4M more. */
RT_RARE static int ls_graph_room(struct tmpmem *tm)
{
	u64 n = g_ls.n;
	g_ls.edge_max = 4 * n + (1u << 22);
	if (g_ls.edge_max > 0xffffffffu)
		g_ls.edge_max = 0xffffffffu;
	if (n >= LS_INTERIOR || !(g_ls.off = tmp_alloc(tm, (n + 1) * sizeof *g_ls.off)) ||
	    !(g_ls.edge = tmp_alloc(tm, g_ls.edge_max * sizeof *g_ls.edge)))
		return 0;
	if (g_ls.huge) {
		madvise(g_ls.off, (n + 1) * sizeof *g_ls.off, MADV_HUGEPAGE);
		madvise(g_ls.edge, g_ls.edge_max * sizeof *g_ls.edge, MADV_HUGEPAGE);
	}
	return 1;
}

/* Lists the edges (ls_edge) of blocks [first, last) into lp: each block
   read once, in address order, through lp's pipeline, whose counters stay
   in registers over 4096 blocks. */
RT_RARE static void ls_edges_slice(struct ls_pipe *lp, int all, u64 first, u64 last)
{
	struct ls_cursor c, ahead;
	u64 i;
	ls_cursor_start(&c);
	ls_cursor_start(&ahead);
	lp->in = lp->mid = lp->out = 0;
	lp->enext = first;
	for (i = first; i < last && !lp->over;) {
		u32 in = lp->in, mid = lp->mid, out = lp->out;
		u64 stop = last - i > 4096 ? i + 4096 : last;
		for (; i < stop; i++) {
			uintptr_t a = ls_cursor_addr(&c, i);
			if (i + LS_PIPE < last && (all || g_ls.st[i + LS_PIPE] == LS_UNREACHED))
				__builtin_prefetch((const void *)ls_cursor_addr(&ahead, i + LS_PIPE));
			if ((all || g_ls.st[i] == LS_UNREACHED) && !ls_gone(i))
				ls_words(lp, a, a + ls_size((u32)i), (u32)i, &in, &mid, &out);
		}
		lp->in = in, lp->mid = mid, lp->out = out;
	}
	ls_flush(lp);
	while (lp->enext < last)
		g_ls.off[lp->enext++] = (u32)lp->nedge;
}

/* A helper thread's slice (ls_par_run). */
struct ls_slice {
	struct ls_pipe *lp;
	int all;
	u64 first, last, base;
};

RT_RARE static void ls_edges_run(void *arg)
{
	struct ls_slice *sl = arg;
	ls_edges_slice(sl->lp, sl->all, sl->first, sl->last);
}

/* Lists the edges from every block (all) or every unreached one, at most
   cap, on nt threads: the blocks are cut into slices of about equal
   bytes, each with an equal part of the edges' room; the slices' edges
   are then moved together. Returns 0 when they do not fit (in a slice's
   part). */
RT_RARE static int ls_edges_on(int all, u64 cap, u32 nt)
{
	struct ls_slice sl[LS_THREADS_MAX];
	u64 n = g_ls.n, i = 0, bytes = 0, total;
	u32 k, over = 0;
	g_ls.leader = all ? LS_GRAPH : LS_EDGES;
	if (cap > g_ls.edge_max)
		cap = g_ls.edge_max;
	for (k = 0; k < nt; k++) {
		sl[k].lp = k ? &g_lq_more[k - 1] : &g_lq;
		sl[k].all = all;
		sl[k].first = i;
		while (k < nt - 1 && i < n && bytes * nt < g_ls.bytes * (k + 1))
			bytes += ls_size((u32)i++);
		if (k == nt - 1)
			i = n;
		sl[k].last = i;
		sl[k].base = cap * k / nt;
		sl[k].lp->nedge = sl[k].base;
		sl[k].lp->cap = cap * (k + 1) / nt;
		sl[k].lp->over = 0;
	}
	k = ls_par_run(ls_edges_run, sl, sizeof *sl, nt);
	if (k > g_ls.threads)
		g_ls.threads = k;
	total = g_lq.nedge;
	over = (u32)g_lq.over;
	for (k = 1; k < nt && !over; k++) {
		u64 shift = sl[k].base - total, ne = sl[k].lp->nedge - sl[k].base;
		over |= (u32)sl[k].lp->over;
		if (shift) {
			memmove(g_ls.edge + total, g_ls.edge + sl[k].base, ne * sizeof *g_ls.edge);
			for (i = sl[k].first; i < sl[k].last; i++)
				g_ls.off[i] -= (u32)shift;
		}
		total += ne;
	}
	g_ls.off[n] = (u32)total;
	g_lq.in = g_lq.mid = g_lq.out = 0;
	return !over;
}

/* ls_edges_on, on ls_par_threads threads; again on one when a slice's
   edges overflowed its part of the room (they may fit in the whole). */
RT_RARE static int ls_edges(int all, u64 cap)
{
	u32 nt = ls_par_threads(g_ls.n, g_ls.bytes);
	return ls_edges_on(all, cap, nt) || (nt > 1 && ls_edges_on(all, cap, 1));
}

/* The graph of every block, when it costs at most an eighth of the
   blocks' bytes (4 bytes a block and 4 an edge): every block is then read
   once, in address order, so that the hardware's prefetch follows the
   reads, and the marks follow the graph. A heap of many small blocks
   (binary-trees) goes without it: its peak memory is the scan's. */
RT_RARE static void ls_graph(void)
{
	u64 budget = g_ls.bytes / 8 / sizeof(u32);
	if (!g_ls.off || budget <= g_ls.n + 1)
		return;
	g_ls.graph = ls_edges(1, budget - (g_ls.n + 1));
}

/* Memcheck's clique rule (lc_push_with_clique_if_a_chunk_ptr): the
   unreached blocks go in address order; each one still unreached leads
   its clique, every unreached block it reaches but itself becomes
   indirectly lost. Which blocks stay definitely lost depends on that order
   where cliques meet (a cycle pointed into from a block above it), so it
   is kept: on the graph (every block's, else the unreached blocks') when
   it fits, reading nothing else; else by scanning each leader's blocks
   again, the pipeline flushed between leaders. */
RT_RARE static void ls_cliques(void)
{
	u64 i, k;
	for (i = 0; i < g_ls.n && g_ls.st[i] != LS_UNREACHED; i++)
		;
	if (i == g_ls.n)
		return; /* nothing lost */
	if (!g_ls.graph && (!g_ls.off || !ls_edges(0, g_ls.edge_max))) {
		g_ls.sp = 0;
		g_lq.in = g_lq.mid = g_lq.out = 0;
		for (i = 0; i < g_ls.n; i++) {
			if (i + LS_PIPE < g_ls.n)
				__builtin_prefetch((const void *)ls_addr(i + LS_PIPE));
			if (g_ls.st[i] != LS_UNREACHED)
				continue;
			g_ls.leader = (u32)i;
			ls_push((u32)i);
			ls_drain();
		}
		return;
	}
	for (i = 0; i < g_ls.n; i++) {
		u64 x = i, sp = 0;
		if (g_ls.st[i] != LS_UNREACHED)
			continue;
		for (;;) {
			for (k = g_ls.off[x]; k < g_ls.off[x + 1]; k++) {
				u32 y = g_ls.edge[k] & ~LS_INTERIOR;
				if (y != i && g_ls.st[y] == LS_UNREACHED) {
					g_ls.st[y] = LS_INDIRECT;
					g_ls.stack[sp++] = y;
				}
			}
			if (!sp)
				break;
			x = g_ls.stack[--sp];
		}
	}
}
