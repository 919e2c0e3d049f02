//go:build ignore

/* interpose.c: the interposed malloc family: library ("hidden")
   allocations, and the real allocator behind every call.

   The runtime defines malloc, free, calloc, realloc, reallocarray,
   memalign, aligned_alloc, posix_memalign, valloc and pvalloc, as weak
   symbols. Linked into the executable they come first in the dynamic
   linker's lookup order, so every call to them in the process - libc's
   own (getline, fopen, strdup, qsort, ...), other libraries', code that
   was not woven - arrives here. Each forwards to the allocator that would
   have been called without the runtime: the next definition in lookup
   order (dlsym(RTLD_NEXT): an LD_PRELOADed or linked allocator, a
   sanitizer's, else glibc's), or glibc's __libc_* functions when dlsym is
   unavailable. While dlsym runs, allocations come from a small static
   buffer whose blocks are never passed on.
   A call made with in_rt clear is recorded as a hidden allocation: its
   leaf's key is a site of the operation (fn = 0): the dynamic linker's
   (rt_hidden_sites[1][op]), else the one of the caller's object
   (hidden.c), charged below the innermost woven frame of the thread. The advice
   functions call the library function with in_rt set, so what they record
   is not recorded again. Frees through free() and realloc() always look
   the block up, so a block allocated on one side (woven or not) and freed
   on the other is counted once each way.
   Recording is on when WEAVE_HIDDEN is not "0", the runtime copy is the
   process's active one (see init.c), and malloc, free, calloc
   and realloc all resolve to this runtime's (a program, or a statically
   linked sanitizer, that defines its own malloc wins over the weak
   definitions: then nothing is interposed and nothing hidden recorded). */

#include "internal.h"

/* A sanitizer (thread, address, memory) replaces the allocator itself and
   must see every call to it, from its own start-up on: built with one, the
   runtime interposes nothing and records no hidden allocations. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define RT_INTERPOSE 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define RT_INTERPOSE 0
#endif
#endif
#ifndef RT_INTERPOSE
#define RT_INTERPOSE 1
#endif

/* glibc's own entry points, the fallback when dlsym is missing (a static
   link, or glibc < 2.34 without -ldl). The first five are strong
   references: in a static link they bring in glibc's malloc, whose strong
   definitions then win over the weak ones below (no interposition). */
extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t) __attribute__((weak));
extern void *__libc_pvalloc(size_t) __attribute__((weak));
extern __typeof(dlsym) dlsym __attribute__((weak));
extern __typeof(dladdr) dladdr __attribute__((weak));

/* Allocations made while dlsym runs (in the thread looking up): a static
   buffer, never freed. Each block has its size in the 16 bytes before it. */
static char g_boot[16384] __attribute__((aligned(64))) RT_LARGE;
static wsize g_boot_used;

static __attribute__((unused)) void *boot_alloc(wsize n, wsize align)
{
	wsize at, want;
	if (align < 16)
		align = 16;
	if (align > 4096 || n > sizeof g_boot)
		return NULL;
	at = (__atomic_load_n(&g_boot_used, __ATOMIC_RELAXED) + 16 + align - 1) & ~(align - 1);
	want = at + ((n + 15) & ~(wsize)15);
	if (want > sizeof g_boot)
		return NULL;
	__atomic_store_n(&g_boot_used, want, __ATOMIC_RELAXED);
	memcpy(g_boot + at - 16, &n, sizeof n);
	return g_boot + at;
}

static inline __attribute__((unused)) int boot_owns(const void *p)
{
	return (const char *)p >= g_boot && (const char *)p < g_boot + sizeof g_boot;
}

static void *next_sym(const char *name)
{
	return dlsym ? dlsym(RTLD_NEXT, name) : NULL;
}

/* The process's definition of name: first in lookup order. */
static void *first_sym(const char *name)
{
	return dlsym ? dlsym(RTLD_DEFAULT, name) : NULL;
}

