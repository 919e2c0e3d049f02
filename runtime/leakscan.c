//go:build ignore

/* leakscan.c: which live blocks are leaks, at exit (valgrind's leak kinds).

   A conservative mark, Boehm's collector's, used for reporting as KPROF
   and KBDB did. With the other threads stopped (ls_stop), it marks from
   the roots - every readable and writable mapping that is not the
   allocator's or the runtime's (the data and bss of every loaded object,
   anonymous maps, thread-local storage), the live part of every thread's
   stack with its saved registers - through the live blocks. The side table
   gives every live block's start and size, so a word is resolved to a block
   without any per-block header: the blocks are listed in address order
   (ls_collect), and a page index maps each 1 KiB of address space to the
   blocks that overlap it (ls_index, leakmark.c), so a lookup is two loads
   and a short binary search, pipelined so that several lookups' cache
   misses overlap.

   Kinds, as memcheck classifies them (mc_leakcheck.c): a block pointed to
   from a root, or from a reachable block, by a pointer to its start is
   still reachable; one reached only through an interior pointer, or only
   from possibly lost blocks, is possibly lost; of the rest, a block pointed
   to from another unreached block is indirectly lost, and the heads that
   nothing points to (one per cycle) are definitely lost. Words are scanned
   at 8-byte alignment, blocks over their requested size.

   Mappings (/proc/self/maps, read with plain system calls into mapped
   memory: no stdio, no malloc):
   - skipped: [heap], any mapping that holds a live block (the allocator's:
     glibc's arenas, another allocator's spans) but big blocks glibc
     mmap'd, read around (the kernel joins their maps with the program's
     own anonymous ones), glibc's
     64 MiB-aligned thread arenas, devices, and the runtime's own memory
     (every map it made, resident.c lists them: side table, nodes,
     pseudo-stacks, trace buffers, pool table, marks, this scan's arrays;
     its statics), which holds block addresses that are not the
     program's pointers;
   - a stack holding a stopped thread's stack pointer, the exiting
     thread's, or one a thread died on (its exit hook noted it): only its
     live part, from that stack pointer up (leakstack.c says which), with a
     stopped thread's registers;
   - every other readable, writable mapping: whole.

   Stopping the other threads, and their registers: leakstop.c. */

#include "internal.h"

#include <linux/futex.h>

/* ------------------------------------------------------- thread notes */

/* A thread set up by the runtime is exiting: note where its stack ends
   (its descriptor and TLS lie above; the frames below are dead). Only if
   a scan may run: under valgrind its reads of dead frames were errors. */
