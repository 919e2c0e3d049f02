//go:build ignore

/* resident.c: the runtime's own memory. Every map the runtime makes is
   listed here (rt_own) until unmapped (rt_unmap), so that the leak scan
   reads none of them as a root (own_each), and WEAVE_STATS=1 can say how
   much of the process's resident memory is the runtime's:
   own_resident counts the listed maps' pages that are resident and this
   process's alone (/proc/self/pagemap: present and exclusively mapped;
   not the shared zero page a read of an untouched page maps, which RSS
   does not count either), and own_note keeps its largest value over the
   run, read where it can be largest: at heap-peak snapshots (vmmap.c),
   before a thread's maps go (thread.c), at the exit writer's start and
   at the leak scan's end, and when the profile and the summary are
   written. Not counted: the runtime's code and globals (in the
   executable's own mappings), the stacks glibc maps for the runtime's
   pthreads (the control and checkpoint threads, a sampler without raw
   clone). The runtime calls no malloc of its own.

   The list is lock-free (a map may be made by any thread): a slot is
   claimed by a compare-and-swap of its address from 0, the first free
   one in order, so a small program touches one page of it. It is mapped
   on first use, not a global: the leak scan reads the resident pages of
   the executable's bss whole, and under valgrind all of them are (64 KiB
   more of bss cost binary-trees 14 1.6 M instructions at exit). */

#include "internal.h"

#define OWN_SLOTS 4096u

struct own_map {
	uintptr_t p; /* 0: free; 1: being filled */
	wsize n;
};
static struct own_map *g_own; /* OWN_SLOTS of them */
static u32 g_own_hi;       /* slots ever used: the scans' bound */
static u64 g_own_unlisted; /* bytes mapped while the list was full */
static u64 g_own_peak;     /* own_note's largest reading */

/* Raises g_own_hi to v. */
static void own_hi_at_least(u32 v)
{
	u32 hi = __atomic_load_n(&g_own_hi, __ATOMIC_RELAXED);
	while (hi < v && !__atomic_compare_exchange_n(&g_own_hi, &hi, v, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

/* Asks for the n bytes at p in small pages (see rt_small_pages) and lists
   them as the runtime's. */
static void rt_own(void *p, wsize n)
{
	struct own_map *own = __atomic_load_n(&g_own, __ATOMIC_ACQUIRE);
	u32 i;
	rt_small_pages(p, n);
	if (!own) {
		struct own_map *m = mmap(NULL, OWN_SLOTS * sizeof *m, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED)
			m = NULL;
		else {
			rt_small_pages(m, OWN_SLOTS * sizeof *m);
			m[0].n = OWN_SLOTS * sizeof *m; /* itself, in slot 0 */
			m[0].p = (uintptr_t)m;
		}
		if (m && !__atomic_compare_exchange_n(&g_own, &own, m, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			munmap(m, OWN_SLOTS * sizeof *m); /* another thread's came first: own is it */
		else if (m) {
			own = m;
			own_hi_at_least(1); /* slot 0's */
		}
	}
	for (i = 0; own && i < OWN_SLOTS; i++) {
		uintptr_t z = 0;
		if (__atomic_load_n(&own[i].p, __ATOMIC_RELAXED) ||
		    !__atomic_compare_exchange_n(&own[i].p, &z, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		own[i].n = n;
		__atomic_store_n(&own[i].p, (uintptr_t)p, __ATOMIC_RELEASE);
		own_hi_at_least(i + 1);
		return;
	}
	__atomic_fetch_add(&g_own_unlisted, n, __ATOMIC_RELAXED);
}

/* Unmaps a map rt_own listed (or any other: then only unmaps it). */
static void rt_unmap(void *p, wsize n)
{
	struct own_map *own = __atomic_load_n(&g_own, __ATOMIC_ACQUIRE);
	u32 i, hi = __atomic_load_n(&g_own_hi, __ATOMIC_ACQUIRE);
	for (i = 0; own && i < hi; i++)
		if (__atomic_load_n(&own[i].p, __ATOMIC_RELAXED) == (uintptr_t)p) {
			__atomic_store_n(&own[i].p, 0, __ATOMIC_RELEASE);
			break;
		}
	munmap(p, n);
}

/* Bytes of [p, p + n) resident and this process's alone (pm: the opened
   pagemap), or resident by mincore when pm < 0 (no pagemap). */
RT_RARE static u64 own_pages(int pm, uintptr_t p, wsize n, wsize pg)
{
	enum { BATCH = 512 };
	u64 ent[BATCH], k, m, cnt = 0;
	unsigned char v[BATCH];
	uintptr_t a = p & ~(uintptr_t)(pg - 1), end = p + n;
	for (; a < end; a += m * pg) {
		m = (end - a + pg - 1) / pg;
		if (m > BATCH)
			m = BATCH;
		if (pm >= 0) {
			if (pread(pm, ent, m * sizeof *ent, (off_t)(a / pg * sizeof *ent)) != (ssize_t)(m * sizeof *ent))
				break;
			for (k = 0; k < m; k++)
				cnt += (ent[k] >> 63) & (ent[k] >> 56) & 1; /* present, exclusive */
		} else {
			if (mincore((void *)a, m * pg, v) != 0)
				break;
			for (k = 0; k < m; k++)
				cnt += v[k] & 1;
		}
	}
	return cnt * pg;
}

/* The runtime's maps' resident bytes now. */
RT_RARE static u64 own_resident(void)
{
	wsize pg = (wsize)sysconf(_SC_PAGESIZE);
	u64 sum = 0;
	struct own_map *own = __atomic_load_n(&g_own, __ATOMIC_ACQUIRE);
	u32 i, hi = __atomic_load_n(&g_own_hi, __ATOMIC_ACQUIRE);
	int pm = ls_proc_open("pagemap");
	for (i = 0; own && i < hi; i++) {
		uintptr_t p = __atomic_load_n(&own[i].p, __ATOMIC_ACQUIRE);
		if (p > 1)
			sum += own_pages(pm, p, own[i].n, pg);
	}
	if (pm >= 0)
		close(pm);
	return sum;
}

/* Calls f(map, size) for every map listed, for the leak scan: the
   runtime's memory is never a root (its trace buffers, pool table and
   marks hold copies of block addresses). */
RT_RARE static void own_each(void (*f)(const void *p, u64 n))
{
	struct own_map *own = __atomic_load_n(&g_own, __ATOMIC_ACQUIRE);
	u32 i, hi = __atomic_load_n(&g_own_hi, __ATOMIC_ACQUIRE);
	for (i = 0; own && i < hi; i++) {
		uintptr_t p = __atomic_load_n(&own[i].p, __ATOMIC_ACQUIRE);
		if (p > 1)
			f((const void *)p, own[i].n);
	}
}

/* Under WEAVE_STATS=1, takes a reading into the largest; errno kept. */
static void own_note(void)
{
	u64 r, cur;
	int e = errno;
	if (!g_cfg_stats)
		return;
	r = own_resident();
	cur = __atomic_load_n(&g_own_peak, __ATOMIC_RELAXED);
	while (r > cur && !__atomic_compare_exchange_n(&g_own_peak, &cur, r, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	errno = e;
}