/* Clears ATTN_LIB (internal.h) once real_direct holds: called after
   either of its two conditions is set, so that whichever comes last sees
   both. */
static void lib_attn(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&g_hidden, __ATOMIC_RELAXED) == HIDDEN_ON &&
	    __atomic_load_n(&g_real_state, __ATOMIC_ACQUIRE) == 2)
		__atomic_fetch_and(&g_tp_attn, ~ATTN_LIB, __ATOMIC_SEQ_CST);
}

/* The real free with in_rt set, as the free's fast path ends in it
   (g_real.free_last) when the real free is not the C library's: another
   allocator's free may allocate, which is then not recorded, as on the
   general path. The C library's free calls nothing the runtime
   interposes, so the fast path calls it with in_rt cleared, as its last
   call. */
static void free_covered(void *p)
{
	struct rt_local *l = &rt_local;
	rt_enter(l);
	g_real.free(p);
	rt_exit(l);
}

/* Whether valgrind's tool replaced malloc (memcheck, massif, helgrind,
   drd, dhat: blocks of its own, with no glibc chunk header before them).
   Each such tool preloads vgpreload_<tool>; callgrind, cachegrind and the
   rest preload vgpreload_core only, and their runs then take the native
   paths. Yes when it cannot tell. */
static int vg_replaces_malloc(void)
{
	const char *s = getenv("LD_PRELOAD");
	if (!s)
		return 1;
	while ((s = strstr(s, "vgpreload_")) != NULL) {
		s += sizeof "vgpreload_" - 1;
		if (strncmp(s, "core-", 5) != 0)
			return 1;
	}
	return 0;
}

/* This copy's own malloc, free and valloc (the aliases of its interposed
   functions, below), whatever the names bind to. */
#if RT_INTERPOSE
extern __typeof(malloc) rt_malloc_self __attribute__((visibility("hidden")));
extern __typeof(free) rt_free_self __attribute__((visibility("hidden")));
extern __typeof(valloc) rt_valloc_self __attribute__((visibility("hidden")));
#endif

/* Whether the process's malloc and free are this copy's. In an executable
   they are whenever its own names are (the executable comes first in
   lookup order); a shared library's copy may keep them local (a library
   that chooses its exports, driver/link.go), where its own names say
   nothing of the process's: the dynamic linker is asked, once. */
static int process_fns_ours(void)
{
#if RT_INTERPOSE && defined(WEAVE_SHARED_OBJECT)
	static int v = -1;
	struct rt_local *l = &rt_local;
	int r = __atomic_load_n(&v, __ATOMIC_RELAXED), was;
	if (r < 0) {
		was = l->in_rt; /* dlsym's own allocations go straight through */
		rt_enter(l);
		r = first_sym("malloc") == (void *)rt_malloc_self && first_sym("free") == (void *)rt_free_self;
		fence();
		l->in_rt = was;
		__atomic_store_n(&v, r, __ATOMIC_RELAXED);
	}
	return r;
#else
	return 1;
#endif
}

/* Whether the tool redirected this copy's own malloc family, which it
   does as a whole or not at all: a call of this copy's valloc with
   resolving 2 either runs its body, which sets 3 and returns, or the
   tool's, which fails the size without counting it. Not so under
   --soname-synonyms=somalloc=nouserintercepts, nor for a copy in a
   shared library (the tool redirects the executable's and the C
   library's): the C library's malloc behind this copy is the tool's,
   and every call still reaches the runtime. */
static __attribute__((noinline)) int vg_redirects_own(void)
{
#if !RT_INTERPOSE
	return 1;
#else
	struct rt_local *l = &rt_local;
	void *(*volatile va)(size_t) = rt_valloc_self; /* a call, not its body inlined */
	int was = l->resolving, e = errno, r;
	__atomic_store_n(&l->resolving, 2, __ATOMIC_RELAXED);
	(void)va((size_t)1 << 62);
	r = __atomic_load_n(&l->resolving, __ATOMIC_RELAXED) != 3;
	l->resolving = was;
	errno = e;
	return r;
#endif
}