static void ls_thread_exit(uintptr_t hook, uintptr_t ret)
{
	uintptr_t *ring = __atomic_load_n(&g_ls_dead, __ATOMIC_ACQUIRE);
	u32 i;
	if (!ls_may_run())
		return;
	if (!ring) {
		uintptr_t *p = rt_map(LS_DEAD_CAP * sizeof *p), *want = NULL;
		if (!p)
			return;
		if (!__atomic_compare_exchange_n(&g_ls_dead, &want, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			rt_unmap(p, LS_DEAD_CAP * sizeof *p);
			p = want;
		}
		ring = p;
	}
	i = __atomic_fetch_add(&g_ls_ndead, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&ring[i % LS_DEAD_CAP], ls_dead_sp(hook, ret), __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------ blocks */

/* A walk over one radix tree's blocks in address order. */
struct ls_walk {
	struct radix_leaves c;
	u32 j;
	char *leaf;
	uintptr_t a; /* the current block, 0 at the end */
	u64 val;
};

RT_RARE static void ls_walk_next(struct ls_walk *w)
{
	const int t = w->c.t;
	const unsigned sh = slot_shift(t);
	for (;;) {
		if (w->leaf) {
			const char *leaf = w->leaf;
			u32 j;
			for (j = w->j; j < 1u << LEAF_BITS; j++) {
				/* Slots in address order (the coarse tree's in
				   rotation: side.c's slot_pos); a page is looked at
				   where the walk enters it. */
				const char *sl = slot_at(t, (char *)leaf, j);
				const u64 *q = (const u64 *)sl;
				u64 s, gran;
				if ((!j || sl == leaf || !((uintptr_t)sl & 4095)) && !leaf_page_in(&w->c, sl)) {
					j = leaf_next_page(t, (char *)leaf, j) - 1;
					continue;
				}
				/* Most slots are empty (the fine tree's: 4 bytes for
				   each 32 of heap): skipped a line at a time. */
				if (!((uintptr_t)sl & 63)) {
					__builtin_prefetch(sl + LS_AHEAD);
					if (!(q[0] | q[1] | q[2] | q[3] | q[4] | q[5] | q[6] | q[7])) {
						j += (64u >> sh) - 1;
						continue;
					}
				}
				if (!(s = slot_load(t, sl)))
					continue;
				gran = (u64)w->c.r << (MID_BITS + LEAF_BITS) | (u64)w->c.m << LEAF_BITS | j;
				w->a = slot_addr(t, gran, s);
				w->val = slot_val(t, s);
				w->j = j + 1;
				return;
			}
		}
		if (!(w->leaf = radix_leaves_next(&w->c))) {
			w->a = 0;
			return;
		}
		w->j = 0;
	}
}

/* Sorts n spill entries by address (heapsort: no recursion, no memory). */
RT_RARE static void ls_heapsort(struct ent *e, u64 n)
{
	u64 i, end;
	for (i = n / 2; i-- > 0;) {
		u64 r = i;
		for (;;) {
			u64 c = 2 * r + 1;
			struct ent x;
			if (c >= n)
				break;
			if (c + 1 < n && e[c + 1].addr > e[c].addr)
				c++;
			if (e[r].addr >= e[c].addr)
				break;
			x = e[r], e[r] = e[c], e[c] = x;
			r = c;
		}
	}
	for (end = n; end > 1; end--) {
		struct ent x = e[0];
		u64 r = 0;
		e[0] = e[end - 1], e[end - 1] = x;
		for (;;) {
			u64 c = 2 * r + 1;
			if (c >= end - 1)
				break;
			if (c + 1 < end - 1 && e[c + 1].addr > e[c].addr)
				c++;
			if (e[r].addr >= e[c].addr)
				break;
			x = e[r], e[r] = e[c], e[c] = x;
			r = c;
		}
	}
}
/* Upper bound on the blocks in the radix trees: used slots lie in resident
   pages. Also excludes the trees' memory from the roots. */
RT_RARE static u64 ls_bound(void)
{
	struct radix_leaves c;
	char *leaf;
	u64 n = 0;
	u32 t, k;
	for (t = 0; t < 2; t++) {
		radix_leaves_start(&c, (int)t, ls_exclude);
		while ((leaf = radix_leaves_next(&c))) {
			ls_exclude(leaf, SLOT_REGION(t));
			ls_exclude(leaf_gens((int)t, leaf), GENS_BYTES);
			for (k = 0; k < c.pages; k++)
				n += (c.in[k] & 1) * (4096u >> slot_shift((int)t));
		}
	}
	return n;
}

/* The live blocks in address order: the two radix trees and the sorted
   spill table merged. Blocks nest (leakmark.c's ls_index), one may start
   at its outer block's own address (a pointcut allocator's first slot in
   a block from malloc: the fine tree holds the one, the coarse tree or
   the spill table the other): the blocks at one address come larger
   first, each once; one seen twice at the same size (a stale entry), once. */
struct ls_merge {
	struct ls_walk w[2];
	u64 i;          /* the next spill entry */
	uintptr_t last; /* the last block given */
	u64 last_val;   /* and its value */
};

RT_RARE static void ls_merge_start(struct ls_merge *m)
{
	memset(m, 0, sizeof *m);
	radix_leaves_start(&m->w[0].c, 0, NULL);
	radix_leaves_start(&m->w[1].c, 1, NULL);
	ls_walk_next(&m->w[0]);
	ls_walk_next(&m->w[1]);
}

/* Whether block a (value v) comes before block b (value bv) in ls_merge's
   order. */
static inline int ls_before(uintptr_t a, u64 v, uintptr_t b, u64 bv)
{
	return a < b || (a == b && val_size(a, v) > val_size(b, bv));
}

/* The next block: its address (0 at the end) and side-table value. */
RT_RARE static uintptr_t ls_merge_next(struct ls_merge *m, u64 *val)
{
	for (;;) {
		int pick = -1;
		uintptr_t best = ~(uintptr_t)0;
		u64 bv = 0;
		if (m->w[0].a)
			pick = 0, best = m->w[0].a, bv = m->w[0].val;
		if (m->w[1].a && ls_before(m->w[1].a, m->w[1].val, best, bv))
			pick = 1, best = m->w[1].a, bv = m->w[1].val;
		if (m->i < g_ls.nspill && ls_before(g_ls.spill[m->i].addr, g_ls.spill[m->i].val, best, bv))
			pick = 2, best = g_ls.spill[m->i].addr, bv = g_ls.spill[m->i].val;
		if (pick < 0)
			return 0;
		if (pick == 2)
			m->i++;
		else
			ls_walk_next(&m->w[pick]);
		if (best != m->last || val_size(best, bv) < val_size(best, m->last_val)) {
			*val = m->last_val = bv;
			return m->last = best;
		}
	}
}

/* The node of block i, for i = 0, 1, ... in turn from ls_merge_start on:
   the blocks are walked again (storing the nodes would cost 4 bytes a
   block at the peak), in ls_merge's order (address, then larger first).
   0 for a block no longer there (a thread that did not stop freed it). */
RT_RARE static u32 ls_node_next(struct ls_merge *m, u64 i, uintptr_t *at, u64 *val)
{
	uintptr_t a = ls_addr(i);
	u64 size = ls_size((u32)i);
	while (*at && (*at < a || (*at == a && val_size(a, *val) > size)))
		*at = ls_merge_next(m, val);
	return *at == a && val_size(a, *val) == size ? (u32)(*val & NODE_MASK) : 0;
}

/* Lists the live blocks in address order into g_ls.alo/segs/size. */
RT_RARE static int ls_collect(struct tmpmem *tm)
{
	struct ls_merge m;
	struct ent *sp;
	u64 nsp = 0, cap, k = 0, i, val;
	u32 last = 0;
	int linker = 0;
	uintptr_t a, prev = 0;
	u32 s;

	cap = ls_bound() + NBIG;
	for (s = 0; s < NSHARDS; s++) {
		cap += g_shards[s].count;
		ls_exclude(g_shards[s].tab, (u64)g_shards[s].cap * sizeof(struct ent));
	}
	if (!(g_ls.alo = tmp_alloc(tm, cap * sizeof *g_ls.alo + 8)) ||
	    !(g_ls.size = tmp_alloc(tm, cap * sizeof *g_ls.size + 8)) || !(g_ls.st = tmp_alloc(tm, cap + 8)))
		return 0;
	/* The spill table, sorted. */
	if (!(sp = tmp_alloc(tm, (u64)(g_spill_count + 1) * sizeof *sp)))
		return 0;
	for (s = 0; s < NSHARDS; s++) {
		struct shard *sh = &g_shards[s];
		for (i = 0; i < sh->cap && nsp <= g_spill_count; i++)
			if (sh->tab[i].addr)
				sp[nsp++] = sh->tab[i];
	}
	ls_heapsort(sp, nsp);
	g_ls.spill = sp;
	g_ls.nspill = nsp;
	g_ls.nbigs = 0;
	g_ls.nsegs = 0;
	g_ls.nshared = 0;
	g_ls.bytes = 0;
	g_ls.node_map = cap * sizeof *g_ls.node;
	g_ls.node = rt_map(g_ls.node_map);
	ls_merge_start(&m);
	while (k < cap && (a = ls_merge_next(&m, &val))) {
		u64 size = val_size(a, val);
		u32 node = (u32)(val & NODE_MASK);
		if (node != last) {
			last = node;
			linker = node && is_linker_site(node_at(node)->pub.key);
		}
		/* The dynamic linker's blocks are roots (ls_linker_roots). */
		g_ls.st[k] = linker ? LS_REACHABLE : LS_UNREACHED;
		g_ls.bytes += size;
		if (g_ls.node && LS_NODE_COST * (k + 1) > g_ls.bytes + (1u << 20)) {
			/* Small blocks: the nodes are found again at the end. */
			rt_unmap(g_ls.node, g_ls.node_map);
			g_ls.node = NULL;
		} else if (g_ls.node) {
			g_ls.node[k] = node;
		}
		g_ls.nshared += a == prev;
		prev = a;
		if (!g_ls.nsegs || g_ls.segs[g_ls.nsegs - 1].hi != (u32)((u64)a >> 32)) {
			if (g_ls.nsegs == LS_NSEGS)
				return 0;
			g_ls.segs[g_ls.nsegs].hi = (u32)((u64)a >> 32);
			g_ls.segs[g_ls.nsegs++].first = k;
		}
		g_ls.alo[k] = (u32)a;
		g_ls.size[k] = size < LS_SIZE_ESC ? (u32)size : LS_SIZE_ESC;
		if (size >= LS_SIZE_ESC) {
			if (g_ls.nbigs == LS_NBIGS)
				return 0;
			g_ls.bigs[g_ls.nbigs].i = k;
			g_ls.bigs[g_ls.nbigs++].size = size;
		}
		k++;
	}
	g_ls.n = k;
	return 1;
}

/* ------------------------------------------------------------- mappings */

/* The first live block at or above lo (g_ls.n when none). */
RT_RARE static u64 ls_first_block(uintptr_t lo)
{
	u64 a = 0, b = g_ls.n;
	while (a < b) {
		u64 m = a + (b - a) / 2;
		if (ls_addr(m) < lo)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* Whether block i is the whole of one of glibc's mmap'd chunks inside
   [lo, hi), and where that chunk's map is: [*clo, *chi). The header
   before the block: the offset from the map's start, then the size with
   IS_MMAPPED alone of the flag bits. */
RT_RARE static int ls_mmapped_chunk(u64 i, uintptr_t lo, uintptr_t hi, uintptr_t *clo, uintptr_t *chi)
{
	uintptr_t a = ls_addr(i), off, sz;
	const uintptr_t *h = (const uintptr_t *)a - 2;
	if (a % 16 || a - lo < 16 || ls_gone(i))
		return 0;
	off = h[0], sz = h[1];
	if ((sz & 7) != 2 || (sz &= ~(uintptr_t)7) < (uintptr_t)ls_size((u32)i) + 16 || off > a - 16 - lo)
		return 0;
	*clo = a - 16 - off, *chi = a - 16 + sz;
	return *clo % 4096 == 0 && *chi % 4096 == 0 && *chi <= hi && *chi > a;
}

/* Marks from an anonymous mapping that holds live blocks. The kernel
   joins adjacent anonymous maps in one line of maps, so a program's own
   map (an arena of its own, as pymalloc's) may share it with big blocks
   glibc mmap'd: the mapping is read but for those blocks' chunks. One
   that holds any other block is an allocator's (glibc's main or thread
   arenas, another allocator's spans, with stale pointers in their free
   memory) and is not read. first: ls_first_block(lo). */
RT_RARE static void ls_root_beside_chunks(int pm, uintptr_t lo, uintptr_t hi, u64 first)
{
	uintptr_t clo, chi, at = lo;
	u64 i;
	for (i = first; i < g_ls.n && ls_addr(i) < hi; i++)
		if (!ls_mmapped_chunk(i, lo, hi, &clo, &chi))
			return;
	for (i = first; i < g_ls.n && ls_addr(i) < hi; i++) {
		ls_mmapped_chunk(i, lo, hi, &clo, &chi);
		if (clo > at)
			ls_root_touched(pm, at, clo);
		at = chi;
	}
	if (at < hi)
		ls_root_touched(pm, at, hi);
}

/* Whether [lo, hi) is the start of one of glibc's thread arenas: 64
   MiB-aligned, its heap_info's arena pointer into it or its prev pointer
   to another such heap. */
RT_RARE static int ls_glibc_heap(uintptr_t lo, uintptr_t hi)
{
	const uintptr_t *h = (const uintptr_t *)lo;
	if (lo % LS_GLIBC_HEAP || hi - lo < 4096)
		return 0;
	return (h[0] >= lo && h[0] < lo + LS_GLIBC_HEAP) || (h[1] && h[1] % LS_GLIBC_HEAP == 0);
}

/* The lowest stack pointer of a live (stopped) thread, else of a dead
   thread, in [lo, hi); 0 when none. *live says which. */
RT_RARE static uintptr_t ls_stack_in(uintptr_t lo, uintptr_t hi, uintptr_t self_sp, int *live)
{
	uintptr_t best = 0;
	stack_t alt;
	u32 i, n;
	*live = 1;
	/* Not where exit was called on an alternate stack: what else that
	   mapping holds (the program's data, main's frame above the
	   interrupted ones) is read, the stack's dead part excluded. */
	if (self_sp >= lo && self_sp < hi && !ls_on_altstack(self_sp, &alt))
		return self_sp;
#if defined(__x86_64__)
	if (g_ls.sig_uc) {
		/* The stack a handler on sigaltstack interrupted. */
		uintptr_t isp = (uintptr_t)((const ucontext_t *)g_ls.sig_uc)->uc_mcontext.gregs[REG_RSP] - LS_REDZONE;
		if (isp >= lo && isp < hi)
			return isp;
	}
#endif
	for (i = 0; i < g_ls.ntasks; i++) {
		uintptr_t sp = g_ls.tasks[i].sp;
		if (__atomic_load_n(&g_ls.tasks[i].answered, __ATOMIC_ACQUIRE) && sp >= lo && sp < hi &&
		    (!best || sp < best))
			best = sp;
	}
	if (best)
		return best;
	/* The last thread that died on it (a cached stack is reused). */
	*live = 0;
	n = __atomic_load_n(&g_ls_ndead, __ATOMIC_RELAXED);
	for (i = n; i-- > 0 && n - i <= LS_DEAD_CAP && g_ls_dead;) {
		uintptr_t sp = __atomic_load_n(&g_ls_dead[i % LS_DEAD_CAP], __ATOMIC_RELAXED);
		if (sp >= lo && sp < hi)
			return sp;
	}
	return 0;
}

/* Opens the process's /proc file name (maps, pagemap) through this
   thread: /proc/self/ is the main thread's, empty or refused once main
   has gone by pthread_exit (a zombie has no memory map): no thread stack
   was read and every block only a stack held was definitely lost.
   /proc/self/ where thread-self is missing (before Linux 3.17). */
RT_RARE static int ls_proc_open(const char *name)
{
	struct sbuf p = {.n = 0};
	int fd;
	sb_str(&p, "/proc/thread-self/");
	sb_str(&p, name);
	fd = open(p.s, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 || errno != ENOENT)
		return fd;
	p.n = 0;
	sb_str(&p, "/proc/self/");
	sb_str(&p, name);
	return open(p.s, O_RDONLY | O_CLOEXEC);
}

/* Reads the process's maps whole into mapped memory. */
RT_RARE static char *ls_maps(struct tmpmem *tm, u64 *len)
{
	u64 cap = 1 << 20, n = 0;
	char *buf = NULL;
	for (;;) {
		int fd = ls_proc_open("maps");
		ssize_t k;
		if (fd < 0 || !(buf = tmp_alloc(tm, cap))) {
			if (fd >= 0)
				close(fd);
			return NULL;
		}
		n = 0;
		while (n < cap && (k = read(fd, buf + n, cap - n)) != 0) {
			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0)
				break;
			n += (u64)k;
		}
		close(fd);
		if (n < cap) {
			*len = n;
			return buf;
		}
		cap *= 4; /* the old buffer stays until tmp_free */
	}
}

/* Notes the blocks not wholly in readable mappings (g_ls.gone), whose
   memory the scan must not read: a record of a block freed where the
   runtime did not see it (an allocator's interior pointer, a free by
   code that was not woven) may name pages since unmapped. */
RT_RARE static int ls_find_gone(struct tmpmem *tm)
{
	struct tmpmem own = {.k = 0}; /* unmapped before the maps are read for the roots */
	u64 len, nr = 0, i, x;
	const char *maps = ls_maps(&own, &len);
	struct ls_range *r = maps ? tmp_alloc(&own, (len / 32 + 1) * sizeof *r) : NULL; /* a line is 32+ bytes */
	int ok = r != NULL;
	const char *cur;
	struct vm_map m;
	for (cur = maps; ok && vm_next_map(&cur, maps + len, &m);) { /* the readable runs, adjacent mappings joined */
		if (m.perms[0] != 'r')
			continue;
		if (nr && r[nr - 1].hi == m.start)
			r[nr - 1].hi = m.end;
		else
			r[nr].lo = m.start, r[nr++].hi = m.end;
	}
	for (i = 0, x = 0; ok && i < g_ls.n; i++) {
		uintptr_t a = ls_addr(i), b = a + ls_size((u32)i);
		u64 y = nr;
		if (x < nr && r[x].lo <= a && b <= r[x].hi)
			continue; /* in the run of the block before: most are */
		x = 0;
		while (x < y) { /* the first run ending after a */
			u64 m = x + (y - x) / 2;
			if (r[m].hi <= a)
				x = m + 1;
			else
				y = m;
		}
		if (x < nr && r[x].lo <= a && b <= r[x].hi)
			continue;
		if (!g_ls.gone && !(g_ls.gone = tmp_alloc(tm, (g_ls.n / 64 + 1) * 8)))
			ok = 0;
		else
			g_ls.gone[i >> 6] |= (u64)1 << (i & 63);
	}
	tmp_free(&own);
	return ok;
}

/* Whether a map's path is the C library's (libc.so.6, libc-2.31.so): main_arena's. */
RT_RARE static int ls_is_libc(const char *name, wsize n)
{
	wsize b = n;
	while (b > 0 && name[b - 1] != '/')
		b--;
	return n - b >= 5 && memcmp(name + b, "libc", 4) == 0 && (name[b + 4] == '.' || name[b + 4] == '-');
}

/* Marks from every root: the mappings of maps (ls_maps). */
RT_RARE static void ls_roots(const char *maps, u64 len, uintptr_t self_sp)
{
	int pm = ls_proc_open("pagemap");
	const char *cur;
	struct vm_map m;
	for (cur = maps; vm_next_map(&cur, maps + len, &m);) {
		uintptr_t lo = m.start, hi = m.end, sp;
		const char *name = m.path;
		wsize n = m.path_len;
		int live;
		u64 i;
		if (m.perms[0] != 'r' || m.perms[1] != 'w')
			continue;
		if (n >= 6 && memcmp(name, "[heap]", 6) == 0)
			continue;
		if (n >= 5 && memcmp(name, "/dev/", 5) == 0 && !(n == 9 && memcmp(name, "/dev/zero", 9) == 0))
			continue;
		if (n == 0 && ls_glibc_heap(lo, hi))
			continue;
		sp = ls_stack_in(lo, hi, self_sp, &live);
		if (sp)
			lo = sp;
		g_ls.root_tag = sp || (n && !ls_is_libc(name, n)) ? LS_ROOT_OWN : 1;
		if (n == 0 && (i = ls_first_block(lo)) < g_ls.n && ls_addr(i) < hi)
			ls_root_beside_chunks(pm, lo, hi, i);
		else if (m.perms[3] == 'p')
			ls_root_touched(pm, lo, hi);
		else
			ls_root(lo, hi);
	}
	g_ls.root_tag = LS_ROOT_OWN; /* the registers next */
	if (pm >= 0)
		close(pm);
}

/* Marks from the registers of the threads stopped for the scan, and the
   exiting thread's when a handler on sigaltstack called exit. */
RT_RARE static void ls_task_regs(void)
{
#if defined(__x86_64__)
	u32 i;
	for (i = 0; i <= g_ls.ntasks; i++) {
		/* The last: the exiting thread's interrupted by a signal. */
		const struct ls_task *t = i < g_ls.ntasks ? &g_ls.tasks[i] : NULL;
		const ucontext_t *uc = t ? t->uc : g_ls.sig_uc;
		if (t && !__atomic_load_n(&t->answered, __ATOMIC_ACQUIRE))
			continue;
		g_ls.leader = LS_ROOTS;
		if (uc) /* REG_R8 .. REG_RSP: the sixteen general registers */
			ls_scan((uintptr_t)&uc->uc_mcontext.gregs[REG_R8], (uintptr_t)&uc->uc_mcontext.gregs[REG_RSP + 1], LS_ROOT_OWN);
		else if (t) /* stopped by the tracer: the same, read by ptrace */
			ls_scan((uintptr_t)&t->regs[0], (uintptr_t)&t->regs[16], LS_ROOT_OWN);
		ls_drain();
	}
#endif
}

/* ------------------------------------------------------------- tallies */

RT_RARE static struct ls_tally *ls_tally_of(u32 node)
{
	u64 i = mix64(node) & (g_ls.ntally_cap - 1);
	for (; g_ls.tally[i].node && g_ls.tally[i].node != node; i = (i + 1) & (g_ls.ntally_cap - 1))
		;
	g_ls.tally[i].node = node;
	return &g_ls.tally[i];
}

/* A node's tally after a scan, or NULL. */
RT_RARE static const struct ls_tally *ls_tally_find(u32 node)
{
	u64 i;
	if (!g_ls.ok || !node)
		return NULL;
	for (i = mix64(node) & (g_ls.ntally_cap - 1); g_ls.tally[i].node; i = (i + 1) & (g_ls.ntally_cap - 1))
		if (g_ls.tally[i].node == node)
			return &g_ls.tally[i];
	return NULL;
}

RT_RARE static int ls_tally_all(struct tmpmem *tm)
{
	static const int kind_of[4] = {[LS_UNREACHED] = 0, [LS_INDIRECT] = 1, [LS_POSSIBLE] = 2, [LS_REACHABLE] = 3};
	u64 cap = 64, i;
	u32 maxn = __atomic_load_n(&g_node_next, __ATOMIC_RELAXED);
	struct ls_merge m;
	uintptr_t at = 1;
	u64 val = 0;
	while (cap < 2 * (g_ls.n < maxn ? g_ls.n : maxn) + 64)
		cap *= 2;
	if (!(g_ls.tally = rt_map(cap * sizeof *g_ls.tally)))
		return 0;
	(void)tm;
	g_ls.ntally_cap = cap;
	if (!g_ls.node)
		ls_merge_start(&m);
	for (i = 0; i < g_ls.n; i++) {
		u32 node = g_ls.node ? g_ls.node[i] : ls_node_next(&m, i, &at, &val);
		int k = kind_of[g_ls.st[i]];
		u64 size = ls_size((u32)i);
		struct ls_tally *t;
		if (!node)
			continue; /* inherited from the parent process */
		t = ls_tally_of(node);
		t->blocks[k]++;
		t->bytes[k] += size;
		g_ls.kind_blocks[k]++;
		g_ls.kind_bytes[k] += size;
	}
	return 1;
}

/* ---------------------------------------------------------------- scan */

RT_RARE static int ls_sort_excl(void)
{
	u32 i, j;
	for (i = 1; i < g_ls.nexcl; i++) {
		struct ls_range x = g_ls.excl[i];
		for (j = i; j > 0 && g_ls.excl[j - 1].lo > x.lo; j--)
			g_ls.excl[j] = g_ls.excl[j - 1];
		g_ls.excl[j] = x;
	}
	return 1;
}

RT_RARE static void ls_exclude_runtime(struct tmpmem *tm)
{
	struct rt_thread *T;
	u32 c;
	int k;
	u32 used = (__atomic_load_n(&g_node_next, __ATOMIC_RELAXED) + CHUNK_NODES - 1) >> CHUNK_BITS;
	/* Only the chunks nodes were taken from: the rest of g_chunks was
	   never written, and reading it could map its pages. */
	for (c = 0; c < NCHUNKS && c < used; c++)
		ls_exclude(__atomic_load_n(&g_chunks[c], __ATOMIC_ACQUIRE), (u64)CHUNK_NODES * sizeof(struct rt_node));
	for (T = g_threads; T; T = T->next) {
		if (T->stack)
			ls_exclude(T->stack, T->reserved * sizeof *T->stack);
		/* Node numbers, parent << 32 | child: in a heap's range once
		   there are some 20,000 nodes. */
		if (T->chash)
			ls_exclude(T->chash, ((u64)T->cmask + 1) * sizeof *T->chash);
		if (T->cc)
			ls_exclude(T->cc, TMAP_BYTES);
	}
	for (k = 0; k < tm->k; k++)
		ls_exclude(tm->p[k], tm->n[k]);
	ls_exclude(g_ls_dead, LS_DEAD_CAP * sizeof *g_ls_dead);
	/* Every map the runtime made (the ones above too: they are listed
	   unless the list filled). */
	own_each(ls_exclude);
	/* Statics holding block addresses that are not the program's. */
	ls_exclude(&g_ls, sizeof g_ls);
	ls_exclude(g_ls.node, g_ls.node ? g_ls.node_map : 0);
	ls_exclude(&g_lq, sizeof g_lq);
	ls_exclude(g_lq_more, sizeof g_lq_more);
	ls_exclude(g_big, sizeof g_big);
	ls_exclude(g_hs, sizeof g_hs);
	ls_exclude(g_hs_cache, sizeof g_hs_cache);
	ls_exclude(&g_vm, sizeof g_vm);
	ls_exclude(g_radix, sizeof g_radix);
	ls_exclude(g_shards, sizeof g_shards);
	ls_exclude(g_chunks, sizeof g_chunks);
	ls_exclude(g_shared_bins, sizeof g_shared_bins);
	ls_exclude(rt_cc_none, sizeof rt_cc_none);
	ls_exclude(g_pc_text, sizeof g_pc_text);
	/* The bump allocators' maps, whole: their unused rest (most of the
	   side table's 8 MiB slabs) would be read as zeros. */
	bump_each(&g_slab, ls_exclude);
	bump_each(&g_arena, ls_exclude);
	vm_exclude(ls_exclude);
	smp_exclude(ls_exclude);
	mk_exclude(ls_exclude);
	rg_exclude(ls_exclude);
}

/* The dynamic linker's blocks are roots (is_linker_site, interpose.c):
   marked reachable, with what they point to. */
RT_RARE static void ls_linker_roots(void)
{
	u64 i;
	for (i = 0; i < g_ls.n; i++)
		if (g_ls.st[i] == LS_REACHABLE)
			ls_push((u32)i);
	g_ls.leader = LS_ROOTS;
	ls_drain();
}

/* The scan proper, between stopping and resuming the other threads. */
RT_RARE static __attribute__((noinline)) int ls_run(struct tmpmem *tm, uintptr_t self_sp)
{
	const char *maps;
	u64 len;
	if (!(g_ls.excl = tmp_alloc(tm, 1 << 20)))
		return 0;
	g_ls.excl_cap = (1 << 20) / sizeof *g_ls.excl;
	if (!ls_collect(tm) || !ls_index(tm))
		return 0;
	if (!(g_ls.stack = tmp_alloc(tm, (g_ls.stack_cap = 3 * g_ls.n + 64) * sizeof *g_ls.stack)))
		return 0;
	if (!ls_find_gone(tm))
		return 0;
	/* Before the graph: its edges skip glibc's links to chunk headers too. */
	g_ls.glibc = REAL_FN(malloc) == __libc_malloc;
	if (ls_graph_room(tm))
		ls_graph();
	/* The mappings, read after the scan's own maps are made, into memory
	   that is then excluded with them. */
	if (!(maps = ls_maps(tm, &len)))
		return 0;
	self_sp = ls_exit_sp(tm, maps, len, self_sp);
	g_ls.root_tag = 1;
	ls_exclude_runtime(tm);
	ls_sort_excl();
	ls_linker_roots(); /* before the roots: the only blocks marked yet */
	ls_roots(maps, len, self_sp);
	ls_root(g_ls.saved[0].lo, g_ls.saved[0].hi);
	ls_root(g_ls.saved[1].lo, g_ls.saved[1].hi);
	ls_task_regs();
	ls_cliques();
	return ls_tally_all(tm);
}

/* Classifies every live block (see the top of this file). Runs at most
   once, at the final exit; g_lock held. self_sp: the exit writer's frame;
   the exiting thread's stack is scanned from there up, not through the
   writer's own frames, whose unwritten buffers hold stale words (a
   pointer from a signal frame that ran there before, say). The tallies
   stay for the writer and the summary. Works in its own memory (freed
   before it returns, but the tallies). */
RT_RARE static __attribute__((noinline)) void ls_leak_scan(uintptr_t self_sp)
{
	struct tmpmem tm = {.k = 0};
	u64 t0 = now_ns(), c;
	if (g_ls.done || !ls_may_run())
		return;
	if (g_cfg_summary == 0 && g_cfg_out_set && !g_cfg_out[0] && g_cfg_leak_exitcode < 0)
		return; /* nobody would see the result */
	g_ls.done = 1;
	if (!(g_ls.tasks = tmp_alloc(&tm, LS_MAXTASKS * sizeof *g_ls.tasks + LT_STACK))) {
		g_ls.nomem = tm.nomem;
		return;
	}
	ls_stop();
	g_ls.ok = ls_run(&tm, self_sp);
	g_ls.nomem = !g_ls.ok && tm.nomem; /* said in the summary and M leak_scan_failed */
	ls_resume();
	g_ls.ns = now_ns() - t0;
	own_note(); /* its maps go below */
	/* The page index's chunks were mapped on their own. Listed, so that
	   the top's unwritten pages are not read (which maps them on kernels
	   without a shared zero page: 2 MiB at every exit). */
	for (c = 0; g_ls.top && c < g_ls.nchunks && c < LS_NCHUNKS; c++)
		rt_unmap(g_ls.top[g_ls.chunk[c]], sizeof(u64) << (LS_CHUNK - LS_PAGE));
	for (c = 0; g_ls.top && g_ls.nchunks > LS_NCHUNKS && c < (1u << LS_TOP); c++)
		if (g_ls.top[c])
			rt_unmap(g_ls.top[c], sizeof(u64) << (LS_CHUNK - LS_PAGE));
	g_ls.nchunks = 0;
	tmp_free(&tm);
	g_ls.alo = NULL;
	g_ls.size = NULL;
	g_ls.spill = NULL;
	g_ls.st = NULL;
	g_ls.stack = NULL;
	g_ls.off = g_ls.edge = NULL;
	g_ls.graph = 0;
	if (g_ls.node)
		rt_unmap(g_ls.node, g_ls.node_map);
	g_ls.node = NULL;
	g_ls.top = NULL;
	g_ls.tasks = NULL;
	g_ls.ntasks = 0;
	if (g_ls.ok)
		ls_group_all();
}
