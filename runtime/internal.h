//go:build ignore

/* internal.h: what the parts of the weave runtime (ABI 1) share.

   The runtime is linked into every woven program. It keeps, per thread, a
   pseudo-stack whose entries point into a calling-context tree (CCT),
   charges every allocation made through __weave_malloc & co. to a leaf of
   that tree, and at exit prints a heap summary on stderr and writes the
   profile described in profile/format.go.

   It is one C translation unit built from parts, one per concern, joined
   by runtime.Source in the order of runtime/parts.go, which says what
   each does. Each part starts with #include "internal.h", which the join
   keeps only once, and #line directives name each part's own file.

   Re-entrancy. Every __weave_* function sets the thread's in_rt flag for
   its whole run (the real library call included); a __weave_* call or a
   slow-path enter made while it is set (a signal handler interrupting the
   runtime, or a woven allocator called by the real one) just calls the real
   function and records nothing, resp. does not push. Every lock is taken
   with in_rt set, so a signal handler never waits on a lock its own thread
   holds. Lock order: g_lock, then the side table's shard locks, then its
   g_big_lock, then its g_radix_lock.

   The //go:build line at the top of each part keeps the go tool from
   taking it for cgo source of the package that embeds it. */

#ifndef WEAVE_INTERNAL_H
#define WEAVE_INTERNAL_H

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "weave.h"

typedef uint32_t u32;
typedef uint64_t u64;
typedef __weave_size_t wsize;

#define RT_ABI 1

#include "pseudostack.h"

#define NBINS 1026
#define ARENA_CHUNK 65536u

enum { ST_NEW, ST_LIVE, ST_DEAD, ST_FAILED };

/* Heap counters of an A node, by size class (s, m, l, x). */
struct heapc {
	u64 a[4], b[4];   /* allocations, bytes allocated: owner only */
	u64 f[4], g[4];   /* frees, bytes freed, by the owner: owner only */
	u64 rf[4], rg[4]; /* frees, bytes freed, by other threads: atomic */
};

/* mprof's bin table row: blocks allocated and freed of one size, or of
   1025 bytes or more in the last bin (NBINS - 1); the other bins' bytes
   are their counts times their size. A thread's table is NBINS rows of
   16-bit counts (a count that wraps is carried into the shared table:
   bin_carry) in reverse order, row i at b - i for b its row 0 (what
   struct rt_thread and rt_local point at), so that rows 0-511 (2 KiB)
   end where the thread's first child cache begins (thread.c); before
   its last row, the bytes of the last bin's blocks (allocs) and of their
   frees (frees) in 64 bits (bin_bytes): TBINS_BYTES in all. The shared
   table (g_shared_bins) has 64-bit rows in order, BIN_ROWS of them, its
   row BIN_BYTES those bytes. */
struct bin {
	uint16_t allocs, frees;
};
struct bin64 {
	u64 allocs, frees;
};
#define BIN_BYTES NBINS
#define BIN_ROWS (NBINS + 1)
#define TBINS_BYTES (NBINS * sizeof(struct bin) + sizeof(struct bin64))
_Static_assert(NBINS * sizeof(struct bin) % sizeof(u64) == 0, "the bytes before a thread's rows aligned");

/* Row i of a thread's table b (its row 0). */
static inline struct bin *bin_row(struct bin *b, u32 i)
{
	return b - i;
}

/* The bytes of the last bin of a thread's table b. */
static inline struct bin64 *bin_bytes(struct bin *b)
{
	return (struct bin64 *)(void *)(b - (NBINS - 1)) - 1;
}

/* The start of a thread's table b: TBINS_BYTES from there. */
static inline void *bin_start(struct bin *b)
{
	return bin_bytes(b);
}

/* A thread known to the runtime. Never freed (its nodes stay for the
   profile). Fields are written by the owner thread, except as noted. */