/* Whether valgrind's tool replaced the process's malloc family: it
   redirects the executable's malloc too (memcheck's REDIR "NONE:malloc"),
   so neither the C library's allocations nor its frees reach the
   runtime's interposed functions. */
static int malloc_is_valgrinds(void)
{
	static int v = -1;
	int r = __atomic_load_n(&v, __ATOMIC_RELAXED);
	if (r < 0) {
		r = rt_on_valgrind() && vg_replaces_malloc() && vg_redirects_own();
		__atomic_store_n(&v, r, __ATOMIC_RELAXED);
	}
	return r;
}

/* Where an inactive copy's interposed functions forward: they are called
   only where its own names were bound inside its library (a version
   script's local: *, -fvisibility=hidden, -Bsymbolic: libcurl takes free's
   address into Curl_cfree) and must reach the process's functions, the
   active copy's, which record the block; the next definition after the
   library (the C library's) would free a block the profile then keeps as
   leaked, allocate one it never sees, and skip the profile before an
   exec. The active copy, or one whose process has no malloc but its own,
   forwards to the next. */
static void *(*real_lookup(void))(const char *)
{
#if RT_INTERPOSE
	void *m;
	Dl_info di;
	/* An exported malloc of this copy's is in the chain the active copy
	   forwards along (dlsym(RTLD_NEXT)): forwarding back to it would be
	   a loop; only a copy whose names are not in the dynamic symbol
	   table (dladdr names no symbol, or another one) can be called by
	   its own library alone. */
	if (!rt_is_active() && (m = first_sym("malloc")) != NULL && m != (void *)rt_malloc_self &&
	    dladdr && (!dladdr((void *)rt_malloc_self, &di) || !di.dli_sname || strcmp(di.dli_sname, "malloc") != 0))
		return first_sym;
#endif
	return next_sym;
}

