//go:build ignore

/* side.c: the side table: every live block by address, with the node it
   is charged to and its size.

   Side table. Live blocks are kept by address (never a header before
   the block), in two parts:
   - The radix table, where nearly every block goes: two radix trees over
     the address space (root, mid, leaf levels) whose leaves hold one
     slot per granule of address space: {node, the address's offset in
     its granule, size}. Blocks under COARSE_MIN (128) bytes go to the
     fine tree, 32-byte granules (glibc's smallest chunk, so no two of its
     blocks share one) and 4-byte slots (a node under 2^20); larger blocks
     to the coarse tree, 128-byte granules, which no two of them can
     share whatever the allocator, and 8-byte slots. A
     lookup is three dependent loads and no hashing (a free's fast path
     reads both trees' slots at once through its thread's leaf caches:
     advice.c's free_fast), and blocks allocated together have neighbouring
     slots, so the table's working set follows the program's: this is
     what makes malloc/free advice cheap (binary-trees: 3.2x faster than
     the hash table it replaced). Slots are written without a lock: a
     block's slot is only written by its own allocation (an empty slot;
     CAS once a second thread exists, unless the allocator never puts two
     blocks in a granule: g_claim) and its own free, which the
     allocator orders. Mids and leaves are carved from 8 MiB
     MAP_NORESERVE maps on first use and never freed, a coarse leaf with
     the fine leaf of its first MiB, so that a small heap at a 4 MiB
     boundary (a glibc arena's) writes one page of slots, not one a tree
     (leaf_new); only the pages written are resident, so the table costs at most 4 bytes per 32 of
     heap span for small blocks and 8 per 128 for the others (widgets, 224-
     byte chunks: 14 bytes per live block), and nothing is rehashed.
   - The spill table (spill.c), for what the radix table cannot hold: a
     block in a granule already taken (allocators that pack blocks closer
     than 32 bytes), sizes of 256 MiB and more, small blocks of nodes from
     2^20 on, addresses beyond 2^48, or when a leaf cannot be mapped.

   Generations (marks.c). Each block also has the generation it was
   allocated in (g_gen: the marks set before it): in the radix table a
   u32 per slot, in an array after the leaf's slots (its pages are written
   only once a mark was set: until then every generation is 0, and an
   allocation costs one more load and a branch), in the spill table a
   field of the entry. Only a mark's scan reads them (side_each), never a
   free. A realloc's block, and one a failed realloc puts back, is of the
   generation current then. */

#include "internal.h"

/* The radix table of the side table (see above). */
#define GRAN_FINE 5    /* fine tree: 32-byte granules, glibc's smallest chunk */
#define GRAN_COARSE 7  /* coarse tree: 128-byte granules, for blocks of COARSE_MIN bytes or more */
#define COARSE_MIN 128 /* two live blocks this big start at least this far apart */
#define OFF_BITS 7     /* the address's offset in its granule */
#define LEAF_BITS 15   /* a leaf: 2^15 slots, for 1 MiB of addresses (fine tree) or 4 MiB (coarse), then their generations */
#define SLOT_BYTES(t) ((t) ? 8u : 4u) /* a slot of tree t */
#define LEAF_MAP(t) (((wsize)SLOT_BYTES(t) + sizeof(u32)) << LEAF_BITS) /* a leaf of tree t with its generations */
#define MID_BITS 12    /* a mid: 4096 leaves */
#define MID_PAGES ((sizeof(void *) << MID_BITS) / 4096)
#define MID_PAGE_LEAVES (4096 / sizeof(void *)) /* a mid's leaf pointers in one page */
#define LEAF_PAGES_MAX ((sizeof(u64) << LEAF_BITS) / 4096 + 1) /* the pages a leaf's slots touch, coarse tree */
#define SLOT_REGION(t) ((wsize)SLOT_BYTES(t) << LEAF_BITS) /* a leaf's slots */
#define GENS_BYTES ((wsize)sizeof(u32) << LEAF_BITS)       /* and their generations */
#define PAIR_AT 1344u /* a pair's fine slot 0, in its page: under it 1344 bytes of coarse slots, over it 2752 of fine ones */
#define ROOT_BITS 16   /* a root: 65536 mids, covering 2^48 bytes or more */
#define SLOT_USED (1ull << (NODE_BITS + OFF_BITS))
#define SLOT_SIZE_SHIFT (NODE_BITS + OFF_BITS + 1)
#define SLOT_SIZE_MAX ((1ull << (64 - SLOT_SIZE_SHIFT)) - 1)
#define RADIX_SLAB (8u << 20) /* leaves and mids are carved from 8 MiB maps */
#define RADIX_SLAB_LIMITED (1u << 20) /* or 1 MiB ones under a limit (slab_chunk) */

/* The fine and the coarse tree. Slots are written without a lock (see
   above); mids and leaves are created under g_radix_lock (release stores,
   acquire loads), carved from g_slab. */