struct rt_thread {
	struct rt_thread *next; /* g_threads list; g_lock */
	u32 num;                /* T id, dense, in registration order */
	int tid;                /* kernel thread id */
	u32 root;               /* root node index */
	u32 nnext, nend;        /* current node batch */
	u32 batch;              /* size of the next batch */
	u32 first, last;        /* creation-order node list */
	u32 nnodes;             /* nodes published: atomic (release/acquire) */
	u32 snap;               /* nnodes as seen by the exit writer; writer only */
	u64 *chash;             /* child hash: parent << 32 | child, 0 = empty */
	u32 cmask, ccount;
	struct bin *bins;       /* BIN_ROWS rows; set to 0 at thread exit; the
	                           owner reads it freely, writes it and the exit
	                           writer reads it under g_lock */
	struct __weave_cc *cc;  /* the grown second-level child cache (weave.h),
	                           TMAP_BYTES, or 0 while the first serves (thread.c); owner */
	u32 cc_lost;            /* entries the first cache lost to others; owner */
	struct __weave_slot *stack; /* the thread's map, reserved slots' worth: its bins,
	                               first child cache and pseudo-stack (thread.c) */
	wsize reserved;
	/* Timing (see timing.c). Owner thread, except as noted. */
	struct __weave_thread *tls; /* its __weave_tls while it runs, then 0: g_lock */
	u64 t_start, t_end;         /* exact: ticks at set-up, at exit (0: running): g_lock */
	u64 cpu_last;               /* sampled: thread CPU ns charged so far: whoever holds samp */
	struct rt_node *smp_node;   /* sampled: the node the last sample charged, or 0: the same */
	int timer;                  /* sampled: kernel timer id, -1 for none */
	int samp;                   /* sampled: who charges it, sampler or owner (sampler.c): atomic */
	struct tp_buf *tp;          /* tracepoint events, owner (exit writer: g_lock) */
	struct vm_thread *vm;       /* its heap accounting (vmthreads.c); never freed */
};

/* A thread's part of the heap accounting (vmmap.c, vmthreads.c), on a
   cache line of its own: x, lo_rel and the counts are written by its
   thread (another may set lo_rel), read by the others racily. */
struct vm_thread {
	long long x, lo_rel; /* the fast path's offset and free threshold */
	u64 allocs, frees;   /* allocations and frees counted here */
	int state;           /* VT_*: one-thread scheme, on credit, exited, none, folded (vmthreads.c) */
} __attribute__((aligned(64)));
enum { VT_ONE, VT_CREDIT, VT_DEAD, VT_NONE, VT_FOLDED };

/* Per-thread private state. */
struct rt_local {
	struct rt_thread *thr; /* set up: ST_LIVE or ST_DEAD */
	int state;             /* ST_* */
	int in_rt;             /* inside the runtime: see "Re-entrancy" */
	int resolving;         /* looking up the real allocator (dlsym) */
	unsigned outer_allocs; /* blocks the outermost call's allocators made (not recorded) */
	uintptr_t outer;       /* in a declared allocator's outermost call: where its caller's frame ends (outer.c); else 0 */
	int *errp;             /* &errno, once the thread is set up (rt_errno) */
	struct bin *bins;      /* thr->bins while the thread is live, else 0 (advice.c's fast paths) */
	u32 num;               /* thr->num (advice.c's fast paths: whose node a block is) */
	struct vm_thread *vm;  /* thr->vm while the thread is live, else g_vm_none */
	struct { uintptr_t tag; char *at; } leaf[2]; /* per tree, the leaf found last and its span's tag (advice.c) */
};

/* Side-table entry; addr == 0 is an empty slot. */
struct ent {
	uintptr_t addr;
	u64 val; /* size << NODE_BITS | node */
	u32 gen; /* spill table only: the block's generation (side.c) */
};

/* A bump allocator over anonymous maps of a fixed size, listed for the leak scan
   (bump_each): the first map's record here, a later one's at its end. */
struct bump_tail {
	struct bump_tail *prev; /* the map before's, or NULL */
	char *map; wsize n;     /* the map and its size */
};
struct bump {
	char *next;
	wsize left;
	struct bump_tail *last, first; /* the newest map's record; the first map's */
};

/* Buffered output to a file descriptor (out.c). */
struct out {
	int fd;
	int err;
	char *buf;
	wsize len, cap;
	u64 records;
};

/* Temporary memory of the exit writers (out.c): up to 16 maps; small
   pieces share one (bump). Zero-initialise. */