static void real_resolve(void)
{
	struct rt_local *l = &rt_local;
	void *(*look)(const char *);
	int st = 0;
	if (!__atomic_compare_exchange_n(&g_real_state, &st, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(&g_real_state, __ATOMIC_ACQUIRE) != 2)
			sched_yield();
		return;
	}
	l->resolving = 1;
	fence();
	look = real_lookup();
#define NEXT(f, fallback)                                                  \
	do {                                                               \
		*(void **)&g_real.f = look(#f);                            \
		if (!g_real.f)                                             \
			g_real.f = fallback;                               \
	} while (0)
	NEXT(malloc, __libc_malloc);
	g_spaced = g_real.malloc == __libc_malloc; /* the C library's: blocks 32 bytes apart or more */
	NEXT(free, __libc_free);
	g_real.free_last = g_spaced && g_real.free == __libc_free ? g_real.free : free_covered;
	NEXT(calloc, __libc_calloc);
	NEXT(realloc, __libc_realloc);
	NEXT(reallocarray, NULL);
	NEXT(memalign, __libc_memalign);
	NEXT(aligned_alloc, NULL);
	NEXT(posix_memalign, NULL);
	NEXT(valloc, __libc_valloc);
	NEXT(pvalloc, __libc_pvalloc);
	NEXT(execve, NULL);
	NEXT(execv, NULL);
	NEXT(execvp, NULL);
	NEXT(execvpe, NULL);
	NEXT(fexecve, NULL);
	NEXT(execveat, NULL);
#undef NEXT
	*(void **)&g_real.exit_ = next_sym("_exit");
	*(void **)&g_real.exit_full = next_sym("exit");
	ls_note_exit_fns(next_sym);
	fence();
	l->resolving = 0;
	__atomic_store_n(&g_real_state, 2, __ATOMIC_RELEASE);
	lib_attn();
}

/* What glibc does when only memalign is at hand. */
static void *fb_reallocarray(void *p, size_t n, size_t m)
{
	size_t t;
	if (__builtin_mul_overflow(n, m, &t)) {
		errno = ENOMEM;
		return NULL;
	}
	return REAL_FN(realloc)(p, t);
}

static void *fb_aligned_alloc(size_t align, size_t n)
{
	if (!align || (align & (align - 1))) {
		errno = EINVAL;
		return NULL;
	}
	return REAL_FN(memalign)(align, n);
}

static int fb_posix_memalign(void **pp, size_t align, size_t n)
{
	void *p;
	int e = errno;
	if (align % sizeof(void *) || !align || (align & (align - 1)))
		return EINVAL;
	p = REAL_FN(memalign)(align, n);
	if (!p) {
		int r = errno;
		errno = e;
		return r;
	}
	*pp = p;
	return 0;
}

static __attribute__((unused)) void *real_reallocarray(void *p, size_t n, size_t m)
{
	return REAL_FN(reallocarray) ? g_real.reallocarray(p, n, m) : fb_reallocarray(p, n, m);
}

static __attribute__((unused)) void *real_aligned_alloc(size_t align, size_t n)
{
	return REAL_FN(aligned_alloc) ? g_real.aligned_alloc(align, n) : fb_aligned_alloc(align, n);
}

static __attribute__((unused)) int real_posix_memalign(void **pp, size_t align, size_t n)
{
	return REAL_FN(posix_memalign) ? g_real.posix_memalign(pp, align, n) : fb_posix_memalign(pp, align, n);
}

/* The static sites of hidden allocations, by operation: row 0 for any
   code that was not woven, row 1 for the dynamic linker's own (a thread's
   DTV and TLS blocks), which the leak scan takes as roots: the DTV is
   known only by an interior pointer from a thread descriptor, which would
   make it "possibly lost" (as memcheck says without --run-libc-freeres),
   though the C library keeps it for the thread descriptors it caches. */
#define HSITE(op, file) [op] = {0, file, 0, 0, op, 0, 0, 0}
#define HSITES(file)                                                                           \
	{                                                                                      \
		HSITE(__WEAVE_MALLOC, file), HSITE(__WEAVE_CALLOC, file),                      \
		HSITE(__WEAVE_REALLOC, file), HSITE(__WEAVE_REALLOCARRAY, file),               \
		HSITE(__WEAVE_ALIGNED_ALLOC, file), HSITE(__WEAVE_POSIX_MEMALIGN, file),       \
		HSITE(__WEAVE_MEMALIGN, file), HSITE(__WEAVE_VALLOC, file),                    \
		HSITE(__WEAVE_PVALLOC, file),                                                  \
	}
static const struct __weave_site rt_hidden_sites[2][__WEAVE_PVALLOC + 1] = {
	HSITES("(hidden)"),
	HSITES("(dynamic linker)"),
};
#undef HSITES
#undef HSITE

static inline int is_hidden_site(const struct __weave_site *s)
{
	return (uintptr_t)s - (uintptr_t)rt_hidden_sites < sizeof rt_hidden_sites || hs_owns(s);
}

static inline int is_linker_site(const struct __weave_site *s)
{
	return (uintptr_t)s - (uintptr_t)rt_hidden_sites[1] < sizeof rt_hidden_sites[1];
}

/* The dynamic linker's text, from its ELF header at AT_BASE (0, 0: none
   known, as in a static program). Found at the first hidden allocation,
   before the constructor: the linker allocates early. Racing finders
   store the same values. */
static uintptr_t g_ld_lo, g_ld_hi;
static int g_ld_known; /* atomic */

static void ld_find(void)
{
	uintptr_t base = (uintptr_t)getauxval(AT_BASE), lo = 0, hi = 0;
	if (base) {
		const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
		const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(base + eh->e_phoff);
		int i;
		if (memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0)
			for (i = 0; i < eh->e_phnum; i++)
				if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
					lo = base + ph[i].p_vaddr;
					hi = lo + ph[i].p_memsz;
					break;
				}
	}
	g_ld_lo = lo;
	g_ld_hi = hi;
	__atomic_store_n(&g_ld_known, 1, __ATOMIC_RELEASE);
}