static void **g_radix[2][1u << ROOT_BITS] RT_LARGE;
static u32 g_radix_lock;
/* Which roots have a mid: a bit per root, and a bit per word of those.
   Walks visit only the roots set here and never read the rest of
   g_radix: a page never written costs nothing to skip, but reading it
   maps a page of memory on kernels without a shared zero page (seen: a
   1 MiB g_radix resident at every exit, a third of a small program's
   RSS). */
static u64 g_radix_used[2][(1u << ROOT_BITS) / 64] RT_LARGE;
static u64 g_radix_sum[2][(1u << ROOT_BITS) / 4096];
static struct bump g_slab;

/* The radix table (see above). A slot is 0 when empty, else:
   - fine tree (t 0), 4 bytes: bits 0-4 the address's offset in its
     32-byte granule, 5-11 the size (under COARSE_MIN), 12-31 the node + 1
     (the fork child's node 0 is not empty); a block whose node does not
     fit (over FINE_NODE_MAX) goes to the spill table;
   - coarse tree (t 1), 8 bytes: bits 0-27 the node, 28-34 the address's
     offset in its granule, 35 set, 36-63 the size.
   Slots are handled widened to u64; t is a constant wherever it matters
   for speed (side_put, side_remove), so each tree's code is its own. */
#define FINE_SIZE_SHIFT GRAN_FINE
#define FINE_NODE_SHIFT (GRAN_FINE + 7)
#define FINE_NODE_MAX ((1u << (32 - FINE_NODE_SHIFT)) - 2)

/* log2 of a slot's bytes in tree t. */
static inline unsigned slot_shift(int t)
{
	return t ? 3 : 2;
}

static inline u64 slot_load(int t, const void *sl)
{
	return t ? __atomic_load_n((const u64 *)sl, __ATOMIC_RELAXED) : __atomic_load_n((const u32 *)sl, __ATOMIC_RELAXED);
}

static inline void slot_store(int t, void *sl, u64 v)
{
	if (t)
		__atomic_store_n((u64 *)sl, v, __ATOMIC_RELAXED);
	else
		__atomic_store_n((u32 *)sl, (u32)v, __ATOMIC_RELAXED);
}