struct tmpmem {
	void *p[16];
	wsize n[16];
	int k, nomem; /* nomem: a map failed */
	struct bump small;
};

/* A fixed-capacity string (out.c). */
struct sbuf {
	char s[4200];
	wsize n;
};

/* An allocation context with blocks in use, for the summary's top leaks. */
struct leak {
	u32 node;
	u64 bytes, blocks;
};

/* What the summary prints (summary.c): heap totals and the largest leaks. */
struct totals {
	u64 allocs, frees, bytes, fbytes, live_bytes, live_blocks;
	u64 nodes, leak_nodes;
	u32 nleaks;
	struct leak *leaks;
};

enum { HIDDEN_UNKNOWN, HIDDEN_OFF, HIDDEN_ON };
enum { LOCK_WAIT, LOCK_TRY, LOCK_ONCE };

/* Shared state and its threading contracts
   ----------------------------------------
   State that one part alone uses is defined in that part, with its
   contract there. */

/* Large zero-initialised arrays, mostly never written, go to a .bss
   section of their own, so that the small variables the runtime writes
   share a few pages instead of taking one page each between the arrays
   (the process's resident memory counts pages). Likewise the functions
   that run only at exit, in a fork child, at exec or on a rare request
   (RT_RARE) go after the rest of the code: the kernel maps a file's pages
   64 KiB or a page cache folio around each fault (BENCHMARKS.md). */
#ifdef __ELF__
#define RT_LARGE __attribute__((section(".bss.weave_large")))
#define RT_RARE __attribute__((section(".text.weave_rare")))
#else
#define RT_LARGE
#define RT_RARE
#endif

/* The heap accounting of threads without a record of their own (not set
   up, or exited): every event takes the slow path (vmthreads.c). */
static struct vm_thread g_vm_none = {.x = 1ll << 62, .lo_rel = 0x7fffffffffffffffll, .state = VT_NONE};

/* The runtime's thread-locals: local-exec (%fs:x@tpoff, no register kept
   for the offset) when the driver links an executable, else initial-exec
   (one load from %fs; -fPIC's general model is a call to the compiler);
   the general model in a shared object, which dlopen may load late. */
#if defined(WEAVE_SHARED_OBJECT)
#define RT_TLS
#elif defined(WEAVE_EXECUTABLE)
#define RT_TLS __attribute__((tls_model("local-exec")))
#else
#define RT_TLS __attribute__((tls_model("initial-exec")))
#endif

/* Per thread: the thread's runtime record, set-up state and in_rt flag. */
static __thread struct rt_local rt_local RT_TLS = {.vm = &g_vm_none, .leaf = {{~(uintptr_t)0, 0}, {~(uintptr_t)0, 0}}};

/* Read only: the node every empty cache points to; its key (its own
   address) matches no function or site. */
static struct rt_node rt_dummy = {
	.pub = {.key = &rt_dummy, .cache = &rt_dummy.pub},
	.u = {.acache = &rt_dummy},
};

/* Read only: cur of a thread that is not set up. */
static struct rt_node rt_boot = {
	.pub = {.key = &rt_dummy, .cache = &rt_dummy.pub},
	.u = {.acache = &rt_dummy},
};

/* Read only: the child cache of a thread not set up (one entry, ccmask
   0); matches nothing. */
static struct __weave_cc rt_cc_none[1];

/* Per thread: the woven code's view (weave.h). Initial value: cur =
   &rt_boot, lim = 0, so the first enter of every thread takes the slow
   path. */
__thread struct __weave_thread __weave_tls RT_TLS = {.cur = &rt_boot.pub, .cc = rt_cc_none};

/* The x86-64 guard's bound for a stack of cap slots (weave.h's lim): an
   enter at depth lim or more takes the rare path. */
static inline unsigned lim_of(unsigned cap)
{
	return cap ? cap - 1 : 0;
}

/* Sets t->lim (weave.h) to lim_of(t->cap), or to 0 if the timing byte is set.
   Owner thread. Another thread sets the byte and then zeroes lim (tracing
   on, tracepoints/trace.c); the fence between the store of lim and the
   byte's load here, and the one between the byte's store and lim's there,
   leave lim 0 whichever comes first. */