/* The hidden site of op for an allocation whose call returns to ret: the
   dynamic linker's, else the one of ret's object (hidden.c). */
static inline const struct __weave_site *hidden_site(int op, const void *ret)
{
	uintptr_t r = (uintptr_t)ret;
	if (__builtin_expect(!__atomic_load_n(&g_ld_known, __ATOMIC_ACQUIRE), 0))
		ld_find();
	if (__builtin_expect(r >= g_ld_lo && r < g_ld_hi, 0))
		return &rt_hidden_sites[1][op];
	return hs_site((unsigned)op, ret, &rt_hidden_sites[0][op]);
}

/* This copy's own functions, whatever the dynamic linker bound the names
   to. */
#if RT_INTERPOSE
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wmissing-attributes" /* the aliases need none of malloc's */
#endif
extern __typeof(malloc) rt_malloc_self __attribute__((alias("malloc"), visibility("hidden")));
extern __typeof(free) rt_free_self __attribute__((alias("free"), visibility("hidden")));
extern __typeof(calloc) rt_calloc_self __attribute__((alias("calloc"), visibility("hidden")));
extern __typeof(realloc) rt_realloc_self __attribute__((alias("realloc"), visibility("hidden")));
extern __typeof(valloc) rt_valloc_self __attribute__((alias("valloc"), visibility("hidden")));
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif



static int hidden_decide(void)
{
#if !RT_INTERPOSE
	__atomic_store_n(&g_hidden, HIDDEN_OFF, __ATOMIC_RELAXED);
	return 0;
#else
	struct rt_local *l = &rt_local;
	void *(*volatile m)(size_t) = malloc;
	void (*volatile f)(void *) = free;
	void *(*volatile c)(size_t, size_t) = calloc;
	void *(*volatile r)(void *, size_t) = realloc;
	int on = m == rt_malloc_self && f == rt_free_self && c == rt_calloc_self && r == rt_realloc_self &&
		 rt_is_active() && !malloc_is_valgrinds() && process_fns_ours();
	if (on && !l->in_rt && !__atomic_load_n(&g_cfg_loaded, __ATOMIC_ACQUIRE)) {
		/* An allocation before the constructor (another library's
		   constructor, say): read the environment now. */
		rt_enter(l);
		pthread_once(&g_once, rt_global_init);
		rt_exit(l);
	}
	if (!__atomic_load_n(&g_cfg_loaded, __ATOMIC_ACQUIRE))
		return on; /* no environment yet (the C library's start-up): the default */
	on = on && g_cfg_hidden;
	__atomic_store_n(&g_hidden, on ? HIDDEN_ON : HIDDEN_OFF, __ATOMIC_RELAXED);
	lib_attn();
	return on;
#endif
}

/* frees_seen: whether a block's free by code that was not woven reaches
   this runtime (the process's free is this copy's). Not so for a woven
   library in a program that was not woven, a static link, a program with
   its own malloc, a sanitizer build: what in use at exit counts may have
   been freed there; nor under valgrind's memcheck. */
static int frees_seen(void)
{
#if RT_INTERPOSE
	void (*volatile f)(void *) = free;
	return f == rt_free_self && !malloc_is_valgrinds() && process_fns_ours();
#else
	return 0;
#endif
}

static inline int hidden_on(void)
{
	int h = __atomic_load_n(&g_hidden, __ATOMIC_RELAXED);
	if (__builtin_expect(h != HIDDEN_UNKNOWN, 1))
		return h == HIDDEN_ON;
	return hidden_decide();
}

/* malloc and free as the advice calls them: straight to the real ones
   when this copy's interposed functions are the process's and record
   (hidden_decide checked that), which saves a call and its checks. The
   advice decides it if nothing did yet: the interposed functions, called
   with in_rt set, do not, and a program whose allocations were all woven
   kept the slower way until the C library allocated something. */
