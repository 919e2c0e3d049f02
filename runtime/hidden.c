//go:build ignore

/* hidden.c: the sites of hidden allocations, one per operation and caller
   object (interpose.c).

   A hidden allocation's leaf is keyed by a site, and a woven frame that
   calls into two libraries (libc's fopen, and an unwoven libfoo.so that
   leaks) must get two leaves, so that `leak:libfoo.so` can suppress the
   one and not the other. So the site is that of (op, the object the
   allocator was called from): the caller's return address, resolved to
   its object with _dl_find_object (glibc 2.35; lock-free, no allocation,
   safe while the dynamic linker loads), whose name is copied then (the
   object may be unloaded before exit). Without _dl_find_object (an older
   glibc, or it fails) the object is the return address itself. The
   address is kept too, for the profile (R record): package profile's
   readers resolve it against the memory map when the name is unknown
   (the executable's is "").

   Cost: a direct-mapped cache from (return address, op) to the site, one
   64-bit word a slot ((address << 16) | 1 + site index), written after
   the site (release, acquire): a hit is a hash, a load and two compares; a miss
   resolves the object and takes g_hs_lock. The table holds HS_CAP sites;
   past that, the operation's one site (rt_hidden_sites[0]) is used. The
   dynamic linker's own allocations keep their site (interpose.c). */

#include "internal.h"

#define HS_CAP 256u    /* sites */
#define HS_CACHE 1024u /* cache slots, a power of two */
#define HS_PATH 160u   /* an object's name, its tail kept */

struct hsite {
	struct __weave_site site;
	uintptr_t obj; /* the object's start, or the return address */
	uintptr_t pc;  /* the first return address seen */
	char path[HS_PATH];
};

static struct hsite g_hs[HS_CAP] RT_LARGE;
static u32 g_hs_n; /* published with release: entries below are complete */
static u32 g_hs_lock;
static u64 g_hs_cache[HS_CACHE] RT_LARGE;

static inline int hs_owns(const struct __weave_site *s)
{
	return (const char *)s >= (const char *)g_hs && (const char *)s < (const char *)(g_hs + HS_CAP);
}

/* The hidden site of s (one of this table's), or NULL. */
static inline const struct hsite *hs_of(const struct __weave_site *s)
{
	return hs_owns(s) ? (const struct hsite *)(const void *)((const char *)s - offsetof(struct hsite, site)) : NULL;
}

/* The object holding pc: its start, and its name into path (or ""). */
static uintptr_t hs_object(uintptr_t pc, char *path)
{
	path[0] = 0;
#ifdef DLFO_STRUCT_HAS_EH_DBASE
	{
		extern __typeof(_dl_find_object) _dl_find_object __attribute__((weak));
		struct dl_find_object r;
		if (_dl_find_object && _dl_find_object((void *)pc, &r) == 0) {
			const char *name = r.dlfo_link_map ? r.dlfo_link_map->l_name : NULL;
			wsize n = name ? strlen(name) : 0;
			if (n >= HS_PATH)
				name += n - (HS_PATH - 1), n = HS_PATH - 1;
			if (n)
				memcpy(path, name, n);
			path[n] = 0;
			return (uintptr_t)r.dlfo_map_start;
		}
	}
#endif
	return pc;
}

static __attribute__((noinline)) const struct __weave_site *hs_slow(unsigned op, uintptr_t pc, u64 *slot,
								   const struct __weave_site *dflt)
{
	char path[HS_PATH];
	uintptr_t obj = hs_object(pc, path);
	u32 i, n;
	spin_lock(&g_hs_lock);
	n = g_hs_n;
	for (i = 0; i < n && !(g_hs[i].obj == obj && g_hs[i].site.op == op); i++)
		;
	if (i == n) {
		if (n == HS_CAP) {
			spin_unlock(&g_hs_lock);
			return dflt;
		}
		g_hs[n].site = *dflt;
		g_hs[n].obj = obj;
		g_hs[n].pc = pc;
		memcpy(g_hs[n].path, path, strlen(path) + 1); /* not the stack garbage after it */
		__atomic_store_n(&g_hs_n, n + 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(slot, (u64)pc << 16 | (i + 1), __ATOMIC_RELEASE);
	spin_unlock(&g_hs_lock);
	return &g_hs[i].site;
}

/* A fork child: the lock may have been held by a thread that is gone. */
RT_RARE static void hs_fork_child(void)
{
	g_hs_lock = 0;
}

/* The site of a hidden allocation by op called from ret; dflt is the
   operation's one site (the fallback). in_rt set. */
static inline const struct __weave_site *hs_site(unsigned op, const void *ret, const struct __weave_site *dflt)
{
	uintptr_t pc = (uintptr_t)ret & ((1ull << 48) - 1);
	u64 *slot = &g_hs_cache[mix64(pc << 4 | op) & (HS_CACHE - 1)];
	u64 c = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	u32 i = (u32)(c & 0xffff);
	if (__builtin_expect(i && c >> 16 == pc && g_hs[i - 1].site.op == op, 1))
		return &g_hs[i - 1].site;
	return hs_slow(op, pc, slot, dflt);
}

/* The file name of the object holding addr as dladdr gives it (the
   executable's: its argv[0]), or "". Through _dl_find_object where glibc
   has it, which takes no lock: the exit writer holds g_lock, and dladdr
   waits for the dynamic linker's lock, which a thread in dlopen holds
   while it may wait for g_lock in malloc (lbzip2 2.5: a worker loading
   libgcc_s for pthread_exit's unwinder while main called _exit; both
   waited for ever). Not for hot paths. */
RT_RARE static const char *rt_object_name(const void *addr)
{
	Dl_info di;
#ifdef DLFO_STRUCT_HAS_EH_DBASE
	extern __typeof(_dl_find_object) _dl_find_object __attribute__((weak));
	struct dl_find_object r;
	if (_dl_find_object) {
		if (_dl_find_object((void *)addr, &r) != 0 || !r.dlfo_link_map)
			return "";
		if (r.dlfo_link_map->l_name[0] || (uintptr_t)addr < g_program_lo || (uintptr_t)addr >= g_program_hi || !g_argv || !g_argv[0])
			return r.dlfo_link_map->l_name;
		return g_argv[0];
	}
#endif
	return dladdr(addr, &di) && di.dli_fname ? di.dli_fname : "";
}

/* The object a hidden site's allocator was called from, or "" (not a
   site of this table, or unknown): the name copied when the site was
   made, else (the executable) the dynamic linker's name for it. */
RT_RARE static const char *hs_module(const struct __weave_site *s)
{
	const struct hsite *h = hs_of(s);
	if (!h)
		return "";
	return h->path[0] ? h->path : rt_object_name((const void *)h->pc);
}