static inline void lim_update(struct __weave_thread *t)
{
	__atomic_store_n(&t->lim, lim_of(t->cap), __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&t->timing, __ATOMIC_RELAXED))
		__atomic_store_n(&t->lim, 0, __ATOMIC_RELAXED);
}

/* Node chunk pointers: each set once by CAS (release); read with acquire loads (node_at). Not RT_LARGE: gcc
   emits statics in reverse order, so its first entry (every program's) is on the small ones' last page. */
static struct rt_node *g_chunks[NCHUNKS];

/* The next free node index: atomic fetch-add, by batch. */
static u32 g_node_next;

/* Set (atomic, seq_cst) when a second thread is set up: the heap
   accounting goes on credit (vmthreads.c). */
static int g_multi;

/* The real malloc is the C library's (interpose.c), whose blocks start at
   least 32 bytes apart: no two live blocks share a granule of the side
   table's fine tree, so an allocation's slot needs no CAS even with
   threads. Written once by real_resolve, before g_real_state is 2. */
static int g_spaced;


/* Two threads may race for an empty slot of the side table: set when a
   second thread is set up, unless g_spaced; slot inserts use CAS then. */
static int g_claim;

/* HIDDEN_*: whether library allocations are recorded. Decided once by
   hidden_decide (interpose.c), an atomic int. */
static int g_hidden;

/* Mutex, slow paths only: thread set-up and exit, g_threads, g_nthreads,
   the arena, the exit writers; taken by fork's prepare handler. First in
   the lock order. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* Every thread ever set up, in T id order, and their number: g_lock. */
static struct rt_thread *g_threads, **g_threads_tail = &g_threads;
static u32 g_nthreads;

/* Bins of threads that exited (merged by their destructor) and of
   allocations and frees made after that: atomic adds. */
static struct bin64 g_shared_bins[BIN_ROWS] RT_LARGE;
static int g_shared_bins_used; /* a thread's bins were added to them: else never written, never read */

/* Written once by rt_global_init (pthread_once on g_once), read only
   afterwards: the thread-exit key, and the configuration read from the
   environment (g_cfg_loaded, release/acquire, says it was read). */
static pthread_key_t g_key;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_key_ok, g_cfg_out_set; /* g_cfg_out_set: WEAVE_OUT is set */
enum { PATH_START, PATH_OUT, PATH_LOG, PATH_SMALL = 256 }; /* paths kept (init.c's path_keep): small slots, or large */
static char g_path_small[3][PATH_SMALL], g_path_large[3][4096] RT_LARGE;
static char *g_cfg_out = g_path_small[PATH_OUT], *g_cfg_log = g_path_small[PATH_LOG];
static int g_cfg_summary = -1; /* WEAVE_SUMMARY: 1 always, 0 never, -1 when there is something to report */
static int g_cfg_log_set;      /* WEAVE_LOG is set: the summary goes to that file */
static u64 g_stderr_id;        /* descriptor 2's fd_ident at rt_config, before main: 0 if closed (stderr_fd) */
static u32 g_cfg_leaks = 5;
static int g_cfg_stats, g_cfg_signals = 1, g_cfg_hidden = 1, g_cfg_loaded;
static int g_cfg_redact_argv; /* WEAVE_REDACT=argv: M argv holds argv[0] only */
/* Secure execution (AT_SECURE: setuid, setgid, file capabilities): every
   WEAVE_* variable is ignored (rt_env) and no profile is written unless
   the runtime was built with -DWEAVE_SECURE_PROFILE. */
static int g_secure;
static const char *rt_env(const char *name);

/* The pid the runtime belongs to and the time it started (for M
   start_ns), whether it is a fork child: set at start-up and in a fork
   child (one thread then); read by the exit paths. */
static int g_pid, g_forked;
static u64 g_start_ns;

/* When the run started: the start of the first process of a tree of fork
   children, which inherit it (set once at start-up; save.c). */
static u64 g_run_start_ns;

/* Whether this copy lies in the executable: set by the constructor, read
   by the destructor. */
static int g_in_exe;