/* Sets an empty slot; 0 if another thread did first. */
static inline int slot_claim(int t, void *sl, u64 v)
{
	u64 z = 0;
	u32 z32 = 0;
	return t ? __atomic_compare_exchange_n((u64 *)sl, &z, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)
		 : __atomic_compare_exchange_n((u32 *)sl, &z32, (u32)v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* Whether tree t's slot can hold val (its size already chose the tree). */
static inline int slot_fits(int t, u64 val)
{
	return t ? (val >> NODE_BITS) < SLOT_SIZE_MAX : (val & NODE_MASK) <= FINE_NODE_MAX;
}

/* The coarse tree's slot of block a of n bytes charged to node ni. */
static inline u64 coarse_make(uintptr_t a, u64 n, u32 ni)
{
	return (u64)ni | (u64)(a & ((1u << OFF_BITS) - 1)) << NODE_BITS | SLOT_USED | n << SLOT_SIZE_SHIFT;
}

static inline u64 slot_make(int t, uintptr_t a, u64 val)
{
	if (!t)
		return ((val & NODE_MASK) + 1) << FINE_NODE_SHIFT | (val >> NODE_BITS) << FINE_SIZE_SHIFT |
		       (a & ((1u << GRAN_FINE) - 1));
	return coarse_make(a, val >> NODE_BITS, (u32)(val & NODE_MASK));
}

/* The offset in its granule of the block a used slot holds. */
static inline unsigned slot_off(int t, u64 slot)
{
	return t ? (slot >> NODE_BITS) & ((1u << OFF_BITS) - 1) : slot & ((1u << GRAN_FINE) - 1);
}

static inline int slot_holds(int t, u64 slot, uintptr_t a)
{
	return slot && slot_off(t, slot) == (a & ((1u << (t ? GRAN_COARSE : GRAN_FINE)) - 1));
}

/* A used slot's block as side_insert takes it: size << NODE_BITS | node. */
static inline u64 slot_val(int t, u64 slot)
{
	if (!t)
		return (slot >> FINE_SIZE_SHIFT & ((1u << 7) - 1)) << NODE_BITS | ((slot >> FINE_NODE_SHIFT) - 1);
	return (slot >> SLOT_SIZE_SHIFT) << NODE_BITS | (slot & NODE_MASK);
}

/* A used slot retagged to node 0 (a fork child's inherited block). */
static inline u64 slot_inherited(int t, u64 slot)
{
	return t ? slot & ~(u64)NODE_MASK : (slot & ((1u << FINE_NODE_SHIFT) - 1)) | 1u << FINE_NODE_SHIFT;
}

/* The address of the block of used slot s at granule index gi of tree t. */
static inline uintptr_t slot_addr(int t, u64 gi, u64 slot)
{
	return (uintptr_t)(gi << (t ? GRAN_COARSE : GRAN_FINE) | slot_off(t, slot));
}

/* Whether the address space or the data segment is limited (RLIMIT_AS,
   RLIMIT_DATA), which a map counts against whole, its pages used or not:
   the runtime's maps are then the smaller (the side table's slab, the
   sampler's slots). A test that limits a program to what it needs plus
   8,000 KiB (coreutils' get_min_ulimit_v_) had their 16 MiB take the
   headroom, and the program's malloc failed (head-c.sh). Read at the
   first map, and again after the program sets a limit (setrlimit and
   prlimit, interposed below), never at each map: a seccomp filter set
   since may kill the thread for getrlimit (OpenSSH's did, in its
   pre-authentication child's malloc). */
static int g_limited = -1; /* atomic: -1 not read */

/* A sanitizer's start-up calls setrlimit before it is ready for the
   code it instruments (TSan's function entry crashed there). */
#if defined(__has_attribute) && __has_attribute(disable_sanitizer_instrumentation)
#define RT_NOSAN __attribute__((noinline, disable_sanitizer_instrumentation)) /* clang: no TSan function entry either */
#else
#define RT_NOSAN __attribute__((noinline, no_sanitize("thread", "address", "undefined")))
#endif

RT_NOSAN static int rt_read_limits(void)
{
	struct rlimit l;
	int v = (!rt_sys(SYS_prlimit64, 0, RLIMIT_AS, 0, (long)&l) && l.rlim_cur != RLIM_INFINITY) ||
		(!rt_sys(SYS_prlimit64, 0, RLIMIT_DATA, 0, (long)&l) && l.rlim_cur != RLIM_INFINITY);
	__atomic_store_n(&g_limited, v, __ATOMIC_RELAXED);
	return v;
}

__attribute__((noinline)) static int rt_limited(void)
{
	int v = __atomic_load_n(&g_limited, __ATOMIC_RELAXED);
	return v >= 0 ? v : rt_read_limits();
}

/* prlimit64 as the C library makes it, then the limits read again if
   this process's changed: the call was the program's, so its filter, if
   any, allows it. */
RT_RARE RT_NOSAN static int rt_prlimit(pid_t pid, int res, const void *nl, void *ol)
{
	long r = rt_sys(SYS_prlimit64, pid, res, (long)nl, (long)ol);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	if (nl && (pid == 0 || pid == g_pid) && (res == RLIMIT_AS || res == RLIMIT_DATA))
		rt_read_limits();
	return 0;
}

/* By their symbols (asm labels): -D_FILE_OFFSET_BITS=64 makes the
   header's setrlimit setrlimit64. */
int rt_setrlimit_sym(int res, const void *l) __asm__("setrlimit");
int rt_setrlimit64_sym(int res, const void *l) __asm__("setrlimit64");
int rt_prlimit_sym(pid_t pid, int res, const void *nl, void *ol) __asm__("prlimit");
int rt_prlimit64_sym(pid_t pid, int res, const void *nl, void *ol) __asm__("prlimit64");
RT_NOSAN __attribute__((weak)) int rt_setrlimit_sym(int res, const void *l) { return rt_prlimit(0, res, l, NULL); }
RT_NOSAN __attribute__((weak)) int rt_setrlimit64_sym(int res, const void *l) { return rt_prlimit(0, res, l, NULL); }
RT_NOSAN __attribute__((weak)) int rt_prlimit_sym(pid_t pid, int res, const void *nl, void *ol) { return rt_prlimit(pid, res, nl, ol); }
RT_NOSAN __attribute__((weak)) int rt_prlimit64_sym(pid_t pid, int res, const void *nl, void *ol) { return rt_prlimit(pid, res, nl, ol); }

/* The size of the slab's next map: 8 MiB, or 1 MiB (a leaf pair and two
   mids) under a limit. */
static wsize slab_chunk(void) { return rt_limited() ? RADIX_SLAB_LIMITED : RADIX_SLAB; }

/* Root r's mid of tree t, made unless another thread did, the root
   marked used. g_radix_lock held. */
static void *radix_root_new(int t, u32 r)
{
	void **pp = (void **)&g_radix[t][r], *p = __atomic_load_n(pp, __ATOMIC_ACQUIRE);
	if (!p && (p = bump_take(&g_slab, sizeof(void *) << MID_BITS, slab_chunk())))
		__atomic_store_n(pp, p, __ATOMIC_RELEASE);
	if (p) {
		__atomic_or_fetch(&g_radix_used[t][r / 64], 1ull << (r % 64), __ATOMIC_RELEASE);
		__atomic_or_fetch(&g_radix_sum[t][r / 4096], 1ull << (r / 64 % 64), __ATOMIC_RELEASE);
	}
	return p;
}

static void *radix_make_root(int t, u32 r)
{
	void *p;
	spin_lock(&g_radix_lock);
	p = radix_root_new(t, r);
	spin_unlock(&g_radix_lock);
	return p;
}

/* Leaves. A leaf's pointer is its first slot, its slots going up from
   there, but the coarse tree's in rotation: the slot of the granule at
   index j of its leaf's span is the (j + COARSE_ROT) mod 2^LEAF_BITS-th
   (slot_index), so that the last 168 slots hold the span's first 21 KiB.
   A coarse leaf and the fine leaf of its first MiB are made together,
   the fine slots right after the coarse ones, at PAIR_AT in a page, and
   their generations under them (a pair: fine generations, coarse
   generations, a page, coarse slots, fine slots; a coarse leaf alone:
   generations, a page, slots): no page holds both slots and generations,
   which are read for used slots, so that reading one does not map a
   page of slots never written (WEAVE_STATS counts those). A heap that starts
   at a coarse leaf's span (every glibc arena but the main one: 64
   MiB-aligned) and spans up to 21 KiB writes one page of slots, not one
   of each tree (threads-16 of the bench: 64 KiB less). A larger one
   gains nothing: past its first 21 KiB its coarse slots go on from the
   leaf's first slot, and its fine slots, PAIR_AT into their first page,
   take a third of a page more on average. Slots that go down from the
   fine ones (a reversed coarse leaf) would save a page on larger heaps
   too, and cost the fast paths an instruction or two a coarse block
   (measured: 0.7-0.8 an event); the rotation costs them nothing, an lea
   in place of the copy of the address. */
#define COARSE_ROT ((1u << LEAF_BITS) - PAIR_AT / 8)

/* The slot index of address a in its leaf of tree t, and of the granule
   at index j of the leaf's span. */
static inline u64 slot_index(int t, uintptr_t a)
{
	return t ? ((a + ((uintptr_t)COARSE_ROT << GRAN_COARSE)) >> GRAN_COARSE) & ((1u << LEAF_BITS) - 1)
		 : (a >> GRAN_FINE) & ((1u << LEAF_BITS) - 1);
}

static inline u64 slot_pos(int t, u64 j)
{
	return t ? (j + COARSE_ROT) & ((1u << LEAF_BITS) - 1) : j;
}

/* The slot of the granule at index j of leaf's span. */
static inline char *slot_at(int t, char *leaf, u64 j)
{
	return leaf + (slot_pos(t, j) << slot_shift(t));
}

/* The generations of the slots of a leaf of tree t (a pair's fine leaf
   is the one not page-aligned), by slot index. */
static inline u32 *leaf_gens(int t, void *leaf)
{
	char *l = leaf, *pg = (char *)((uintptr_t)l & ~(uintptr_t)4095);
	if (t)
		return (u32 *)(pg - 4096 - GENS_BYTES);
	return (u32 *)((uintptr_t)l & 4095 ? pg - SLOT_REGION(1) - 4096 - 2 * GENS_BYTES : l + SLOT_REGION(0));
}

/* Makes tree t's leaf *pm, for address a, and its pair's (see above)
   unless the other tree has its leaf already or a is beyond the fine
   tree's reach. g_radix_lock held, *pm empty. */
static void *leaf_new(int t, uintptr_t a, void **pm)
{
	const unsigned top = GRAN_FINE + LEAF_BITS + MID_BITS;
	void **mid, **po = NULL;
	char *p;
	u64 f = (u64)a & (t ? ~(((u64)1 << (GRAN_COARSE + LEAF_BITS)) - 1) : ~(u64)0); /* the pair's first byte */
	if ((t || !((f >> (GRAN_FINE + LEAF_BITS)) & 3)) && !(f >> (top + ROOT_BITS))) {
		if (t && (mid = radix_root_new(0, (u32)(f >> top))))
			po = &mid[(f >> (GRAN_FINE + LEAF_BITS)) & ((1u << MID_BITS) - 1)];
		else if (!t && (mid = radix_root_new(1, (u32)(f >> (top + 2)))))
			po = &mid[(f >> (GRAN_COARSE + LEAF_BITS)) & ((1u << MID_BITS) - 1)];
		if (po && __atomic_load_n(po, __ATOMIC_ACQUIRE))
			po = NULL;
	}
	if (po && (p = bump_take(&g_slab, LEAF_MAP(1) + LEAF_MAP(0) + 8192, slab_chunk()))) {
		p += 2 * GENS_BYTES + 4096 + SLOT_REGION(1) + PAIR_AT; /* the fine leaf; the coarse one's slots under it */
		__atomic_store_n(po, t ? p : p - SLOT_REGION(1), __ATOMIC_RELEASE);
		p = t ? p - SLOT_REGION(1) : p;
	} else if ((p = bump_take(&g_slab, LEAF_MAP(t) + (t ? 4096 : 0), slab_chunk())))
		p = t ? p + GENS_BYTES + 4096 : p;
	if (p)
		__atomic_store_n(pm, p, __ATOMIC_RELEASE);
	return p;
}

/* Tree t's leaf *pm, for address a, made unless another thread did. */
static void *radix_make_leaf(int t, uintptr_t a, void **pm)
{
	void *p;
	spin_lock(&g_radix_lock);
	if (!(p = __atomic_load_n(pm, __ATOMIC_ACQUIRE)))
		p = leaf_new(t, a, pm);
	spin_unlock(&g_radix_lock);
	return p;
}

/* The first root of tree t from r on that has a mid, or 1 << ROOT_BITS. */
RT_RARE static u32 radix_next_root(int t, u32 r)
{
	while (r < 1u << ROOT_BITS) {
		u32 w = r / 64;
		u64 sum = __atomic_load_n(&g_radix_sum[t][w / 64], __ATOMIC_ACQUIRE) >> (w % 64), used;
		if (!sum) { /* no root used in the rest of this summary word's 4096 */
			r = (w / 64 + 1) * 4096;
			continue;
		}
		w += (u32)__builtin_ctzll(sum);
		if (w * 64 > r)
			r = w * 64;
		used = __atomic_load_n(&g_radix_used[t][w], __ATOMIC_ACQUIRE) >> (r % 64);
		if (used)
			return r + (u32)__builtin_ctzll(used);
		r = (w + 1) * 64;
	}
	return 1u << ROOT_BITS;
}

/* Which pages of the n bytes at p (page-aligned) are resident: in[k] & 1
   for page k, all of them if mincore fails. Read only those: reading a
   page never written maps it on kernels without a shared zero page. */
RT_RARE static void resident_pages(const void *p, wsize n, unsigned char *in)
{
	if (mincore((void *)p, n, in))
		memset(in, 1, (n + 4095) / 4096);
}

/* Whether a page of a mid holds a leaf (mids are never cleared). */
RT_RARE static unsigned char mid_page_written(void *const *pg)
{
	u32 i;
	for (i = 0; i < MID_PAGE_LEAVES; i++)
		if (__atomic_load_n(&pg[i], __ATOMIC_RELAXED))
			return 1;
	return 0;
}

/* A walk over the leaves of tree t in address order that reads only the
   parts of the table that were written: the roots in use
   (radix_next_root), the resident pages of each mid, and for each leaf
   given, in, its resident pages. on_mid, if set, is called with each
   root's mid; mid_pages counts their resident pages. */
struct radix_leaves {
	int t;
	u32 r, m;  /* the root and the mid's index of the leaf given last */
	char *at;  /* the page where its slots start: in[k] is the page k pages on */
	u32 pages; /* the pages its slots touch */
	int given; /* a leaf was given (the walk goes on past it) */
	void (*on_mid)(const void *mid, u64 n);
	u64 mid_pages;
	unsigned char in_mid[MID_PAGES], in[LEAF_PAGES_MAX];
};

RT_RARE static void radix_leaves_start(struct radix_leaves *c, int t, void (*on_mid)(const void *mid, u64 n))
{
	memset(c, 0, sizeof *c);
	c->t = t;
	c->r = radix_next_root(t, 0);
	c->on_mid = on_mid;
}

/* The next leaf (the first after radix_leaves_start), or NULL at the end. */
RT_RARE static char *radix_leaves_next(struct radix_leaves *c)
{
	u32 k;
	if (c->given)
		c->m++;
	for (; c->r < 1u << ROOT_BITS; c->r = radix_next_root(c->t, c->r + 1), c->m = 0) {
		void **mid = __atomic_load_n(&g_radix[c->t][c->r], __ATOMIC_ACQUIRE);
		if (!mid)
			continue;
		if (!c->m) {
			resident_pages(mid, sizeof(void *) << MID_BITS, c->in_mid);
			for (k = 0; k < MID_PAGES; k++) {
				/* A page only read (a lookup of an address
				   no block was ever at: the leak scan's
				   candidates) maps the zero page, resident to
				   mincore; a written one holds a leaf. */
				if (c->in_mid[k] & 1)
					c->in_mid[k] = mid_page_written(mid + k * MID_PAGE_LEAVES);
				c->mid_pages += c->in_mid[k];
			}
			if (c->on_mid)
				c->on_mid(mid, sizeof(void *) << MID_BITS);
		}
		for (; c->m < 1u << MID_BITS; c->m++) {
			char *leaf;
			if (!(c->in_mid[c->m / MID_PAGE_LEAVES] & 1)) {
				c->m |= MID_PAGE_LEAVES - 1;
				continue;
			}
			if ((leaf = __atomic_load_n(&mid[c->m], __ATOMIC_ACQUIRE))) {
				c->at = (char *)((uintptr_t)leaf & ~(uintptr_t)4095);
				c->pages = (u32)((leaf + SLOT_REGION(c->t) - c->at + 4095) / 4096);
				resident_pages(c->at, (wsize)c->pages * 4096, c->in);
				c->given = 1;
				return leaf;
			}
		}
	}
	c->given = 0;
	return NULL;
}

/* a's slot in tree t (0 fine, 1 coarse), creating its mid and leaf if
   create; NULL if a is beyond the tree's reach or memory is short. */
static inline void *radix_slot(int t, uintptr_t a, int create)
{
	unsigned g = t ? GRAN_COARSE : GRAN_FINE, top = g + LEAF_BITS + MID_BITS;
	void **mid, *leaf, **pm;
	if (a >> (top + ROOT_BITS))
		return NULL;
	mid = __atomic_load_n(&g_radix[t][a >> top], __ATOMIC_ACQUIRE);
	if (__builtin_expect(!mid, 0) && (!create || !(mid = radix_make_root(t, (u32)(a >> top)))))
		return NULL;
	pm = &mid[(a >> (g + LEAF_BITS)) & ((1u << MID_BITS) - 1)];
	leaf = __atomic_load_n(pm, __ATOMIC_ACQUIRE);
	if (__builtin_expect(!leaf, 0) && (!create || !(leaf = radix_make_leaf(t, a, pm))))
		return NULL;
	return (char *)leaf + (slot_index(t, a) << slot_shift(t));
}

/* Whether the page of slot sl of the leaf walk c gave last is resident. */
static inline int leaf_page_in(const struct radix_leaves *c, const char *sl)
{
	return c->in[(wsize)(sl - c->at) / 4096] & 1;
}

/* The first index after j (of leaf's span, tree t) whose slot is on
   another page than j's, or 2^LEAF_BITS. */
static inline u32 leaf_next_page(int t, char *leaf, u32 j)
{
	u64 p = slot_pos(t, j), end = (((uintptr_t)slot_at(t, leaf, j) & ~(uintptr_t)4095) + 4096 - (uintptr_t)leaf) >> slot_shift(t);
	if (end > 1u << LEAF_BITS)
		end = 1u << LEAF_BITS; /* the last slot: the next is the first */
	j += (u32)(end - p);
	return j < 1u << LEAF_BITS ? j : 1u << LEAF_BITS;
}

/* Sets the generation of the block at a, in slot sl of tree t, unless no
   mark was ever set. */
static inline __attribute__((always_inline)) void slot_gen_set(void *sl, int t, uintptr_t a)
{
	u32 g = __atomic_load_n(&g_gen, __ATOMIC_RELAXED);
	if (__builtin_expect(g != 0, 0)) {
		u64 i = slot_index(t, a);
		__atomic_store_n(&leaf_gens(t, (char *)sl - (i << slot_shift(t)))[i], g, __ATOMIC_RELAXED);
	}
}

/* Calls f(t, slot, a, gen, arg) for every used slot of tree t, with the
   block's address and generation, and page(bytes) for every resident page
   of the table (either may be NULL); each tree in address order. Pages
   never written are not read (mincore), which would map them. */
RT_RARE static void radix_each(void (*f)(int t, void *slot, uintptr_t a, u32 gen, void *arg), void (*page)(u64 bytes), void *arg)
{
	struct radix_leaves c;
	char *leaf;
	u32 t, k, j, next;
	for (t = 0; t < 2; t++) {
		radix_leaves_start(&c, (int)t, NULL);
		while ((leaf = radix_leaves_next(&c))) {
			/* A pair's shared page is the coarse leaf's. */
			for (k = !t && ((uintptr_t)leaf & 4095); page && k < c.pages; k++)
				if (c.in[k] & 1)
					page(4096);
			for (j = 0; f && j < 1u << LEAF_BITS; j = next) {
				next = leaf_next_page((int)t, leaf, j);
				if (!leaf_page_in(&c, slot_at((int)t, leaf, j)))
					continue;
				for (; j < next; j++) {
					void *sl = slot_at((int)t, leaf, j);
					u64 slot = slot_load((int)t, sl);
					u64 gi = (u64)c.r << (MID_BITS + LEAF_BITS) | (u64)c.m << LEAF_BITS | j;
					if (slot)
						f((int)t, sl, slot_addr((int)t, gi, slot),
						  __atomic_load_n(&leaf_gens((int)t, leaf)[slot_pos((int)t, j)], __ATOMIC_RELAXED), arg);
				}
			}
		}
		if (page)
			page(c.mid_pages * 4096);
	}
}

static u64 g_usage_bytes, g_usage_live; /* side_usage's sums: exit writer */
static void usage_page(u64 bytes) { g_usage_bytes += bytes; }
RT_RARE static void usage_slot(int t, void *slot, uintptr_t a, u32 gen, void *arg)
{
	(void)t, (void)slot, (void)a, (void)gen, (void)arg;
	g_usage_live++;
}

/* For WEAVE_STATS: the side table's resident bytes and live entries
   (the mids counted whole). */
RT_RARE static void side_usage(u64 *bytes, u64 *live)
{
	u32 i;
	g_usage_bytes = g_usage_live = 0;
	radix_each(usage_slot, usage_page, NULL);
	*bytes = g_usage_bytes;
	*live = g_usage_live;
	for (i = 0; i < NSHARDS; i++) {
		if (!shard_used(&g_shards[i]))
			continue;
		spin_lock(&g_shards[i].lock);
		*bytes += (u64)g_shards[i].cap * sizeof(struct ent);
		*live += g_shards[i].count;
		spin_unlock(&g_shards[i].lock);
	}
}

/* Takes a's entry out of tree t's slot sl if it holds one, into *out. */
static inline int slot_take(int t, void *sl, uintptr_t a, struct ent *out)
{
	u64 cur;
	if (!sl || !slot_holds(t, cur = slot_load(t, sl), a))
		return 0;
	slot_store(t, sl, 0);
	out->addr = a;
	out->val = slot_val(t, cur);
	return 1;
}

/* side_put for a block the fine tree cannot hold (its node is too
   large): to the spill table, taking out what a's slot may hold for it
   (a stale entry). */
static __attribute__((noinline)) int fine_spill(uintptr_t a, u64 val, struct ent *old)
{
	struct ent stale = {0, 0, 0};
	int ok;
	slot_take(0, radix_slot(0, a, 0), a, &stale);
	ok = spill_insert(a, val, old);
	if (!old->addr)
		*old = stale;
	return ok;
}

/* side_insert in tree t. */
static inline __attribute__((always_inline)) int side_put(int t, uintptr_t a, u64 val, struct ent *old)
{
	void *sl;
	u64 cur, want;
	old->addr = 0;
	if (__builtin_expect(!slot_fits(t, val), 0))
		return t ? spill_insert(a, val, old) : fine_spill(a, val, old);
	if (!(sl = radix_slot(t, a, 1)))
		return spill_insert(a, val, old);
	want = slot_make(t, a, val);
	cur = slot_load(t, sl);
	if (slot_holds(t, cur, a)) {
		old->addr = a;
		old->val = slot_val(t, cur);
		slot_gen_set(sl, t, a);
		slot_store(t, sl, want);
		return 1;
	}
	if (cur)
		return spill_insert(a, val, old); /* another block in the granule */
	/* a may be a stale entry in the spill table, left from a time its
	   granule was taken. */
	if (__atomic_load_n(&g_spill_count, __ATOMIC_RELAXED))
		spill_remove(a, old);
	slot_gen_set(sl, t, a); /* the granule is this block's from here on, or spills */
	if (!__atomic_load_n(&g_claim, __ATOMIC_RELAXED)) {
		slot_store(t, sl, want);
		return 1;
	}
	/* Two threads can race for one empty slot only under an allocator
	   that puts two blocks in a granule: the loser spills, keeping in
	   *old what the spill table held for a. */
	if (slot_claim(t, sl, want))
		return 1;
	return spill_insert(a, val, &(struct ent){0, 0, 0});
}

/* Inserts a -> val (size << NODE_BITS | node) in the tree for its size.
   If a is already there (a stale entry), replaces it and returns the old
   one in *old (else old->addr == 0). Returns 0 when out of memory. */
static __attribute__((noinline)) int side_insert_hidden(int t, uintptr_t a, u64 val, struct ent *old)
{
	struct ent stale;
	int ok;
	if (!slot_take(!t, radix_slot(!t, a, 0), a, &stale))
		return t ? side_put(1, a, val, old) : side_put(0, a, val, old);
	ok = t ? side_put(1, a, val, old) : side_put(0, a, val, old);
	if (!old->addr)
		*old = stale;
	return ok;
}

/* Whether a free may bypass the runtime: not every free of the process
   comes through the interposed one, which records (g_hidden is not
   HIDDEN_ON: a program with its own malloc, bash's; a static link;
   WEAVE_HIDDEN=0). A block recorded may then have been freed behind the
   runtime's back and its address handed out again at another size, its
   entry stale: in the other tree, or of a size past the new block's end
   (zeroed by advice.c's scrub_freed, it broke bash's own malloc). The
   fast paths run only under HIDDEN_ON (ATTN_LIB). */
static inline int frees_bypass(void)
{
	return __atomic_load_n(&g_hidden, __ATOMIC_RELAXED) != HIDDEN_ON;
}

static inline __attribute__((always_inline)) int side_insert(uintptr_t a, u64 val, struct ent *old)
{
	int t = (val >> NODE_BITS) >= COARSE_MIN;
	if (__builtin_expect(frees_bypass(), 0)) /* a stale entry may be in the other tree */
		return side_insert_hidden(t, a, val, old);
	/* Each tree's code with its constants (shifts, masks) folded in. */
	return t ? side_put(1, a, val, old) : side_put(0, a, val, old);
}

/* Removes a; returns 1 and its entry if it was there. Only a block's
   own free or realloc removes it, so the slot cannot change between the
   load and the store. Small blocks are the common case: the fine tree
   first. */
static inline __attribute__((always_inline)) int side_remove(uintptr_t a, struct ent *out)
{
	return slot_take(0, radix_slot(0, a, 0), a, out) || slot_take(1, radix_slot(1, a, 0), a, out) ||
	       (__atomic_load_n(&g_spill_count, __ATOMIC_RELAXED) && spill_remove(a, out));
}

/* The fine tree as advice.c's fast paths use it, slots read and written
   straight: the slot of block a of n bytes (under COARSE_MIN) charged to
   node ni (at most FINE_NODE_MAX); whether slot value v holds block a, of
   a node other than 0 (a fork child's inherited blocks, which
   side_remove's callers count apart); the size and node that v holds. */
static inline u32 fine_make(uintptr_t a, u32 n, u32 ni)
{
	return (ni + 1) << FINE_NODE_SHIFT | n << FINE_SIZE_SHIFT | (u32)(a & ((1u << GRAN_FINE) - 1));
}

static inline int fine_holds(u32 v, uintptr_t a)
{
	return (v & ((1u << GRAN_FINE) - 1)) == (a & ((1u << GRAN_FINE) - 1)) && v >= 2u << FINE_NODE_SHIFT;
}

/* The same for the coarse tree, as the free's fast path uses it:
   whether v holds block a, of a node other than 0; its node and size. */
static inline int coarse_holds(u64 v, uintptr_t a)
{
	return (v & NODE_MASK) && ((v >> NODE_BITS) & ((1u << OFF_BITS) - 1)) == (a & ((1u << OFF_BITS) - 1));
}
static inline u32 coarse_node(u64 v) { return (u32)(v & NODE_MASK); }
static inline u64 coarse_size(u64 v) { return v >> SLOT_SIZE_SHIFT; }

static inline u32 fine_size(u32 v)
{
	return v >> FINE_SIZE_SHIFT & ((1u << 7) - 1);
}

static inline u32 fine_node(u32 v)
{
	return (v >> FINE_NODE_SHIFT) - 1;
}

/* Fork: rt_fork_prepare takes every side-table lock (after g_lock), the
   parent and child release them. */
RT_RARE static void side_lock(void)
{
	u32 i;
	for (i = 0; i < NSHARDS; i++)
		spin_lock(&g_shards[i].lock);
	spin_lock(&g_big_lock);
	spin_lock(&g_radix_lock);
}

RT_RARE static void side_unlock(void)
{
	u32 i;
	spin_unlock(&g_radix_lock);
	spin_unlock(&g_big_lock);
	for (i = 0; i < NSHARDS; i++)
		spin_unlock(&g_shards[i].lock);
}

/* Counts a side-table entry as inherited; returns its value retagged. */
RT_RARE static u64 inherit(uintptr_t a, u64 val)
{
	g_inh.blocks++;
	g_inh.bytes += val_size(a, val);
	return val & ~(u64)NODE_MASK;
}

RT_RARE static void inherit_slot(int t, void *slot, uintptr_t a, u32 gen, void *arg)
{
	u64 v = slot_load(t, slot);
	(void)a, (void)gen, (void)arg;
	slot_store(t, slot, slot_inherited(t, v));
	g_inh.blocks++;
	g_inh.bytes += slot_val(t, v) >> NODE_BITS;
}

/* In a fork child (one thread, the locks held): every block in the table
   is the parent's; retags it to node 0, "inherited", and counts it in
   g_inh. */
RT_RARE static void side_inherit(void)
{
	u32 i, k;
	radix_each(inherit_slot, NULL, NULL);
	for (i = 0; i < NSHARDS; i++) {
		struct shard *sh = &g_shards[i];
		for (k = 0; k < sh->cap; k++) {
			struct ent *e = &sh->tab[k];
			if (e->addr)
				e->val = inherit(e->addr, e->val);
		}
	}
}

/* side_each's callback and its argument, for radix_each. */
struct each {
	void (*f)(uintptr_t a, u64 val, u32 gen, void *arg);
	void *arg;
};

RT_RARE static void each_slot(int t, void *slot, uintptr_t a, u32 gen, void *arg)
{
	const struct each *e = arg;
	u64 v = slot_load(t, slot);
	if (v)
		e->f(a, slot_val(t, v), gen, e->arg);
}

/* Calls f(a, val, gen, arg) for every live block, val as side_insert
   takes it (val_size gives the size), gen its generation: the radix
   trees' blocks (each tree in address order), then the spill table's.
   For the exit writers, g_lock held, and a mark's scan, g_mk.lock held
   (marks.c); blocks other threads allocate or free meanwhile may be seen
   or not. */
RT_RARE static void side_each(void (*f)(uintptr_t a, u64 val, u32 gen, void *arg), void *arg)
{
	struct each e = {f, arg};
	u32 i, k;
	radix_each(each_slot, NULL, &e);
	for (i = 0; i < NSHARDS; i++) {
		struct shard *sh = &g_shards[i];
		if (!shard_used(sh))
			continue;
		spin_lock(&sh->lock);
		for (k = 0; k < sh->cap; k++)
			if (sh->tab[k].addr)
				f(sh->tab[k].addr, sh->tab[k].val, sh->tab[k].gen, arg);
		spin_unlock(&sh->lock);
	}
}
