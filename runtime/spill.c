//go:build ignore

/* spill.c: the side table's spill table (side.c), for the blocks its
   radix table cannot hold: a block in a granule already taken
   (allocators that pack blocks closer than 32 bytes), sizes of 256 MiB
   and more, small blocks of nodes from 2^20 on, addresses beyond 2^48,
   or when a leaf cannot be mapped. NSHARDS open-addressing tables keyed
   by mix64(address), each entry 24 bytes {address, size << NODE_BITS |
   node, generation}, each shard with its own spinlock; mmap'd, grown by
   5/4 at load 0.85 (shrunk at load 1/4), linear probing, backward-shift
   deletion. It is empty in most programs, and then costs one load of
   g_spill_count per free. Block sizes that do not fit in SIZE_BITS bits
   (>= 64 GiB) are kept in a small extra list (g_big). */

#include "internal.h"

#define NSHARDS 128u
#define SHARD_MIN 256u /* entries: one page */
#define NBIG 64

struct shard {
	u32 lock;
	u32 cap, count;
	u32 grow_at, shrink_at;
	struct ent *tab;
} __attribute__((aligned(64)));

/* The spill table: each shard's fields under its own lock. g_spill_count,
   their total, atomic. */
static struct shard g_shards[NSHARDS] RT_LARGE;
static u32 g_spill_count;

/* Sizes that do not fit SIZE_BITS: under g_big_lock. */
static struct {
	uintptr_t addr;
	u64 size;
} g_big[NBIG];
static u32 g_big_lock;

static inline u32 home(u64 h, u32 cap)
{
	return (u32)(((h >> 32) * (u64)cap) >> 32);
}

/* Returns a's shard, and starts loading a's home slot so that the cache
   miss overlaps taking the lock. tab and cap are read without the lock
   (atomically): a stale pair only makes a useless prefetch, which never
   faults. */
static inline struct shard *shard_of(uintptr_t a, u64 *h)
{
	struct shard *s;
	struct ent *tab;
	*h = mix64((u64)a);
	s = &g_shards[*h & (NSHARDS - 1)];
	tab = __atomic_load_n(&s->tab, __ATOMIC_RELAXED);
	if (tab)
		__builtin_prefetch(&tab[home(*h, __atomic_load_n(&s->cap, __ATOMIC_RELAXED))], 1);
	return s;
}

/* Whether s ever held an entry (it has a table). The walks at exit skip
   the others unlocked: taking each lock wrote the 8 KiB of g_shards, 3
   pages of a program that never spilled. */
static inline int shard_used(struct shard *s)
{
	return __atomic_load_n(&s->tab, __ATOMIC_RELAXED) != NULL;
}

/* Rebuilds s with room for cap entries (rounded up to whole pages).
   Shard lock held. */
static int shard_resize(struct shard *s, u32 cap)
{
	wsize bytes = ((wsize)cap * sizeof(struct ent) + 4095) & ~(wsize)4095;
	struct ent *nt = rt_map(bytes);
	u32 ncap = (u32)(bytes / sizeof(struct ent)), i;
	if (!nt)
		return 0;
	for (i = 0; i < s->cap; i++) {
		struct ent e = s->tab[i];
		u32 j;
		if (!e.addr)
			continue;
		for (j = home(mix64((u64)e.addr), ncap); nt[j].addr; j = j + 1 == ncap ? 0 : j + 1)
			;
		nt[j] = e;
	}
	if (s->tab)
		rt_unmap(s->tab, (wsize)s->cap * sizeof(struct ent));
	__atomic_store_n(&s->tab, nt, __ATOMIC_RELAXED);
	__atomic_store_n(&s->cap, ncap, __ATOMIC_RELAXED);
	s->grow_at = (u32)((u64)ncap * 85 / 100);
	s->shrink_at = ncap > SHARD_MIN ? ncap / 4 : 0;
	return 1;
}