/* How the process ended, for M end and M complete, and where a
   provisional profile went: written by the one thread that won rt_finish
   (exit.c), read by the writers it calls. */
static const char *g_end = "exit";
static int g_end_sig, g_complete = 1;
static char g_prev_path[4200] RT_LARGE;

/* Blocks a fork child inherited, and those of them it freed: atomic adds
   (blocks and bytes are written in the fork child, one thread). */
static struct {
	u64 blocks, bytes, freed, freed_bytes;
} g_inh;

/* The functions the runtime interposes, as they were before it: written
   once by real_resolve (interpose.c; its state g_real_state 0 not looked
   up, 1 being looked up, 2 done: release/acquire), read only after. */
static struct {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void (*free_last)(void *); /* free, or, unless it is the C library's, free_covered (interpose.c) */
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*reallocarray)(void *, size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	void (*exit_)(int);
	void (*exit_full)(int); /* the C library's exit, behind the runtime's (exit.c) */
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execv)(const char *, char *const[]);
	int (*execvp)(const char *, char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*fexecve)(int, char *const[], char *const[]);
	int (*execveat)(int, const char *, char *const[], char *const[], int);
} g_real;
static int g_real_state;

/* Helpers
   ------- */
#define fence() __atomic_signal_fence(__ATOMIC_SEQ_CST)

static inline u64 mix64(u64 x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* A system call that never writes errno and calls nothing of the C library:
   made with the instruction on x86-64 and arm64, for weave's own raw threads
   (the sampler, the leak scan's tracer), which have no TLS of their own.
   Returns -errno on failure. Elsewhere it is syscall(2) under the same
   contract (rt_sys_raw is 0 there: callers that need the instruction check
   it). */
#if defined(__x86_64__) && !defined(__ILP32__)
#define rt_sys_raw 1
static inline __attribute__((always_inline)) long rt_sys(long n, long a, long b, long c, long d)
{
	long r;
	register long r10 __asm__("r10") = d;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
	return r;
}
#elif defined(__aarch64__)
#define rt_sys_raw 1
static inline __attribute__((always_inline)) long rt_sys(long n, long a, long b, long c, long d)
{
	register long x8 __asm__("x8") = n, x0 __asm__("x0") = a, x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c, x3 __asm__("x3") = d;
	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
	return x0;
}
#else
#define rt_sys_raw 0
static inline long rt_sys(long n, long a, long b, long c, long d)
{
	int saved = errno;
	long r = syscall(n, a, b, c, d);
	if (r == -1) {
		r = -errno;
		errno = saved;
	}
	return r;
}
#endif

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static inline void spin_lock(u32 *l)
{
	unsigned n = 0;
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(l, __ATOMIC_RELAXED)) {
			if (++n < 100)
				cpu_relax();
			else
				sched_yield();
		}
	}
}