static inline int real_direct(void)
{
#if RT_INTERPOSE
	int h = __atomic_load_n(&g_hidden, __ATOMIC_RELAXED);
	if (__builtin_expect(h != HIDDEN_ON, 0) && (h != HIDDEN_UNKNOWN || !hidden_decide()))
		return 0;
	return __atomic_load_n(&g_real_state, __ATOMIC_ACQUIRE) == 2;
#else
	return 0;
#endif
}

static inline void *lib_malloc(size_t n)
{
	return real_direct() ? g_real.malloc(n) : malloc(n);
}

static inline void lib_free(void *p)
{
	if (real_direct() && !boot_owns(p))
		g_real.free(p);
	else
		free(p);
}

/* The interposed allocator. Pattern: inside the runtime (the advice
   included) or with recording off, forward; else record the result at
   the hidden site of the operation, as the advice does. */

#define HIDDEN_ALLOC(op, call, size)                                \
	struct rt_local *l = &rt_local;                             \
	void *r;                                                    \
	int e;                                                      \
	if (__builtin_expect(l->in_rt || !hidden_on(), 0))          \
		return call;                                        \
	rt_enter(l);                                                \
	r = call;                                                   \
	if (__builtin_expect(r != NULL, 1)) {                       \
		int *ep = rt_errno(l);                              \
		e = *ep;                                            \
		note_alloc(l, hidden_site(op, __builtin_return_address(0)), r, size); \
		*ep = e;                                            \
	} else                                                      \
		note_refused(size);                                 \
	rt_exit(l);                                                 \
	return r

/* HIDDEN_ALLOC for the functions programs call rarely (advice.c's
   RT_ALLOC_RARE). */
#define HIDDEN_ALLOC_RARE(op, call, size)                                          \
	struct rt_local *l = &rt_local;                                            \
	void *r;                                                                   \
	if (__builtin_expect(l->in_rt || !hidden_on(), 0))                         \
		return call;                                                       \
	rt_enter(l);                                                               \
	r = call;                                                                  \
	if (__builtin_expect(r != NULL, 1))                                        \
		note_kept(l, hidden_site(op, __builtin_return_address(0)), r, size); \
	else                                                                       \
		note_refused(size);                                                \
	rt_exit(l);                                                                \
	return r

#if RT_INTERPOSE
__attribute__((weak)) void *malloc(size_t n)
{
	if (__builtin_expect(rt_local.resolving, 0))
		return boot_alloc(n, 16);
	HIDDEN_ALLOC(__WEAVE_MALLOC, REAL_FN(malloc)(n), n);
}

__attribute__((weak)) void *calloc(size_t n, size_t size)
{
	if (__builtin_expect(rt_local.resolving, 0)) {
		size_t t;
		return __builtin_mul_overflow(n, size, &t) ? NULL : boot_alloc(t, 16); /* zeroed: static */
	}
	HIDDEN_ALLOC(__WEAVE_CALLOC, REAL_FN(calloc)(n, size), (u64)n * size);
}

__attribute__((weak)) void *memalign(size_t align, size_t n)
{
	if (__builtin_expect(rt_local.resolving, 0))
		return boot_alloc(n, align);
	HIDDEN_ALLOC_RARE(__WEAVE_MEMALIGN, REAL_FN(memalign)(align, n), n);
}

__attribute__((weak)) void *aligned_alloc(size_t align, size_t n)
{
	if (__builtin_expect(rt_local.resolving, 0))
		return boot_alloc(n, align);
	HIDDEN_ALLOC_RARE(__WEAVE_ALIGNED_ALLOC, real_aligned_alloc(align, n), n);
}

__attribute__((weak)) void *valloc(size_t n)
{
	if (__builtin_expect(rt_local.resolving, 0)) {
		if (rt_local.resolving == 2) { /* vg_redirects_own's probe */
			rt_local.resolving = 3;
			return NULL;
		}
		return boot_alloc(n, 4096);
	}
	HIDDEN_ALLOC_RARE(__WEAVE_VALLOC, REAL_FN(valloc)(n), n);
}