/* The spill table: the shards (see above). Inserts a -> val. If a is already there (a stale entry), replaces it and
   returns the old one in *old (else old->addr == 0). Returns 0 when out of
   memory. */
static int spill_insert(uintptr_t a, u64 val, struct ent *old)
{
	u64 h;
	struct shard *s = shard_of(a, &h);
	int ok = 1;
	u32 i;
	old->addr = 0;
	spin_lock(&s->lock);
	if (s->count >= s->grow_at) {
		u32 ncap = s->cap < SHARD_MIN ? SHARD_MIN : s->cap + s->cap / 4;
		if (!shard_resize(s, ncap)) {
			ok = 0;
			goto out;
		}
	}
	for (i = home(h, s->cap);; i = i + 1 == s->cap ? 0 : i + 1) {
		struct ent *e = &s->tab[i];
		if (!e->addr) {
			e->addr = a;
			e->val = val;
			e->gen = __atomic_load_n(&g_gen, __ATOMIC_RELAXED);
			s->count++;
			__atomic_fetch_add(&g_spill_count, 1, __ATOMIC_RELAXED);
			break;
		}
		if (e->addr == a) {
			*old = *e;
			e->val = val;
			e->gen = __atomic_load_n(&g_gen, __ATOMIC_RELAXED);
			break;
		}
	}
out:
	spin_unlock(&s->lock);
	return ok;
}

/* Removes a; returns 1 and its entry if it was there. */
static int spill_remove(uintptr_t a, struct ent *out)
{
	u64 h;
	struct shard *s = shard_of(a, &h);
	u32 i, j, k;
	int found = 0;
	spin_lock(&s->lock);
	if (!s->cap)
		goto out;
	for (i = home(h, s->cap);; i = i + 1 == s->cap ? 0 : i + 1) {
		if (!s->tab[i].addr)
			goto out;
		if (s->tab[i].addr == a)
			break;
	}
	*out = s->tab[i];
	found = 1;
	/* Backward-shift deletion: move later entries of the cluster into the
	   hole when it lies on their probe path. */
	for (j = i, k = i;;) {
		u32 hk;
		k = k + 1 == s->cap ? 0 : k + 1;
		if (!s->tab[k].addr)
			break;
		hk = home(mix64((u64)s->tab[k].addr), s->cap);
		if (j < k ? (hk <= j || hk > k) : (hk <= j && hk > k)) {
			s->tab[j] = s->tab[k];
			j = k;
		}
	}
	s->tab[j].addr = 0;
	s->count--;
	__atomic_fetch_sub(&g_spill_count, 1, __ATOMIC_RELAXED);
	if (s->count < s->shrink_at) {
		u32 ncap = s->count + s->count / 2;
		shard_resize(s, ncap < SHARD_MIN ? SHARD_MIN : ncap);
	}
out:
	spin_unlock(&s->lock);
	return found;
}

static void big_put(uintptr_t a, u64 size)
{
	int i;
	spin_lock(&g_big_lock);
	for (i = 0; i < NBIG; i++) {
		if (!g_big[i].addr) {
			g_big[i].addr = a;
			g_big[i].size = size;
			break;
		}
	}
	spin_unlock(&g_big_lock);
}

static u64 big_take(uintptr_t a)
{
	u64 size = SIZE_SAT;
	int i;
	spin_lock(&g_big_lock);
	for (i = 0; i < NBIG; i++) {
		if (g_big[i].addr == a) {
			g_big[i].addr = 0;
			size = g_big[i].size;
			break;
		}
	}
	spin_unlock(&g_big_lock);
	return size;
}

/* The size of the block at a with side-table value val: from g_big when
   it did not fit. */
static u64 val_size(uintptr_t a, u64 val)
{
	u64 size = val >> NODE_BITS;
	int b;
	if (size == SIZE_SAT)
		for (b = 0; b < NBIG; b++)
			if (g_big[b].addr == a)
				size = g_big[b].size;
	return size;
}