static inline void spin_unlock(u32 *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

static inline void rt_enter(struct rt_local *l)
{
	l->in_rt = 1;
	fence();
}

static inline void rt_exit(struct rt_local *l)
{
	fence();
	l->in_rt = 0;
}

/* The thread's errno, which the advice keeps across its bookkeeping:
   its address taken once per thread (a call into the C library per event
   otherwise). */
static inline int *rt_errno(struct rt_local *l)
{
	int *p = l->errp;
	return __builtin_expect(p != NULL, 1) ? p : &errno;
}

/* The size class (s, m, l, x: up to 32, 256, 2048 bytes, more) of heap
   counters; sizes up to 1024 by table, one load instead of a chain of
   compares on every allocation and free. */
static const unsigned char g_class_lo[1025] = {
	[0 ... 32] = 0, [33 ... 256] = 1, [257 ... 1024] = 2,
};

static inline u32 size_class(u64 n)
{
	return __builtin_expect(n <= 1024, 1) ? g_class_lo[n] : n <= 2048 ? 2 : 3;
}

static inline u32 bin_of(u64 n)
{
	return n <= 1024 ? (u32)n : 1025;
}

static inline struct rt_node *node_at(u32 i)
{
	return __atomic_load_n(&g_chunks[i >> CHUNK_BITS], __ATOMIC_ACQUIRE) + (i & (CHUNK_NODES - 1));
}

/* Visits the first T->snap nodes of thread T in creation order: a parent
   is always created before its children, by the same thread. */
#define EACH_NODE(T, i, n, k)                                                    \
	for ((i) = (T)->first, (k) = 0; (k) < (T)->snap &&                       \
	     ((n) = node_at(i), 1); (i) = (k) + 1 < (T)->snap ? (n)->next : (i), (k)++)

/* Functions the parts call across
   ------------------------------- */

/* thread.c */
static struct rt_thread *thread_setup(struct rt_local *l);
static inline struct rt_thread *thread_get(struct rt_local *l);
static int stack_grow(struct rt_thread *T, struct __weave_thread *t);
static int cc_grow(struct rt_thread *T, struct __weave_thread *t);
static void rt_thread_exit(void *arg);

/* init.c */
static void *rt_map(wsize n);
static void rt_small_pages(void *p, wsize n);

/* resident.c */
static void rt_own(void *p, wsize n);
static void rt_unmap(void *p, wsize n);
static void own_note(void);

/* ownstack.c */
static int rt_on_stack(void (*fn)(void *), void *arg, uintptr_t *sp);
static u64 now_ns(void);
static u64 parse_u64(const char *s, u64 def);
static void rt_config(void);
static void rt_global_init(void);
static void *bump_take(struct bump *b, wsize n, wsize chunk);
static void bump_each(const struct bump *b, void (*f)(const void *p, u64 n));
static void *arena_alloc(wsize n);
static void *arena_line(wsize n);
static int rt_is_active(void);

/* side.c */
static inline __attribute__((always_inline)) int side_insert(uintptr_t a, u64 val, struct ent *old);
static inline __attribute__((always_inline)) int side_remove(uintptr_t a, struct ent *out);
static void big_put(uintptr_t a, u64 size);
static u64 big_take(uintptr_t a);
static void side_usage(u64 *bytes, u64 *live);
static void side_lock(void), side_unlock(void);
static int rt_limited(void);
static void pool_lock(void);
static void pool_unlock(void);
static void side_inherit(void);
static void side_each(void (*f)(uintptr_t a, u64 val, u32 gen, void *arg), void *arg);
static u64 val_size(uintptr_t a, u64 val);

/* advice.c */
static void note_alloc(struct rt_local *l, const struct __weave_site *s, void *p, u64 n);
static inline __attribute__((always_inline)) u64 note_free(struct rt_local *l, void *p);
static inline __attribute__((always_inline)) u64 charge_free(struct rt_thread *T, const struct ent *e);
static void *re_alloc(const struct __weave_site *s, void *p, wsize n, wsize m, int array);

/* interpose.c */
static void real_resolve(void);
static inline int hidden_on(void), is_hidden_site(const struct __weave_site *s), boot_owns(const void *p);
static int frees_seen(void);
static inline void *lib_malloc(size_t n);
static inline void lib_free(void *p);

static inline void real_ready(void)
{
	if (__builtin_expect(__atomic_load_n(&g_real_state, __ATOMIC_ACQUIRE) != 2, 0))
		real_resolve();
}

/* The real function f (not to be used in the thread looking it up). */
#define REAL_FN(f) (real_ready(), g_real.f)

/* out.c */
static void out_flush(struct out *o);
static void out_mem(struct out *o, const char *s, wsize n);
static void out_str(struct out *o, const char *s);
static void out_ch(struct out *o, char c);
static void out_escaped(struct out *o, const char *s);
static void out_u64(struct out *o, u64 v);
static void out_field(struct out *o, u64 v);
static void out_commas(struct out *o, u64 v);
static void *tmp_alloc(struct tmpmem *m, wsize n);
static void tmp_free(struct tmpmem *m);
static void sb_str(struct sbuf *b, const char *s);
static void sb_mem(struct sbuf *b, const char *s, wsize k);
static void sb_u64(struct sbuf *b, u64 v);
static void sb_numbered(struct sbuf *b, const struct sbuf *name, u64 n);
static void rt_warn(const char *msg);
static int stderr_fd(void);
static u64 fd_ident(int fd); /* safefile.c */

/* profile.c */
static u64 threads_snap(void);
static void heap_read(const struct heapc *h, u64 v[16]);
static const char *op_name(unsigned op);
static void write_profile(struct out *o, struct totals *t, struct tmpmem *tm);
struct writer;
static void write_picture(struct writer *w, u64 live); /* picture.c */

/* save.c */
static int save_profile(struct sbuf *path, struct totals *t, struct tmpmem *tm);
static int build_probe(void);
static int out_dir(void);
static void sb_expand(struct sbuf *b, const char *pattern);

/* summary.c */
static const char *errdesc(int e);
static void totals_start(struct totals *t, struct tmpmem *tm);
static void totals_add(struct totals *t, u32 node, const u64 v[16]);
static void totals_end(struct totals *t);
static void totals_compute(struct totals *t);
static int summary_wanted(int perr);
static void summary(struct totals *t, const char *path, int perr);
static void out_chain(struct out *o, struct rt_node *a);

/* Freed blocks are zeroed (advice.c's scrub_freed): the leak scan will
   run. Set by ls_config. */
static int g_scrub;

/* leakstack.c */
static void ls_note_exit_fns(void *(*sym)(const char *));
static uintptr_t rt_exit_wrapper(void); /* exit.c: the runtime's exit on x86-64, else 0 */

/* leakscan.c */
static int ls_proc_open(const char *name);
static void ls_config(void);
static void ls_thread_exit(uintptr_t hook, uintptr_t ret);
static int ls_may_run(void); /* leakreport.c */
static void ls_leak_scan(uintptr_t self_sp);
static int ls_ok(void); static const char *ls_failure(void); /* why a scan that ran failed, or NULL */

/* leakreport.c */
struct writer;
static void ls_modules(struct writer *w);
static void ls_write_meta(struct out *o);
static void ls_write_node(struct out *o, u32 node, u32 id);
static void ls_summary(struct out *o, const char *P);
static int ls_lost(void);
static void ls_exit_status(void);

/* unload.c */
static void unload_notify(void);

/* checkpoint.c: the checkpoint thread's tid (0: none; the leak scan does
   not stop it) and the "how" of rt_finish for a checkpoint. */
static int g_ckpt_tid;
static const char g_ckpt_how[] = "checkpoint";
static void checkpoint_start(void);
void __weave_rt_unload(const void *lo, const void *hi);

/* vmmap/vmmap.c: the memory map, the heap timeline and peak. Its reader
   of /proc/self/maps is for the other parts too: vm_read_maps copies the
   file raw into a growing mmap'd buffer (b zeroed at first; 0 or an
   errno), vm_next_map walks its lines (not for hot paths):

	struct vm_buf b = {0};
	struct vm_map m;
	const char *cur;
	if (vm_read_maps(&b) == 0)
		for (cur = b.p; vm_next_map(&cur, b.p + b.n, &m);)
			use(m.start, m.end, m.perms, m.path, m.path_len); */
struct vm_buf {
	char *p;
	wsize n, cap;
};
struct vm_map {
	uintptr_t start, end;
	char perms[5];    /* "rw-p" */
	const char *path; /* path_len bytes, not terminated; "" for none */
	wsize path_len;
};
static inline __attribute__((always_inline)) void vm_alloc(u64 n);
static inline __attribute__((always_inline)) void vm_free(u64 n);
static void vm_init(void);
static void vm_multi(void);
static struct vm_thread *vm_thread_new(void);
static void vm_thread_exit(struct rt_thread *T);
static void vm_counts(u64 *allocs, u64 *frees);
static void vm_fork_child(void);
static void vm_tick(struct vm_thread *v);
static void vm_write(struct out *o, const u32 *ids);
static void vm_exclude(void (*f)(const void *p, u64 n));
static void mk_exclude(void (*f)(const void *p, u64 n));
static void rg_exclude(void (*f)(const void *p, u64 n));
static u64 vm_bytes(void);
static int vm_read_maps(struct vm_buf *b);
static int vm_next_map(const char **cur, const char *end, struct vm_map *m);

/* exit.c */
static void rt_crash_install(void), rt_sandbox_note(void); /* exit.c */
static void rt_quick_exit_register(void);
static void rt_fork_prepare(void);
static void rt_fork_parent(void);
static void rt_fork_child(void);

/* sampler.c: the sampler thread's tid (0: none; the leak scan does not
   stop it), its memory for the leak scan's exclusions. */
static int g_smp_tid;
static void smp_exclude(void (*f)(const void *p, u64 n));

/* timing.c */
static void time_global_init(void), time_start_late(struct rt_local *l);
static void time_thread_setup(struct rt_thread *T, struct __weave_thread *t);
static void time_thread_exit(struct rt_thread *T, struct __weave_thread *t);
static void time_fork_child(void);
static void time_fork_child_late(void);
static void time_finish(void);
static void time_write(struct out *o, const u32 *ids, struct tmpmem *tm);

/* tracepoints/trace.c. A traced frame's word has TP_TRACED with
   __WEAVE_TIMED (its pop goes to __weave_leave_timed). g_tp_on: some
   tracepoint is selected (node creation marks nodes). g_tp_attn: what
   keeps the allocation advice off its fast paths (advice.c), one word so
   that it costs one test when nothing does: TP_ATTN_ALLOCS, an
   allocation tracepoint is selected; ATTN_GEN, a mark was set (g_gen is
   not 0); ATTN_LIB, the advice does
   not call the real allocator directly (real_direct: the interposition
   not decided or off, or the real functions not looked up yet);
   ATTN_CLAIM, slot inserts need CAS (g_claim: threads, and an allocator
   that may put two blocks in a granule); ATTN_HELD, freed blocks are held
   back (scrub.c: WEAVE_QUARANTINE). Atomic; only the TP bits and
   ATTN_LIB are ever cleared. */
#define TP_TRACED 4u
enum { TP_ATTN_ALLOCS = 1, ATTN_GEN = 8, ATTN_LIB = 16, ATTN_CLAIM = 32, ATTN_HELD = 64 };
struct tp_buf;
static int g_tp_on, g_tp_attn = ATTN_LIB;
static void tp_init(void);
static void tp_node_new(struct rt_node *n);
static void tp_attention(struct rt_local *l, const struct rt_node *a, void *p, u64 n);
static void tp_free(struct rt_thread *T, const struct rt_node *a, uintptr_t p, u64 n);
static struct __weave_frame tp_enter(const struct __weave_fn *fn);
static void tp_leave(__weave_size_t v);
static void tp_timed_enter(struct __weave_node *c, unsigned depth, int in_rt);
static void tp_timed_exit(__weave_size_t v);
static void tp_thread_setup(struct __weave_thread *t);
static void tp_write(struct out *o, const u32 *ids);
static void tp_finish(const char *path), tp_fork_child(void);
static void tp_say(const char *a, const char *b);
static void tp_set(const char *s);
static const char *tp_check(const char *s);

/* tracepoints/control.c: the control channel's thread (its tid, 0: none;
   the leak scan does not stop it), start-up, fork, exec and exit. */
static int g_ctl_tid;
static void ctl_reserve(void), ctl_start(void);
static void ctl_threads(void);
static void ctl_fork_child(void);
static int ctl_exec_before(void);
static void ctl_exec_failed(int unlinked);
static void ctl_exit(void), ctl_stop(void);

/* tracepoints/unframed.c: g_tp_unframed, WEAVE_TRACE's patterns are to be
   checked against the functions without a frame at the next slow enter
   (the units register from constructors that run after the runtime's). */
static int g_tp_unframed;
static void tp_unframed_start(void);
static int tp_unframed(const char *pats, struct sbuf *out), tp_unmatched(const char *pats, struct sbuf *out);

/* marks.c, regions.c. g_gen: the generation of the blocks allocated now,
   the number of marks set (relaxed loads; written under g_mk.lock). */
static u32 g_gen;
static u32 mark_set(const char *label, struct rt_thread *T);
static void marks_write(struct writer *w);
static void marks_fork_prepare(void);
static void marks_fork_parent(void);
static void marks_fork_child(void);
static void regions_write(struct out *o);
static void regions_thread_exit(void);

#endif /* WEAVE_INTERNAL_H */