__attribute__((weak)) void *pvalloc(size_t n)
{
	if (__builtin_expect(rt_local.resolving, 0))
		return boot_alloc((n + 4095) & ~(size_t)4095, 4096);
	HIDDEN_ALLOC_RARE(__WEAVE_PVALLOC, REAL_FN(pvalloc)(n), n);
}

__attribute__((weak)) int posix_memalign(void **pp, size_t align, size_t n)
{
	struct rt_local *l = &rt_local;
	int rc;
	if (__builtin_expect(l->resolving, 0))
	{
		void *p = boot_alloc(n, align);
		if (!p)
			return ENOMEM;
		*pp = p;
		return 0;
	}
	if (__builtin_expect(l->in_rt || !hidden_on(), 0))
		return real_posix_memalign(pp, align, n);
	rt_enter(l);
	rc = real_posix_memalign(pp, align, n);
	if (rc == 0)
		note_kept(l, hidden_site(__WEAVE_POSIX_MEMALIGN, __builtin_return_address(0)), *pp, n);
	rt_exit(l);
	return rc;
}

__attribute__((weak)) void free(void *p)
{
	struct rt_local *l = &rt_local;
	int e;
	if (__builtin_expect(boot_owns(p) || l->resolving, 0))
		return; /* a block of the static buffer; or dlsym's: leaked */
	if (__builtin_expect(l->in_rt || !hidden_on(), 0)) {
		REAL_FN(free)(p);
		return;
	}
	rt_enter(l);
	if (p) {
		int *ep = rt_errno(l);
		u64 n;
		__builtin_prefetch((char *)p - sizeof(wsize));
		e = *ep;
		n = note_free(l, p);
		scrub_freed(p, n);
		if (__builtin_expect(!n && !l->outer, 0))
			free_nested(l, p);
		if (__builtin_expect(held_due(n), 0)) {
			held_free(p, n);
			p = NULL; /* held, or given back already */
		}
		*ep = e;
	}
	REAL_FN(free)(p);
	rt_exit(l);
}

/* realloc of a block from the static buffer: a new block, as realloc. */
static void *boot_realloc(void *p, size_t n)
{
	wsize old;
	void *r;
	memcpy(&old, (char *)p - 16, sizeof old);
	if (rt_local.resolving)
		r = boot_alloc(n, 16);
	else
		r = malloc(n);
	if (r)
		memcpy(r, p, old < n ? old : n);
	return r;
}

__attribute__((weak)) void *realloc(void *p, size_t n)
{
	if (__builtin_expect(boot_owns(p), 0))
		return boot_realloc(p, n);
	if (__builtin_expect(rt_local.resolving, 0))
		return p ? NULL : boot_alloc(n, 16);
	if (__builtin_expect(rt_local.in_rt || !hidden_on(), 0))
		return REAL_FN(realloc)(p, n);
	return re_alloc(hidden_site(__WEAVE_REALLOC, __builtin_return_address(0)), p, n, 0, 0);
}

__attribute__((weak)) void *reallocarray(void *p, size_t n, size_t m)
{
	size_t t;
	if (__builtin_expect(boot_owns(p), 0))
		return __builtin_mul_overflow(n, m, &t) ? (errno = ENOMEM, NULL) : boot_realloc(p, t);
	if (__builtin_expect(rt_local.resolving, 0))
		return p || __builtin_mul_overflow(n, m, &t) ? NULL : boot_alloc(t, 16);
	if (__builtin_expect(rt_local.in_rt || !hidden_on(), 0))
		return real_reallocarray(p, n, m);
	return re_alloc(hidden_site(__WEAVE_REALLOCARRAY, __builtin_return_address(0)), p, n, m, 1);
}
#endif /* RT_INTERPOSE */

