//go:build ignore

/* weave_rt.c: the weave runtime (ABI 1).

   Linked into every woven program. It keeps, per thread, a pseudo-stack
   whose entries point into a calling-context tree (CCT), charges every
   allocation made through __weave_malloc & co. to a leaf of that tree, and
   at exit prints a heap summary on stderr and writes the profile described
   in profile/format.go.

   Overview
   --------
   Nodes. All CCT nodes live in one global node array addressed by a 32-bit
   index (only NODE_BITS = 28 bits are used, so that a side-table entry can
   hold one). The array is a fixed table of chunk pointers, each chunk
   CHUNK_NODES nodes mmap'd on first use. Index 0 is never used ("none").
   Threads take batches of indices from a global atomic counter (16 at
   first, doubling up to NODE_BATCH, so that short-lived threads waste
   little), so creating a node takes no lock. Trees are per thread: a node's fields are
   written by the thread that created it (its owner) only, except the
   "remote" free counters, which other threads add to atomically.

   Kinds: R (a thread's root), F (a woven function, key = struct __weave_fn),
   A (an allocation leaf, key = struct __weave_site, always a child of an R
   or F node, holding the heap counters of struct heapc).

   Child lookup. weave.h's __weave_enter hits when cur->cache is the child
   for the function; otherwise __weave_enter_slow looks the child up in the
   thread's open-addressing hash keyed by (parent index, key), creating it on
   first use. Allocation leaves use the same hash, with a one-entry cache per
   parent (u.acache) in front of it.

   Side table. Live blocks are kept by address (never a header before
   the block), in two parts:
   - The radix table, where nearly every block goes: two radix trees over
     the address space (root, mid, leaf levels) whose leaves hold one
     8-byte slot per granule of address space: {node, the address's low 7
     bits, size}. Blocks under COARSE_MIN (128) bytes go to the fine
     tree, 32-byte granules (glibc's smallest chunk, so no two of its
     blocks share one); larger blocks to the coarse tree, 128-byte
     granules, which no two of them can share whatever the allocator. A
     lookup is three dependent loads and no hashing (a free tries the
     fine tree first), and blocks allocated together have neighbouring
     slots, so the table's working set follows the program's: this is
     what makes malloc/free advice cheap (binary-trees: 3.2x faster than
     the hash table it replaced). Slots are written without a lock: a
     block's slot is only written by its own allocation (an empty slot;
     CAS once a second thread exists) and its own free, which the
     allocator orders. Mids and leaves are carved from 8 MiB
     MAP_NORESERVE maps on first use and never freed; only the pages
     written are resident, so the table costs at most 8 bytes per 32 of
     heap span for small blocks and per 128 for the others (widgets, 224-
     byte chunks: 14 bytes per live block), and nothing is rehashed.
   - The spill table, for what the radix table cannot hold: a block in a
     granule already taken (allocators that pack blocks closer than 32
     bytes), sizes of 256 MiB and more, addresses beyond 2^48, or when a
     leaf cannot be mapped. NSHARDS open-addressing tables keyed by
     mix64(address), each entry 16 bytes {address, size << NODE_BITS |
     node}, each shard with its own spinlock; mmap'd, grown by 5/4 at
     load 0.85 (shrunk at load 1/4), linear probing, backward-shift
     deletion. It is empty in most programs, and then costs one load of
     g_spill_count per free. Block sizes that do not fit in SIZE_BITS
     bits (>= 64 GiB) are kept in a small extra list.

   Re-entrancy. Every __weave_* function sets the thread's in_rt flag for
   its whole run (the real library call included); a __weave_* call or a
   slow-path enter made while it is set (a signal handler interrupting the
   runtime, or a woven allocator called by the real one) just calls the real
   function and records nothing, resp. does not push. Every lock is taken
   with in_rt set, so a signal handler never waits on a lock its own thread
   holds.

   Choices (documented behaviour)
   ------------------------------
   - free(p) of a block the runtime never saw: passes through, counts
     nothing. free(NULL): no count.
   - realloc(p, n) of a block the runtime never saw: the real realloc runs,
     and the new block is recorded as allocated at this site (no free is
     counted for the unknown old block).
   - realloc(p, 0) returning NULL counts as a free of p (glibc frees p).
     realloc(NULL, n) is malloc(n). A failed realloc leaves p recorded.
   - calloc/reallocarray overflow: the real function fails, nothing recorded.
   - Recorded size is always the requested size (pvalloc included, which
     glibc rounds up to whole pages; strdup/strndup: length of the copy + 1).
   - A malloc returning an address still in the side table means that block
     was freed behind the runtime's back (by unwoven code): the stale entry is
     counted as freed, charged to the node that allocated it.
   - Allocation before any woven function ran, or in a thread that never ran
     woven code, is charged to the thread's root (threads are set up lazily
     from the allocation and free paths too).
   - Maximum pseudo-stack depth MAX_DEPTH: deeper enters do not push. The
     stack is an address-space reservation (PROT_NONE) committed on demand
     with mprotect, so it never moves: an enter interrupted by a signal
     handler whose woven code grows the stack still writes to valid memory.
   - __weave_setjmp_return also re-synchronises for a frame whose enter did
     not push (parent == 0): its depth field then holds the depth the
     function ran at.
   - Recursion is folded (except in exact timing mode, whose self times
     need one node per activation depth): a function appears at most twice
     on a path of the tree. Entering f below a node whose path already holds f twice
     goes to the nearer of the two (the child lookup returns that
     ancestor; the pseudo-stack still pushes it). For direct recursion
     main > f > f > f ... the tree is main > f > f', where f' counts every
     call of f from f (the report's recursive calls) and holds the
     allocations of all deeper levels. So the tree stays bounded by the
     program's functions, not its recursion depth; the pseudo-stack (16
     bytes a level, committed on demand) is the only per-level memory.

   Library ("hidden") allocations
   ------------------------------
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
   leaf's key is the static site of the operation (rt_hidden[op], fn = 0),
   charged below the innermost woven frame of the thread. The advice
   functions call the library function with in_rt set, so what they record
   is not recorded again. Frees through free() and realloc() always look
   the block up, so a block allocated on one side (woven or not) and freed
   on the other is counted once each way.
   Recording is on when WEAVE_HIDDEN is not "0", the runtime copy is the
   process's active one (see "Several copies"), and malloc, free, calloc
   and realloc all resolve to this runtime's (a program, or a statically
   linked sanitizer, that defines its own malloc wins over the weak
   definitions: then nothing is interposed and nothing hidden recorded).

   Several copies
   --------------
   The driver links the runtime into every executable and shared object it
   links; the dynamic linker binds all references to __weave_* to the first
   copy in lookup order (see rt_is_active). The other copies are inactive:
   their constructor, destructor and exit paths do nothing, and their
   interposed functions only forward.

   fork, exec and the ways out
   ---------------------------
   - fork: the child's counters start at zero (calls, heap counters, bins),
     its profile lists only the forking thread (as T 0), and the blocks it
     inherited are retagged "inherited" (node 0): freeing one counts in the
     M inherited_freed record, not as a free of the child's. Parent and
     child profiles never count the same event twice. The child writes its
     own profile (its pid in the default name, or %p in WEAVE_OUT).
   - exec*: execve, execv, execvp, execvpe, execl, execlp, execle, fexecve
     and execveat are interposed (weak): the profile is written (M end
     exec, complete) before the real call; if it fails, the process goes
     on and its final profile replaces that one. A profile written before
     exec is never replaced by a later image of the same pid (same
     WEAVE_OUT): that one takes the next free name (name.1.prof).
   - exit and return from main: the destructor below runs after the
     program's atexit handlers and destructors; in the executable it then
     registers one more atexit handler, which glibc runs after the
     destructors of every shared object, and which writes the profile. So
     frees in atexit handlers and library destructors are counted.
   - _exit and _Exit (interposed, weak) and quick_exit (an at_quick_exit
     handler registered at start-up, run after the program's) write it too.
     Calls from a vfork child, or any process whose pid is not the one the
     runtime knows (a clone without fork handlers), write nothing.
   - SIGSEGV, SIGBUS, SIGABRT (abort), SIGFPE and SIGILL: unless
     WEAVE_SIGNALS=0, a handler is installed at start-up for each whose
     disposition is SIG_DFL. It writes the profile (M complete 0, M end
     signal N), restores SIG_DFL and lets the signal kill the process as it
     would have (the faulting instruction runs again; a sent signal is
     raised again): same signal, same status, same core. A handler the
     program had installed before is kept and called instead (nothing
     written: it may recover); one it installs later replaces the
     runtime's (the kernel holds one per signal) and works as usual.
   The profile is written once: the first of these wins, except that one
   written before exec or from a crash handler (provisional) is replaced if
   the process goes on.

   Environment, read once at start-up
   ----------------------------------
   WEAVE_OUT      profile path; "%p" is replaced by the pid. An existing
                  file of that name is replaced (atomically). Set but empty:
                  no profile is written. Unset: weave-<prog>.<pid>.prof in
                  the current directory, never replacing an existing file
                  (weave-<prog>.<pid>.<n>.prof is tried next).
   WEAVE_SUMMARY  "0": no heap summary on stderr.
   WEAVE_LEAKS    number of leak contexts in the summary (default 5).
   WEAVE_STATS    "1": add a line with the runtime's own memory use.
   WEAVE_TIME     "sampled" (default), "exact" or "off": how function time
                  is measured; see the "Timing" section at the end.
   WEAVE_TIME_CLOCK  "tsc" or "monotonic": exact mode's clock (default: tsc
                  where the TSC is invariant, else monotonic).
   WEAVE_HIDDEN   "0": do not record library (hidden) allocations; the
                  interposed functions still forward. Default on, so that
                  the totals are the process's, as valgrind counts them.
   WEAVE_SIGNALS  "0": install no crash signal handlers.

   The //go:build line at the top keeps the go tool from taking this file
   for cgo source of package runtime, which embeds it (runtime.go).
*/

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
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "weave.h"

typedef uint32_t u32;
typedef uint64_t u64;
typedef __weave_size_t wsize;

#define RT_ABI 1
#define NODE_BITS 28
#define MAX_NODES (1u << NODE_BITS)
#define NODE_MASK (MAX_NODES - 1)
#define CHUNK_BITS 16
#define CHUNK_NODES (1u << CHUNK_BITS)
#define NCHUNKS (MAX_NODES >> CHUNK_BITS)
#define NODE_BATCH 256u
#define SIZE_BITS (64 - NODE_BITS)
#define SIZE_SAT ((1ull << SIZE_BITS) - 1)
#define NSHARDS 128u
#define SHARD_MIN 256u /* entries: one page */
#define NBINS 1026
#define CHASH_INIT 256u /* first child hash: from the shared arena */
#define STACK_INIT 4096u
#define MAX_DEPTH (1u << 20)
#define NBIG 64
#define ARENA_CHUNK 65536u

enum { KIND_R, KIND_F, KIND_A };
enum { ST_NEW, ST_LIVE, ST_DEAD, ST_FAILED };

/* Heap counters of an A node, by size class (s, m, l, x). */
struct heapc {
	u64 a[4], b[4];   /* allocations, bytes allocated: owner only */
	u64 f[4], g[4];   /* frees, bytes freed, by the owner: owner only */
	u64 rf[4], rg[4]; /* frees, bytes freed, by other threads: atomic */
};

struct rt_node {
	struct __weave_node pub; /* key, cache, calls: see weave.h */
	union {
		struct rt_node *acache; /* R, F: the A child used last */
		struct heapc *heap;     /* A: its counters */
	} u;
	u32 self;       /* own index */
	u32 parent;     /* parent's index; 0 for a root */
	u32 next;       /* next node created by the same thread; 0 at the end */
	u32 thread : 30; /* owner's number (the profile's T id) */
	u32 kind : 2;
	/* Timing (see "Timing"): exact mode, inclusive ticks (owner); sampled
	   mode, CPU ns charged by the owner's signal handler. Relaxed atomic
	   loads and stores. Never initialised: chunks are fresh zeroed mmaps and
	   node indices are never reused. */
	u64 time;
	/* Exact mode: the depth of the node's outermost open activation, or 0
	   (owner thread). Recursion folding puts one node on the pseudo-stack
	   at several depths; only the outermost activation's time counts, or
	   nested activations would count twice. */
	u32 tdepth;
};

/* mprof's bin table row. */
struct bin {
	u64 allocs, frees, bytes, fbytes;
};

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
	struct bin *bins;       /* NBINS rows; set to 0 at thread exit; the
	                           owner reads it freely, writes it and the exit
	                           writer reads it under g_lock */
	struct __weave_slot *stack; /* reservation of reserved slots */
	wsize reserved;
	/* Timing (see "Timing"). Owner thread, except as noted. */
	struct __weave_thread *tls; /* its __weave_tls while it runs, then 0: g_lock */
	u64 t_start, t_end;         /* exact: ticks at set-up, at exit (0: running): g_lock */
	u64 cpu_last;               /* sampled: thread CPU ns at the last sample */
	int timer;                  /* sampled: kernel timer id, -1 for none */
};

/* Per-thread private state. */
struct rt_local {
	struct rt_thread *thr; /* set up: ST_LIVE or ST_DEAD */
	int state;             /* ST_* */
	int in_rt;             /* inside the runtime: see "Re-entrancy" */
	int resolving;         /* looking up the real allocator (dlsym) */
};

/* Side-table entry; addr == 0 is an empty slot. */
struct ent {
	uintptr_t addr;
	u64 val; /* size << NODE_BITS | node */
};

struct shard {
	u32 lock;
	u32 cap, count;
	u32 grow_at, shrink_at;
	struct ent *tab;
} __attribute__((aligned(64)));

/* A bump allocator over anonymous maps of a fixed size. */
struct bump {
	char *next;
	wsize left;
};

/* Globals and their threading contracts
   -------------------------------------
   __weave_tls   per thread. Initial value: cur = &rt_boot, cap = 0, so the
                 first enter of every thread takes the slow path.
   rt_local      per thread.
   rt_dummy      read only: the node every empty cache points to; its key
                 (its own address) matches no function or site.
   rt_boot       read only: cur of a thread that is not set up.
   g_chunks      node chunk pointers: set once by CAS (release); read with
                 acquire loads (node_at).
   g_node_next   next free node index: atomic fetch-add by batch.
   g_radix       side table, radix part: slots written without a lock (see
                 "Side table"); mids and leaves created under g_radix_lock
                 (release stores, acquire loads), with g_slab.
   g_multi       set (atomic) when a second thread is set up: slot inserts
                 use CAS from then on.
   g_shards      side table, spill part: each shard's fields under its own
                 lock; g_spill_count, their total, atomic.
   g_big         sizes that do not fit SIZE_BITS: under g_big_lock.
   g_lock        mutex (slow paths only): thread set-up and exit,
                 g_threads, g_nthreads, g_arena, the exit writer; taken by
                 fork's prepare handler. Lock order: g_lock, then shard locks,
                 then g_big_lock, then g_radix_lock.
   g_threads     list of every thread ever set up, in T id order; g_lock.
   g_shared_bins bins of threads that exited (merged by their destructor)
                 and of frees/allocations made after that: atomic adds.
   g_key, g_once, g_cfg_*, g_start_ns: written once by rt_global_init
                 (pthread_once), read only afterwards (g_start_ns is reset
                 in a fork child, which has one thread).
   g_finished    atomic: FIN_* below, which profile was written.
   g_pid         the pid the runtime belongs to: set at start-up and in a
                 fork child (one thread then); read by the exit paths.
   g_real        the real allocator: written once by real_resolve (its
                 state g_real_state, release/acquire), read only after.
   g_hidden      HIDDEN_*: whether library allocations are recorded;
                 decided once (hidden_decide), an atomic int.
   g_prev_act    the signal dispositions found at start-up; written before
                 the handlers are installed, read only after.
   g_inh         inherited blocks of a fork child: atomic adds. */

static __thread struct rt_local rt_local;

static struct rt_node rt_dummy = {
	.pub = {.key = &rt_dummy, .cache = &rt_dummy.pub},
	.u = {.acache = &rt_dummy},
};
static struct rt_node rt_boot = {
	.pub = {.key = &rt_dummy, .cache = &rt_dummy.pub},
	.u = {.acache = &rt_dummy},
};

/* The second-level child cache (weave.h): this thread's entries. Written
   only inside rt_enter/rt_exit, where a signal handler's woven code does
   not write it. */
static __thread struct __weave_cc rt_cc[__WEAVE_CC_SIZE];

/* The child cache of a thread not set up: never written, matches nothing. */
static struct __weave_cc rt_cc_none[__WEAVE_CC_SIZE];

__thread struct __weave_thread __weave_tls = {&rt_boot.pub, 0, 0, 0, 0, rt_cc_none};

static struct rt_node *g_chunks[NCHUNKS];
static u32 g_node_next;
static struct shard g_shards[NSHARDS];
static u32 g_spill_count; /* entries in g_shards: atomic */
static int g_multi;       /* a second thread was set up: atomic */
enum { HIDDEN_UNKNOWN, HIDDEN_OFF, HIDDEN_ON };
static int g_hidden;      /* see hidden_decide */

/* The radix table of the side table (see "Side table"). */
#define GRAN_FINE 5    /* fine tree: 32-byte granules, glibc's smallest chunk */
#define GRAN_COARSE 7  /* coarse tree: 128-byte granules, for blocks of COARSE_MIN bytes or more */
#define COARSE_MIN 128 /* two live blocks this big start at least this far apart */
#define OFF_BITS 7     /* the address's offset in its granule */
#define LEAF_BITS 15   /* a leaf: 2^15 slots, 256 KiB, for 1 or 4 MiB of addresses */
#define MID_BITS 12    /* a mid: 4096 leaves */
#define ROOT_BITS 16   /* a root: 65536 mids, covering 2^48 bytes or more */
#define SLOT_USED (1ull << (NODE_BITS + OFF_BITS))
#define SLOT_SIZE_SHIFT (NODE_BITS + OFF_BITS + 1)
#define SLOT_SIZE_MAX ((1ull << (64 - SLOT_SIZE_SHIFT)) - 1)
#define RADIX_SLAB (8u << 20) /* leaves and mids are carved from 8 MiB maps */

static u64 **g_radix[2][1u << ROOT_BITS]; /* the fine and the coarse tree */
static u32 g_radix_lock; /* creating mids and leaves */
static struct bump g_slab;

static struct {
	uintptr_t addr;
	u64 size;
} g_big[NBIG];
static u32 g_big_lock;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rt_thread *g_threads, **g_threads_tail = &g_threads;
static u32 g_nthreads;
static struct bump g_arena;
static struct bin g_shared_bins[NBINS];
static pthread_key_t g_key;
static int g_key_ok;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_finished;
static u64 g_start_ns;
static int g_cfg_out_set; /* WEAVE_OUT is set */
static char g_cfg_out[4096];
static int g_cfg_summary = 1;
static u32 g_cfg_leaks = 5;
static int g_cfg_stats;
static int g_cfg_signals = 1;
static int g_cfg_hidden = 1;
static int g_cfg_loaded; /* the environment was read */

/* g_finished: nothing written, the final profile written or being
   written, a provisional one (before exec, from a crash handler) written
   or being written. */
enum { FIN_NONE, FIN_FINAL, FIN_PROV, FIN_PROV_BUSY };
static int g_pid;
static char g_prev_path[4200]; /* where the provisional profile went */
static const char *g_end = "exit"; /* how the process ended, for M end */
static int g_end_sig;
static int g_in_exe; /* this copy is in the executable */
static int g_complete = 1; /* for M complete */

/* Blocks a fork child inherited, and those of them it freed. */
static struct {
	u64 blocks, bytes, freed, freed_bytes;
} g_inh;

/* ---------------------------------------------------------------- helpers */

#define fence() __atomic_signal_fence(__ATOMIC_SEQ_CST)

static void *rt_map(wsize n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static inline u64 mix64(u64 x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

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

static inline int size_class(u64 n)
{
	return n <= 32 ? 0 : n <= 256 ? 1 : n <= 2048 ? 2 : 3;
}

static inline u32 bin_of(u64 n)
{
	return n <= 1024 ? (u32)n : 1025;
}

static u64 now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

static u64 parse_u64(const char *s, u64 def)
{
	u64 v = 0;
	if (!s || !*s)
		return def;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return def;
		v = v * 10 + (u64)(*s - '0');
		if (v > 1000000)
			return 1000000;
	}
	return v;
}

/* ------------------------------------------------------------------ nodes */

static void *arena_alloc(wsize n);

static inline struct rt_node *node_at(u32 i)
{
	return __atomic_load_n(&g_chunks[i >> CHUNK_BITS], __ATOMIC_ACQUIRE) + (i & (CHUNK_NODES - 1));
}

static int chunk_map(u32 c)
{
	struct rt_node *p, *none = NULL;
	if (__atomic_load_n(&g_chunks[c], __ATOMIC_ACQUIRE))
		return 1;
	p = rt_map((wsize)CHUNK_NODES * sizeof *p);
	if (!p)
		return 0;
	if (!__atomic_compare_exchange_n(&g_chunks[c], &none, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		munmap(p, (wsize)CHUNK_NODES * sizeof *p);
	return 1;
}

static int node_refill(struct rt_thread *T)
{
	u32 i, n = T->batch ? T->batch : 16;
	if (__atomic_load_n(&g_node_next, __ATOMIC_RELAXED) >= MAX_NODES)
		return 0;
	i = __atomic_fetch_add(&g_node_next, n, __ATOMIC_RELAXED);
	if (i >= MAX_NODES)
		return 0;
	if (n > MAX_NODES - i)
		n = MAX_NODES - i;
	/* A batch may straddle two chunks. */
	if (!chunk_map(i >> CHUNK_BITS) || !chunk_map((i + n - 1) >> CHUNK_BITS))
		return 0;
	T->nnext = i ? i : 1; /* index 0 means "none" */
	T->nend = i + n;
	if (T->batch < NODE_BATCH)
		T->batch = n * 2;
	return 1;
}

/* Creates a node owned by T. Owner thread only. */
static struct rt_node *node_new(struct rt_thread *T, const struct rt_node *parent, const void *key, int kind)
{
	struct heapc *h = NULL;
	struct rt_node *n;
	u32 i;
	if (T->nnext == T->nend && !node_refill(T))
		return NULL;
	if (kind == KIND_A) {
		pthread_mutex_lock(&g_lock);
		h = arena_alloc(sizeof *h);
		pthread_mutex_unlock(&g_lock);
		if (!h)
			return NULL;
	}
	i = T->nnext++;
	n = node_at(i);
	n->pub.key = key;
	n->pub.cache = &rt_dummy.pub;
	n->pub.calls = 0;
	if (kind == KIND_A)
		n->u.heap = h;
	else
		n->u.acache = &rt_dummy;
	n->self = i;
	n->parent = parent ? parent->self : 0;
	n->next = 0;
	n->thread = T->num;
	n->kind = (u32)kind;
	if (T->last)
		node_at(T->last)->next = i;
	else
		T->first = i;
	T->last = i;
	__atomic_store_n(&T->nnodes, T->nnodes + 1, __ATOMIC_RELEASE);
	return n;
}

static inline u32 chash_of(u32 parent, const void *key)
{
	/* Fibonacci hashing: the product's high half depends on every bit. */
	return (u32)((((u64)(uintptr_t)key + ((u64)parent << 32)) * 0x9e3779b97f4a7c15ull) >> 32);
}

/* The first table (CHASH_INIT entries) comes from the shared arena, with
   g_lock held by the caller (thread_setup); larger ones are mmap'd. */
static int chash_grow(struct rt_thread *T)
{
	u32 ncap = T->chash ? (T->cmask + 1) * 2 : CHASH_INIT, i;
	u64 *nt = T->chash ? rt_map((wsize)ncap * sizeof *nt) : arena_alloc((wsize)ncap * sizeof *nt);
	if (!nt)
		return 0;
	if (T->chash) {
		for (i = 0; i <= T->cmask; i++) {
			u64 k = T->chash[i];
			u32 j;
			if (!k)
				continue;
			j = chash_of((u32)(k >> 32), node_at((u32)k)->pub.key) & (ncap - 1);
			while (nt[j])
				j = (j + 1) & (ncap - 1);
			nt[j] = k;
		}
		if (T->cmask + 1 > CHASH_INIT)
			munmap(T->chash, (wsize)(T->cmask + 1) * sizeof *nt);
	}
	T->chash = nt;
	T->cmask = ncap - 1;
	return 1;
}

static int time_exact(void);

/* Recursion folding (see the top comment): if the path from the root to
   p holds function key twice, returns the nearer of the two, else 0. Not
   in exact timing mode: a folded node stands for activations nested in
   one another, whose self times the tree can then no longer tell apart;
   there the tree stays exact, one node per depth (up to the depth cap). */
static struct rt_node *fold(struct rt_node *p, const void *key)
{
	struct rt_node *q, *near = NULL;
	if (time_exact())
		return NULL;
	for (q = p; q->kind == KIND_F; q = node_at(q->parent)) {
		if (q->pub.key != key)
			continue;
		if (near)
			return near;
		near = q;
	}
	return NULL;
}

/* Finds or creates p's child for key (for a function: folding recursion).
   The hash maps (parent, key) to the child, or to the ancestor a folded
   call goes to, so that fold's walk up the path runs once per pair.
   Owner thread only. */
static struct rt_node *child(struct rt_thread *T, struct rt_node *p, const void *key, int kind)
{
	struct rt_node *n;
	u64 e;
	u32 i;
	if ((T->ccount + 1) * 2 > T->cmask + 1 && !chash_grow(T))
		return NULL;
	for (i = chash_of(p->self, key) & T->cmask; (e = T->chash[i]); i = (i + 1) & T->cmask) {
		if ((u32)(e >> 32) != p->self)
			continue;
		n = node_at((u32)e);
		if (n->pub.key == key)
			return n;
	}
	if (!(kind == KIND_F && (n = fold(p, key))) && !(n = node_new(T, p, key, kind)))
		return NULL;
	T->chash[i] = (u64)p->self << 32 | n->self;
	T->ccount++;
	return n;
}

/* ---------------------------------------------------------------- threads */

static void rt_thread_exit(void *arg);
static void rt_fork_prepare(void);
static void rt_fork_parent(void);
static void rt_fork_child(void);
static void radix_each(void (*f)(u64 *slot), void (*page)(u64 bytes));

/* Timing hooks, defined in the "Timing" section at the end. */
struct out;
struct tmpmem;
static void time_global_init(void);
static void time_thread_setup(struct rt_thread *T, struct __weave_thread *t);
static void time_thread_exit(struct rt_thread *T, struct __weave_thread *t);
static void time_fork_child(void);
static void time_push_stamp(struct __weave_thread *t, unsigned d, struct __weave_frame *f);
static void time_drop(struct __weave_thread *t, unsigned d);
static void time_finish(void);
static void time_write(struct out *o, const u32 *ids, struct tmpmem *tm);


static void rt_crash_install(void);
static int rt_is_active(void);

/* Reads the environment (see the top comment), once it is there: the
   first allocation may come before the C library set environ up, then
   the constructor reads it. */
static void rt_config(void)
{
	const char *s;
	if (__atomic_load_n(&g_cfg_loaded, __ATOMIC_ACQUIRE) || !environ)
		return;
	s = getenv("WEAVE_OUT");
	if (s) {
		wsize n = strlen(s);
		if (n >= sizeof g_cfg_out)
			n = sizeof g_cfg_out - 1;
		memcpy(g_cfg_out, s, n);
		g_cfg_out[n] = 0;
		g_cfg_out_set = 1;
	}
	s = getenv("WEAVE_SUMMARY");
	g_cfg_summary = !(s && strcmp(s, "0") == 0);
	g_cfg_leaks = (u32)parse_u64(getenv("WEAVE_LEAKS"), 5);
	if (g_cfg_leaks > 1000)
		g_cfg_leaks = 1000;
	s = getenv("WEAVE_STATS");
	g_cfg_stats = s && strcmp(s, "1") == 0;
	s = getenv("WEAVE_HIDDEN");
	g_cfg_hidden = !(s && strcmp(s, "0") == 0);
	s = getenv("WEAVE_SIGNALS");
	g_cfg_signals = !(s && strcmp(s, "0") == 0);
	__atomic_store_n(&g_cfg_loaded, 1, __ATOMIC_RELEASE);
	if (g_cfg_signals && rt_is_active())
		rt_crash_install();
}

static void rt_global_init(void)
{
	g_start_ns = now_ns();
	g_pid = (int)getpid();
	g_key_ok = pthread_key_create(&g_key, rt_thread_exit) == 0;
	pthread_atfork(rt_fork_prepare, rt_fork_parent, rt_fork_child);
	rt_config();
	time_global_init();
}

/* Memory that is never freed (thread records, first child hashes, heap
   counters). g_lock held. Zeroed (fresh mmap). */
/* Takes n bytes (n <= chunk) from b, mapping a new chunk of memory when
   the current one is short; its rest is then left unused. */
static void *bump_take(struct bump *b, wsize n, wsize chunk)
{
	void *r;
	if (n > b->left) {
		void *p = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		b->next = p;
		b->left = chunk;
	}
	r = b->next;
	b->next += n;
	b->left -= n;
	return r;
}

static void *arena_alloc(wsize n)
{
	return bump_take(&g_arena, (n + 15) & ~(wsize)15, ARENA_CHUNK);
}

/* Reserves the thread's pseudo-stack and commits its first STACK_INIT
   slots. */
static struct __weave_slot *stack_reserve(wsize *reserved)
{
	wsize n = MAX_DEPTH;
	for (; n >= STACK_INIT; n /= 2) {
		void *p = mmap(NULL, n * sizeof(struct __weave_slot), PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			continue;
		if (mprotect(p, STACK_INIT * sizeof(struct __weave_slot), PROT_READ | PROT_WRITE) != 0) {
			munmap(p, n * sizeof(struct __weave_slot));
			return NULL;
		}
		*reserved = n;
		return p;
	}
	return NULL;
}

static int stack_grow(struct rt_thread *T, struct __weave_thread *t)
{
	wsize cap = t->cap, ncap = cap * 2;
	if (cap >= T->reserved)
		return 0;
	if (ncap > T->reserved)
		ncap = T->reserved;
	if (mprotect(t->stack + cap, (ncap - cap) * sizeof *t->stack, PROT_READ | PROT_WRITE) != 0)
		return 0;
	t->cap = (unsigned)ncap;
	return 1;
}

/* Sets up the calling thread: its root, stack, bins and T record. Called
   with in_rt set, in state ST_NEW. */
static struct rt_thread *thread_setup(struct rt_local *l)
{
	struct __weave_thread *t = &__weave_tls;
	struct rt_thread *T;
	struct rt_node *root = NULL;
	struct bin *bins = NULL;
	struct __weave_slot *stack = NULL;
	wsize reserved = 0;

	pthread_once(&g_once, rt_global_init);
	l->state = ST_FAILED;
	bins = rt_map(NBINS * sizeof *bins);
	stack = stack_reserve(&reserved);
	pthread_mutex_lock(&g_lock);
	if (g_nthreads)
		__atomic_store_n(&g_multi, 1, __ATOMIC_SEQ_CST); /* see side_insert */
	T = arena_alloc(sizeof *T);
	if (!T || !bins || !stack)
		goto fail;
	memset(T, 0, sizeof *T);
	T->num = g_nthreads;
	T->bins = bins;
	T->stack = stack;
	T->reserved = reserved;
	if (!chash_grow(T) || !(root = node_new(T, NULL, NULL, KIND_R)))
		goto fail;
	T->root = root->self;
	T->tid = (int)syscall(SYS_gettid);
	g_nthreads++;
	*g_threads_tail = T;
	g_threads_tail = &T->next;
	pthread_mutex_unlock(&g_lock);

	stack[0].node = &root->pub;
	t->stack = stack;
	t->cc = rt_cc;
	t->depth = 0;
	t->cap = STACK_INIT;
	fence();
	t->cur = &root->pub;
	if (g_key_ok)
		pthread_setspecific(g_key, T);
	l->thr = T;
	l->state = ST_LIVE;
	time_thread_setup(T, t);
	return T;
fail:
	/* The arena record and any node indices taken are lost: harmless. */
	pthread_mutex_unlock(&g_lock);
	if (bins)
		munmap(bins, NBINS * sizeof *bins);
	if (stack)
		munmap(stack, reserved * sizeof *stack);
	return NULL;
}

static inline struct rt_thread *thread_get(struct rt_local *l)
{
	if (__builtin_expect(l->thr != NULL, 1))
		return l->thr;
	return l->state == ST_NEW ? thread_setup(l) : NULL;
}

/* pthread key destructor: the thread is exiting. Releases its stack and
   bins; its nodes stay. Later woven code in this thread (other TSD
   destructors) does not push, and its allocations are charged below the
   node current at that time. */
static void rt_thread_exit(void *arg)
{
	struct rt_thread *T = arg;
	struct rt_local *l = &rt_local;
	struct __weave_thread *t = &__weave_tls;
	struct bin *b;
	int was = l->in_rt;
	u32 i;

	if (!T || l->thr != T || l->state != ST_LIVE)
		return;
	rt_enter(l);
	time_thread_exit(T, t);
	t->cap = 0;
	fence();
	t->depth = 0;
	fence();
	t->cur = &node_at(T->root)->pub;
	t->stack = NULL;
	munmap(T->stack, T->reserved * sizeof *T->stack);
	T->stack = NULL;
	pthread_mutex_lock(&g_lock);
	b = T->bins;
	T->bins = NULL;
	for (i = 0; i < NBINS; i++) {
		if (!(b[i].allocs | b[i].frees))
			continue;
		__atomic_fetch_add(&g_shared_bins[i].allocs, b[i].allocs, __ATOMIC_RELAXED);
		__atomic_fetch_add(&g_shared_bins[i].frees, b[i].frees, __ATOMIC_RELAXED);
		__atomic_fetch_add(&g_shared_bins[i].bytes, b[i].bytes, __ATOMIC_RELAXED);
		__atomic_fetch_add(&g_shared_bins[i].fbytes, b[i].fbytes, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&g_lock);
	munmap(b, NBINS * sizeof *b);
	l->state = ST_DEAD;
	fence();
	l->in_rt = was;
}

static void rt_fork_prepare(void)
{
	u32 i;
	rt_local.in_rt++;
	fence();
	pthread_mutex_lock(&g_lock);
	for (i = 0; i < NSHARDS; i++)
		spin_lock(&g_shards[i].lock);
	spin_lock(&g_big_lock);
	spin_lock(&g_radix_lock);
}

static void rt_fork_parent(void)
{
	u32 i;
	spin_unlock(&g_radix_lock);
	spin_unlock(&g_big_lock);
	for (i = 0; i < NSHARDS; i++)
		spin_unlock(&g_shards[i].lock);
	pthread_mutex_unlock(&g_lock);
	fence();
	rt_local.in_rt--;
}

static int g_forked; /* this process is a fork child */

/* Zeroes counters that other threads may have added to atomically. */
static void zero_u64(u64 *p, wsize n)
{
	while (n--)
		__atomic_store_n(p++, 0, __ATOMIC_RELAXED);
}

/* Counts a side-table entry as inherited; returns its value retagged. */
static u64 inherit(uintptr_t a, u64 val)
{
	u64 size = val >> NODE_BITS;
	int b;
	if (size == SIZE_SAT)
		for (b = 0; b < NBIG; b++)
			if (g_big[b].addr == a)
				size = g_big[b].size;
	g_inh.blocks++;
	g_inh.bytes += size;
	return val & ~(u64)NODE_MASK;
}

static void inherit_slot(u64 *slot)
{
	*slot &= ~(u64)NODE_MASK;
	g_inh.blocks++;
	g_inh.bytes += *slot >> SLOT_SIZE_SHIFT;
}

/* In the child (one thread; the locks are held since rt_fork_prepare):
   everything counted so far is the parent's, so the child starts from
   zero (see "fork, exec and the ways out"), times included. The forking thread becomes
   T 0, with its new tid, and keeps its tree, whose nodes keep their
   place but lose their counts; the other threads are dropped from the
   profile. Blocks in the side table are the parent's: retagged to node 0,
   "inherited". */
static void rt_fork_child(void)
{
	struct rt_thread *me = rt_local.thr, *T;
	u32 i, k;
	time_fork_child(); /* before the other threads leave the list */
	for (T = g_threads; T; T = T->next) {
		u32 nn = __atomic_load_n(&T->nnodes, __ATOMIC_ACQUIRE);
		for (i = T->first, k = 0; k < nn; k++) {
			struct rt_node *n = node_at(i);
			n->pub.calls = 0;
			__atomic_store_n(&n->time, 0, __ATOMIC_RELAXED);
			if (n->kind == KIND_A)
				zero_u64((u64 *)n->u.heap, sizeof *n->u.heap / sizeof(u64));
			if (T == me)
				n->thread = 0;
			i = n->next;
		}
		if (T->bins)
			memset(T->bins, 0, NBINS * sizeof *T->bins);
	}
	zero_u64((u64 *)g_shared_bins, NBINS * (sizeof(struct bin) / sizeof(u64)));
	zero_u64((u64 *)&g_inh, sizeof g_inh / sizeof(u64));
	radix_each(inherit_slot, NULL);
	for (i = 0; i < NSHARDS; i++) {
		struct shard *sh = &g_shards[i];
		for (k = 0; k < sh->cap; k++) {
			struct ent *e = &sh->tab[k];
			if (e->addr)
				e->val = inherit(e->addr, e->val);
		}
	}
	g_threads = NULL;
	g_threads_tail = &g_threads;
	g_nthreads = 0;
	if (me) {
		me->tid = (int)syscall(SYS_gettid);
		me->num = 0;
		me->next = NULL;
		g_threads = me;
		g_threads_tail = &me->next;
		g_nthreads = 1;
	}
	g_pid = (int)getpid();
	g_forked = 1;
	g_start_ns = now_ns();
	rt_fork_parent();
}

/* ------------------------------------------------------------ side table */

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
		munmap(s->tab, (wsize)s->cap * sizeof(struct ent));
	__atomic_store_n(&s->tab, nt, __ATOMIC_RELAXED);
	__atomic_store_n(&s->cap, ncap, __ATOMIC_RELAXED);
	s->grow_at = (u32)((u64)ncap * 85 / 100);
	s->shrink_at = ncap > SHARD_MIN ? ncap / 4 : 0;
	return 1;
}

/* The spill table: the shards (see "Side table"). Inserts a -> val. If a is already there (a stale entry), replaces it and
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
			s->count++;
			__atomic_fetch_add(&g_spill_count, 1, __ATOMIC_RELAXED);
			break;
		}
		if (e->addr == a) {
			*old = *e;
			e->val = val;
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

/* The radix table (see "Side table"). A slot is 0 when empty, else:
   bits 0-27 the node, 28-34 the address's offset in its granule (its low
   OFF_BITS bits, in either tree), 35 set, 36-63 the size. */
static inline u64 slot_make(uintptr_t a, u64 val)
{
	return (val & NODE_MASK) | (u64)(a & ((1u << OFF_BITS) - 1)) << NODE_BITS | SLOT_USED |
	       (val >> NODE_BITS) << SLOT_SIZE_SHIFT;
}

static inline int slot_holds(u64 slot, uintptr_t a)
{
	return slot && ((slot >> NODE_BITS) & ((1u << OFF_BITS) - 1)) == (a & ((1u << OFF_BITS) - 1));
}

static inline u64 slot_val(u64 slot)
{
	return (slot >> SLOT_SIZE_SHIFT) << NODE_BITS | (slot & NODE_MASK);
}

/* Creates *pp (n bytes) unless another thread did. Returns *pp. */
static void *radix_make(void **pp, wsize n)
{
	void *p;
	spin_lock(&g_radix_lock);
	p = __atomic_load_n(pp, __ATOMIC_ACQUIRE);
	if (!p && (p = bump_take(&g_slab, n, RADIX_SLAB)))
		__atomic_store_n(pp, p, __ATOMIC_RELEASE);
	spin_unlock(&g_radix_lock);
	return p;
}

/* a's slot in tree t (0 fine, 1 coarse), creating its mid and leaf if
   create; NULL if a is beyond the tree's reach or memory is short. */
static inline u64 *radix_slot(int t, uintptr_t a, int create)
{
	unsigned g = t ? GRAN_COARSE : GRAN_FINE, top = g + LEAF_BITS + MID_BITS;
	u64 **mid, *leaf, **pm;
	if (a >> (top + ROOT_BITS))
		return NULL;
	mid = __atomic_load_n(&g_radix[t][a >> top], __ATOMIC_ACQUIRE);
	if (__builtin_expect(!mid, 0) &&
	    (!create || !(mid = radix_make((void **)&g_radix[t][a >> top], sizeof(u64 *) << MID_BITS))))
		return NULL;
	pm = &mid[(a >> (g + LEAF_BITS)) & ((1u << MID_BITS) - 1)];
	leaf = __atomic_load_n(pm, __ATOMIC_ACQUIRE);
	if (__builtin_expect(!leaf, 0) && (!create || !(leaf = radix_make((void **)pm, sizeof(u64) << LEAF_BITS))))
		return NULL;
	return &leaf[(a >> g) & ((1u << LEAF_BITS) - 1)];
}

/* Calls f(slot) for every used slot, and page(bytes) for every resident
   page of the table (either may be NULL). Pages never written are not
   read (mincore), which would map them. */
static void radix_each(void (*f)(u64 *slot), void (*page)(u64 bytes))
{
	enum { PAGE_SLOTS = 4096 / sizeof(u64), LEAF_PAGES = (sizeof(u64) << LEAF_BITS) / 4096 };
	unsigned char in[LEAF_PAGES];
	u32 t, r, m, k, j;
	for (t = 0; t < 2; t++) {
		for (r = 0; r < 1u << ROOT_BITS; r++) {
			u64 **mid = __atomic_load_n(&g_radix[t][r], __ATOMIC_ACQUIRE);
			if (!mid)
				continue;
			if (page)
				page(sizeof(u64 *) << MID_BITS);
			for (m = 0; m < 1u << MID_BITS; m++) {
				u64 *leaf = __atomic_load_n(&mid[m], __ATOMIC_ACQUIRE);
				if (!leaf)
					continue;
				if (mincore(leaf, sizeof(u64) << LEAF_BITS, in))
					memset(in, 1, sizeof in);
				for (k = 0; k < LEAF_PAGES; k++) {
					if (!(in[k] & 1))
						continue;
					if (page)
						page(4096);
					for (j = k * PAGE_SLOTS; f && j < (k + 1) * PAGE_SLOTS; j++)
						if (__atomic_load_n(&leaf[j], __ATOMIC_RELAXED))
							f(&leaf[j]);
				}
			}
		}
	}
}

static u64 g_usage_bytes, g_usage_live; /* side_usage's sums: exit writer */
static void usage_page(u64 bytes) { g_usage_bytes += bytes; }
static void usage_slot(u64 *slot) { (void)slot; g_usage_live++; }

/* For WEAVE_STATS: the side table's resident bytes and live entries
   (the mids counted whole). */
static void side_usage(u64 *bytes, u64 *live)
{
	u32 i;
	g_usage_bytes = g_usage_live = 0;
	radix_each(usage_slot, usage_page);
	*bytes = g_usage_bytes;
	*live = g_usage_live;
	for (i = 0; i < NSHARDS; i++) {
		spin_lock(&g_shards[i].lock);
		*bytes += (u64)g_shards[i].cap * sizeof(struct ent);
		*live += g_shards[i].count;
		spin_unlock(&g_shards[i].lock);
	}
}

/* Takes a's entry out of slot sl if it holds one, into *out. */
static inline int slot_take(u64 *sl, uintptr_t a, struct ent *out)
{
	u64 cur;
	if (!sl || !slot_holds(cur = __atomic_load_n(sl, __ATOMIC_RELAXED), a))
		return 0;
	__atomic_store_n(sl, 0, __ATOMIC_RELAXED);
	out->addr = a;
	out->val = slot_val(cur);
	return 1;
}

/* side_insert in tree t. */
static inline __attribute__((always_inline)) int side_put(int t, uintptr_t a, u64 val, struct ent *old)
{
	u64 *sl, cur, want;
	old->addr = 0;
	if ((val >> NODE_BITS) >= SLOT_SIZE_MAX || !(sl = radix_slot(t, a, 1)))
		return spill_insert(a, val, old);
	want = slot_make(a, val);
	cur = __atomic_load_n(sl, __ATOMIC_RELAXED);
	if (slot_holds(cur, a)) {
		old->addr = a;
		old->val = slot_val(cur);
		__atomic_store_n(sl, want, __ATOMIC_RELAXED);
		return 1;
	}
	if (cur)
		return spill_insert(a, val, old); /* another block in the granule */
	/* a may be a stale entry in the spill table, left from a time its
	   granule was taken. */
	if (__atomic_load_n(&g_spill_count, __ATOMIC_RELAXED))
		spill_remove(a, old);
	if (!__atomic_load_n(&g_multi, __ATOMIC_RELAXED)) {
		__atomic_store_n(sl, want, __ATOMIC_RELAXED);
		return 1;
	}
	/* Two threads can race for one empty slot only under an allocator
	   that puts two blocks in a granule: the loser spills, keeping in
	   *old what the spill table held for a. */
	if (__atomic_compare_exchange_n(sl, &cur, want, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return 1;
	return spill_insert(a, val, &(struct ent){0, 0});
}

/* Inserts a -> val (size << NODE_BITS | node) in the tree for its size.
   If a is already there (a stale entry), replaces it and returns the old
   one in *old (else old->addr == 0). Returns 0 when out of memory. */
static inline __attribute__((always_inline)) int side_insert(uintptr_t a, u64 val, struct ent *old)
{
	int t = (val >> NODE_BITS) >= COARSE_MIN, ok;
	struct ent stale;
	/* A stale entry can be in the other tree (a block freed behind the
	   runtime's back, its address now handed out at another size) only if
	   frees can bypass the runtime: not while every free of the process
	   comes through the interposed one. */
	if (__builtin_expect(__atomic_load_n(&g_hidden, __ATOMIC_RELAXED) != HIDDEN_ON, 0) &&
	    slot_take(radix_slot(!t, a, 0), a, &stale)) {
		ok = side_put(t, a, val, old);
		if (!old->addr)
			*old = stale;
		return ok;
	}
	return side_put(t, a, val, old);
}

/* Removes a; returns 1 and its entry if it was there. Only a block's
   own free or realloc removes it, so the slot cannot change between the
   load and the store. Small blocks are the common case: the fine tree
   first. */
static inline __attribute__((always_inline)) int side_remove(uintptr_t a, struct ent *out)
{
	return slot_take(radix_slot(0, a, 0), a, out) || slot_take(radix_slot(1, a, 0), a, out) ||
	       (__atomic_load_n(&g_spill_count, __ATOMIC_RELAXED) && spill_remove(a, out));
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

/* ------------------------------------------------------------- recording */

static inline void bin_count(struct rt_thread *T, u64 size, int is_free)
{
	struct bin *b = T ? T->bins : NULL;
	u32 i = bin_of(size);
	if (__builtin_expect(b != NULL, 1)) {
		if (is_free) {
			b[i].frees++;
			b[i].fbytes += size;
		} else {
			b[i].allocs++;
			b[i].bytes += size;
		}
		return;
	}
	b = &g_shared_bins[i];
	__atomic_fetch_add(is_free ? &b->frees : &b->allocs, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(is_free ? &b->fbytes : &b->bytes, size, __ATOMIC_RELAXED);
}

/* Counts the free of the block of side-table entry e, charged to the node
   that allocated it. T is the calling thread (may be 0). */
static inline __attribute__((always_inline)) void charge_free(struct rt_thread *T, const struct ent *e)
{
	u32 ni = (u32)(e->val & NODE_MASK);
	struct rt_node *n;
	struct heapc *h;
	u64 size = e->val >> NODE_BITS;
	int c;
	if (size == SIZE_SAT)
		size = big_take(e->addr);
	if (!ni) {
		/* Inherited from the parent of a fork: not the child's. */
		__atomic_fetch_add(&g_inh.freed, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&g_inh.freed_bytes, size, __ATOMIC_RELAXED);
		return;
	}
	n = node_at(ni);
	h = n->u.heap;
	c = size_class(size);
	if (T && n->thread == T->num) {
		h->f[c]++;
		h->g[c] += size;
	} else {
		__atomic_fetch_add(&h->rf[c], 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&h->rg[c], size, __ATOMIC_RELAXED);
	}
	bin_count(T, size, 1);
}

/* Records block p of n bytes, allocated at site s. in_rt is set. */
static void note_alloc(struct rt_local *l, const struct __weave_site *s, void *p, u64 n)
{
	struct rt_thread *T = thread_get(l);
	struct rt_node *cur, *a;
	struct heapc *h;
	struct ent old;
	u64 rec = n < SIZE_SAT ? n : SIZE_SAT;
	int c;
	if (!T || !p)
		return;
	cur = (struct rt_node *)(void *)__weave_tls.cur;
	a = cur->u.acache;
	if (__builtin_expect(a->pub.key != s, 0)) {
		if (cur == &rt_boot || !(a = child(T, cur, s, KIND_A)))
			return;
		cur->u.acache = a;
	}
	if (!side_insert((uintptr_t)p, rec << NODE_BITS | a->self, &old))
		return;
	if (old.addr)
		charge_free(T, &old);
	if (rec == SIZE_SAT)
		big_put((uintptr_t)p, n);
	h = a->u.heap;
	c = size_class(n);
	h->a[c]++;
	h->b[c] += n;
	bin_count(T, n, 0);
}

/* Forgets block p (about to be freed). in_rt is set. */
static inline __attribute__((always_inline)) void note_free(struct rt_local *l, void *p)
{
	struct rt_thread *T = thread_get(l);
	struct ent e;
	if (side_remove((uintptr_t)p, &e))
		charge_free(T, &e);
}

/* ------------------------------------------------------- woven interface */

unsigned __weave_cc_index(const struct __weave_node *p, const struct __weave_fn *fn)
{
	__weave_size_t x = ((__weave_size_t)p >> 6) + ((__weave_size_t)fn >> 3) * 0x9e3779b1u;
	return (unsigned)(x ^ (x >> 10)) % __WEAVE_CC_SIZE;
}

struct __weave_frame __weave_enter(const struct __weave_fn *fn)
{
	struct __weave_thread *t = &__weave_tls;
	struct __weave_node *p, *c;
	unsigned d;
	struct __weave_frame f;
	if (__builtin_expect(t->timing, 0))
		return __weave_enter_timed(fn);
	p = t->cur;
	c = p->cache;
	d = t->depth;
	if (__builtin_expect(c->key != fn, 0)) {
		struct __weave_cc *e = &t->cc[__weave_cc_index(p, fn)];
		c = e->child;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (e->parent != p || e->key != fn)
			return __weave_enter_slow(fn);
		p->cache = c;
	}
	if (__builtin_expect(d + 1 >= t->cap, 0))
		return __weave_enter_slow(fn);
	c->calls++;
	t->depth = d + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->stack[d + 1].node = c;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&t->cur, c, __ATOMIC_RELAXED);
	f.parent = p;
	f.depth = d;
	return f;
}

void __weave_leave(struct __weave_frame *f)
{
	struct __weave_thread *t = &__weave_tls;
	if (__builtin_expect(f->parent != 0, 1)) {
		t->depth = f->depth;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		__atomic_store_n(&t->cur, f->parent, __ATOMIC_RELAXED);
	} else if (f->depth & __WEAVE_TIMED) {
		__weave_leave_timed(f->depth);
	}
}

struct __weave_frame __weave_enter_slow(const struct __weave_fn *fn)
{
	struct __weave_thread *t = &__weave_tls;
	struct rt_local *l = &rt_local;
	struct __weave_frame f = {0, t->depth};
	struct rt_thread *T;
	struct __weave_node *p, *c;
	struct __weave_cc *e;
	unsigned d;

	if (l->in_rt)
		return f;
	rt_enter(l);
	T = l->thr;
	if (!T && l->state == ST_NEW)
		T = thread_setup(l);
	if (!T || l->state != ST_LIVE)
		goto out;
	d = t->depth;
	f.depth = d;
	if (d + 1 >= t->cap && !stack_grow(T, t))
		goto out;
	p = t->cur;
	c = p->cache;
	if (c->key != fn) {
		struct rt_node *n = child(T, (struct rt_node *)(void *)p, fn, KIND_F);
		if (!n)
			goto out;
		c = &n->pub;
		p->cache = c;
		e = &rt_cc[__weave_cc_index(p, fn)];
		e->key = 0;
		fence();
		e->child = c;
		e->parent = p;
		fence();
		e->key = fn;
	}
	/* The push, exactly as in __weave_enter. */
	c->calls++;
	t->depth = d + 1;
	fence();
	t->stack[d + 1].node = c;
	fence();
	t->cur = c;
	f.parent = p;
	if (t->timing)
		time_push_stamp(t, d, &f); /* exact mode: a timed frame */
out:
	rt_exit(l);
	return f;
}

int __weave_setjmp_return(struct __weave_frame *f, int v)
{
	struct __weave_thread *t = &__weave_tls;
	unsigned d = f->parent ? f->depth + 1
		     : f->depth & __WEAVE_TIMED ? (f->depth & ~(unsigned)__WEAVE_TIMED) + 1
					       : f->depth;
	/* cap == 0 (thread not set up, or exited): nothing to re-synchronise. */
	if (d < t->cap) {
		if (t->timing)
			time_drop(t, d); /* exact mode: close the frames dropped */
		t->depth = d;
		fence();
		t->cur = t->stack[d].node;
	}
	return v;
}

static inline void *lib_malloc(size_t n);
static inline void lib_free(void *p);

/* The allocation advice. Pattern: if re-entered, call the real function
   only; else set in_rt, call the real function, keep its errno across the
   bookkeeping. */

#define RT_ALLOC(call, size)                                        \
	struct rt_local *l = &rt_local;                             \
	void *r;                                                    \
	int e;                                                      \
	if (__builtin_expect(l->in_rt, 0))                          \
		return call;                                        \
	rt_enter(l);                                                \
	r = call;                                                   \
	if (__builtin_expect(r != NULL, 1)) {                       \
		e = errno;                                          \
		note_alloc(l, s, r, size);                          \
		errno = e;                                          \
	}                                                           \
	rt_exit(l);                                                 \
	return r

void *__weave_malloc(const struct __weave_site *s, wsize n)
{
	RT_ALLOC(lib_malloc(n), n);
}

void *__weave_calloc(const struct __weave_site *s, wsize n, wsize size)
{
	/* Success implies n * size did not overflow. */
	RT_ALLOC(calloc(n, size), (u64)n * size);
}

void *__weave_aligned_alloc(const struct __weave_site *s, wsize align, wsize n)
{
	RT_ALLOC(aligned_alloc(align, n), n);
}

void *__weave_memalign(const struct __weave_site *s, wsize align, wsize n)
{
	RT_ALLOC(memalign(align, n), n);
}

void *__weave_valloc(const struct __weave_site *s, wsize n)
{
	RT_ALLOC(valloc(n), n);
}

void *__weave_pvalloc(const struct __weave_site *s, wsize n)
{
	RT_ALLOC(pvalloc(n), n);
}

char *__weave_strdup(const struct __weave_site *s, const char *str)
{
	RT_ALLOC(strdup(str), strlen(r) + 1);
}

char *__weave_strndup(const struct __weave_site *s, const char *str, wsize n)
{
	RT_ALLOC(strndup(str, n), strlen(r) + 1);
}

int __weave_posix_memalign(const struct __weave_site *s, void **pp, wsize align, wsize n)
{
	struct rt_local *l = &rt_local;
	int rc, e;
	if (l->in_rt)
		return posix_memalign(pp, align, n);
	rt_enter(l);
	rc = posix_memalign(pp, align, n);
	if (rc == 0) {
		e = errno;
		note_alloc(l, s, *pp, n);
		errno = e;
	}
	rt_exit(l);
	return rc;
}

void __weave_free(const struct __weave_site *s, void *p)
{
	struct rt_local *l = &rt_local;
	int e;
	(void)s;
	if (__builtin_expect(l->in_rt, 0)) {
		free(p);
		return;
	}
	rt_enter(l);
	if (p) {
		/* The allocator will read the chunk header (glibc: just below
		   p); let that miss overlap the side table's. */
		__builtin_prefetch((char *)p - sizeof(wsize));
		e = errno;
		note_free(l, p);
		errno = e;
	}
	lib_free(p);
	rt_exit(l);
}

/* realloc and reallocarray (m == 0: realloc(p, n)). */
static void *re_alloc(const struct __weave_site *s, void *p, wsize n, wsize m, int array)
{
	struct rt_local *l = &rt_local;
	struct rt_thread *T;
	struct ent old;
	wsize total = n;
	void *r;
	int e, known;

#define REAL (array ? reallocarray(p, n, m) : realloc(p, n))
	if (l->in_rt)
		return REAL;
	rt_enter(l);
	if (array && __builtin_mul_overflow(n, m, &total)) {
		r = REAL; /* fails with ENOMEM, nothing to record */
		rt_exit(l);
		return r;
	}
	if (!p) {
		r = REAL;
		if (r) {
			e = errno;
			note_alloc(l, s, r, total);
			errno = e;
		}
		rt_exit(l);
		return r;
	}
	/* Forget p before the real call: once it is freed its address may be
	   handed to another thread, which will record it. */
	e = errno;
	T = thread_get(l);
	known = side_remove((uintptr_t)p, &old);
	errno = e;
	r = REAL;
	e = errno;
	if (r || total == 0) {
		/* Moved, resized in place, or (glibc, size 0) freed. */
		if (known)
			charge_free(T, &old);
		if (r)
			note_alloc(l, s, r, total);
	} else if (known) {
		/* Failed: p is still allocated. */
		struct ent stale;
		side_insert(old.addr, old.val, &stale);
	}
	errno = e;
	rt_exit(l);
	return r;
#undef REAL
}

void *__weave_realloc(const struct __weave_site *s, void *p, wsize n)
{
	return re_alloc(s, p, n, 0, 0);
}

void *__weave_reallocarray(const struct __weave_site *s, void *p, wsize n, wsize size)
{
	return re_alloc(s, p, n, size, 1);
}

/* ------------------------------------------- the real allocator, hidden */

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

/* The functions the runtime interposes, as they were before it. */
static struct {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*reallocarray)(void *, size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	void (*exit_)(int);
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execv)(const char *, char *const[]);
	int (*execvp)(const char *, char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*fexecve)(int, char *const[], char *const[]);
	int (*execveat)(int, const char *, char *const[], char *const[], int);
} g_real;
static int g_real_state; /* 0: not looked up, 1: being looked up, 2: done */

/* Allocations made while dlsym runs (in the thread looking up): a static
   buffer, never freed. Each block has its size in the 16 bytes before it. */
static char g_boot[16384] __attribute__((aligned(64)));
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

static void real_resolve(void)
{
	struct rt_local *l = &rt_local;
	int st = 0;
	if (!__atomic_compare_exchange_n(&g_real_state, &st, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(&g_real_state, __ATOMIC_ACQUIRE) != 2)
			sched_yield();
		return;
	}
	l->resolving = 1;
	fence();
#define NEXT(f, fallback)                                                  \
	do {                                                               \
		*(void **)&g_real.f = next_sym(#f);                        \
		if (!g_real.f)                                             \
			g_real.f = fallback;                               \
	} while (0)
	NEXT(malloc, __libc_malloc);
	NEXT(free, __libc_free);
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
	fence();
	l->resolving = 0;
	__atomic_store_n(&g_real_state, 2, __ATOMIC_RELEASE);
}

static inline void real_ready(void)
{
	if (__builtin_expect(__atomic_load_n(&g_real_state, __ATOMIC_ACQUIRE) != 2, 0))
		real_resolve();
}

/* The real function f (not to be used in the thread looking it up). */
#define REAL_FN(f) (real_ready(), g_real.f)

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

/* The static sites of hidden allocations, by operation. */
#define HSITE(op) [op] = {0, "(hidden)", 0, 0, op, 0, 0, 0}
static const struct __weave_site rt_hidden[__WEAVE_PVALLOC + 1] = {
	HSITE(__WEAVE_MALLOC),	      HSITE(__WEAVE_CALLOC),	    HSITE(__WEAVE_REALLOC),
	HSITE(__WEAVE_REALLOCARRAY),  HSITE(__WEAVE_ALIGNED_ALLOC), HSITE(__WEAVE_POSIX_MEMALIGN),
	HSITE(__WEAVE_MEMALIGN),      HSITE(__WEAVE_VALLOC),	    HSITE(__WEAVE_PVALLOC),
};
#undef HSITE

static inline int is_hidden_site(const struct __weave_site *s)
{
	return s >= rt_hidden && s < rt_hidden + sizeof rt_hidden / sizeof rt_hidden[0];
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
		 rt_is_active();
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
	return on;
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
   (hidden_decide checked that), which saves a call and its checks. */
static inline int real_direct(void)
{
#if RT_INTERPOSE
	return __atomic_load_n(&g_hidden, __ATOMIC_RELAXED) == HIDDEN_ON &&
	       __atomic_load_n(&g_real_state, __ATOMIC_ACQUIRE) == 2;
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
		e = errno;                                          \
		note_alloc(l, &rt_hidden[op], r, size);             \
		errno = e;                                          \
	}                                                           \
	rt_exit(l);                                                 \
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
	HIDDEN_ALLOC(__WEAVE_MEMALIGN, REAL_FN(memalign)(align, n), n);
}

__attribute__((weak)) void *aligned_alloc(size_t align, size_t n)
{
	if (__builtin_expect(rt_local.resolving, 0))
		return boot_alloc(n, align);
	HIDDEN_ALLOC(__WEAVE_ALIGNED_ALLOC, real_aligned_alloc(align, n), n);
}

__attribute__((weak)) void *valloc(size_t n)
{
	if (__builtin_expect(rt_local.resolving, 0))
		return boot_alloc(n, 4096);
	HIDDEN_ALLOC(__WEAVE_VALLOC, REAL_FN(valloc)(n), n);
}

__attribute__((weak)) void *pvalloc(size_t n)
{
	if (__builtin_expect(rt_local.resolving, 0))
		return boot_alloc((n + 4095) & ~(size_t)4095, 4096);
	HIDDEN_ALLOC(__WEAVE_PVALLOC, REAL_FN(pvalloc)(n), n);
}

__attribute__((weak)) int posix_memalign(void **pp, size_t align, size_t n)
{
	struct rt_local *l = &rt_local;
	int rc, e;
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
	if (rc == 0) {
		e = errno;
		note_alloc(l, &rt_hidden[__WEAVE_POSIX_MEMALIGN], *pp, n);
		errno = e;
	}
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
		__builtin_prefetch((char *)p - sizeof(wsize));
		e = errno;
		note_free(l, p);
		errno = e;
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
	return re_alloc(&rt_hidden[__WEAVE_REALLOC], p, n, 0, 0);
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
	return re_alloc(&rt_hidden[__WEAVE_REALLOCARRAY], p, n, m, 1);
}
#endif /* RT_INTERPOSE */

/* ------------------------------------------------------------ exit output */

/* Buffered output to a file descriptor. */
struct out {
	int fd;
	int err;
	char *buf;
	wsize len, cap;
	u64 records;
};

static void out_flush(struct out *o)
{
	wsize off = 0;
	while (off < o->len && !o->err) {
		ssize_t n = write(o->fd, o->buf + off, o->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			o->err = n < 0 ? errno : EIO;
		else
			off += (wsize)n;
	}
	o->len = 0;
}

static void out_mem(struct out *o, const char *s, wsize n)
{
	if (o->fd < 0)
		return; /* counting only */
	while (n) {
		wsize k = o->cap - o->len;
		if (!k) {
			out_flush(o);
			continue;
		}
		if (k > n)
			k = n;
		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
	}
}

static void out_str(struct out *o, const char *s)
{
	out_mem(o, s, strlen(s));
}

static void out_ch(struct out *o, char c)
{
	out_mem(o, &c, 1);
}

static void out_u64(struct out *o, u64 v)
{
	char b[24];
	int i = sizeof b;
	do
		b[--i] = (char)('0' + v % 10);
	while (v /= 10);
	out_mem(o, b + i, sizeof b - (wsize)i);
}

/* A field: " v", or " -1" when v is ~0. */
static void out_field(struct out *o, u64 v)
{
	out_ch(o, ' ');
	if (v == ~0ull)
		out_str(o, "-1");
	else
		out_u64(o, v);
}

static void out_commas(struct out *o, u64 v)
{
	char b[32];
	int i = sizeof b, n = 0;
	do {
		if (n && n % 3 == 0)
			b[--i] = ',';
		b[--i] = (char)('0' + v % 10);
		n++;
	} while (v /= 10);
	out_mem(o, b + i, sizeof b - (wsize)i);
}

/* Temporary memory of the exit writer. */
struct tmpmem {
	void *p[16];
	wsize n[16];
	int k;
};

static void *tmp_alloc(struct tmpmem *m, wsize n)
{
	void *p;
	if (m->k == 16 || !(p = rt_map(n ? n : 1)))
		return NULL;
	m->p[m->k] = p;
	m->n[m->k++] = n ? n : 1;
	return p;
}

static void tmp_free(struct tmpmem *m)
{
	while (m->k > 0) {
		m->k--;
		munmap(m->p[m->k], m->n[m->k]);
	}
}

/* Pointer -> dense id. */
struct pmap {
	const void **key;
	u32 *id;
	u32 mask, n;
};

static int pmap_init(struct pmap *m, struct tmpmem *tm, u32 want)
{
	u32 cap = 64;
	while (cap < 2 * want + 64)
		cap *= 2;
	m->key = tmp_alloc(tm, (wsize)cap * sizeof *m->key);
	m->id = tmp_alloc(tm, (wsize)cap * sizeof *m->id);
	m->mask = cap - 1;
	m->n = 0;
	return m->key && m->id;
}

static u32 pmap_get(struct pmap *m, const void *k, int *fresh)
{
	u32 i = (u32)mix64((u64)(uintptr_t)k) & m->mask;
	for (; m->key[i]; i = (i + 1) & m->mask) {
		if (m->key[i] == k) {
			*fresh = 0;
			return m->id[i];
		}
	}
	m->key[i] = k;
	*fresh = 1;
	return m->id[i] = m->n++;
}

struct writer {
	struct out *o;
	struct pmap strs; /* keyed by string content, see intern */
	struct pmap fns, sites;
	const struct __weave_fn **fn_of;   /* by F id */
	const struct __weave_site **site_of; /* by A id */
};

static u32 str_hash(const char *s)
{
	u32 h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Returns the id of string s, writing an S record the first time. */
static u32 intern(struct writer *w, const char *s)
{
	struct pmap *m = &w->strs;
	u32 i;
	const char *c;
	if (!s)
		s = "?";
	for (i = str_hash(s) & m->mask; m->key[i]; i = (i + 1) & m->mask)
		if (strcmp(m->key[i], s) == 0)
			return m->id[i];
	m->key[i] = s;
	m->id[i] = m->n++;
	out_str(w->o, "S");
	out_field(w->o, m->id[i]);
	out_ch(w->o, ' ');
	for (c = s; *c; c++) {
		if (*c == '\\')
			out_str(w->o, "\\\\");
		else if (*c == '\n')
			out_str(w->o, "\\n");
		else
			out_ch(w->o, *c);
	}
	out_ch(w->o, '\n');
	w->o->records++;
	return m->id[i];
}

static const char *op_name(unsigned op)
{
	static const char *const names[] = {
		"?", "malloc", "calloc", "realloc", "reallocarray", "free", "strdup", "strndup",
		"aligned_alloc", "posix_memalign", "memalign", "valloc", "pvalloc",
	};
	return op < sizeof names / sizeof names[0] ? names[op] : "?";
}

/* Interns fn's strings and returns its F id (~0 for none). */
static u32 note_fn(struct writer *w, const struct __weave_fn *fn)
{
	int fresh;
	u32 id;
	if (!fn)
		return ~0u;
	id = pmap_get(&w->fns, fn, &fresh);
	if (fresh) {
		w->fn_of[id] = fn;
		intern(w, fn->name);
		intern(w, fn->file);
	}
	return id;
}

static void note_site(struct writer *w, const struct __weave_site *s)
{
	int fresh;
	u32 id = pmap_get(&w->sites, s, &fresh);
	if (!fresh)
		return;
	w->site_of[id] = s;
	note_fn(w, s->fn);
	intern(w, s->file);
	intern(w, op_name(s->op));
	if (s->type)
		intern(w, s->type);
}

static void heap_read(const struct heapc *h, u64 v[16])
{
	int c;
	for (c = 0; c < 4; c++) {
		v[c] = h->a[c];
		v[4 + c] = h->b[c];
		v[8 + c] = h->f[c] + __atomic_load_n(&h->rf[c], __ATOMIC_RELAXED);
		v[12 + c] = h->g[c] + __atomic_load_n(&h->rg[c], __ATOMIC_RELAXED);
	}
}

struct leak {
	u32 node;
	u64 bytes, blocks;
};

struct totals {
	u64 allocs, frees, bytes, fbytes, live_bytes, live_blocks;
	u64 nodes, leak_nodes;
	u32 nleaks;
	struct leak *leaks;
};

/* Appends /proc/self/cmdline, arguments separated by spaces. */
static void out_cmdline(struct out *o)
{
	char b[4096];
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC), sep = 0;
	ssize_t n, i;
	if (fd < 0)
		return;
	while ((n = read(fd, b, sizeof b)) > 0) {
		for (i = 0; i < n; i++) {
			if (!b[i]) {
				sep = 1;
				continue;
			}
			if (sep)
				out_ch(o, ' ');
			sep = 0;
			out_ch(o, b[i] == '\n' || b[i] == '\r' ? ' ' : b[i]);
		}
	}
	close(fd);
}

/* Writes the profile to o and fills t. g_lock held. */
static void write_profile(struct out *o, struct totals *t, struct tmpmem *tm)
{
	struct writer w = {.o = o};
	struct rt_thread *T;
	u32 maxidx = __atomic_load_n(&g_node_next, __ATOMIC_RELAXED), *ids, nid = 0, i, k;
	u64 nnodes = 0, v[16];
	struct bin *bins;

	if (maxidx > MAX_NODES)
		maxidx = MAX_NODES;
	for (T = g_threads; T; T = T->next) {
		T->snap = __atomic_load_n(&T->nnodes, __ATOMIC_ACQUIRE);
		nnodes += T->snap;
	}
	t->nodes = nnodes;
	if (g_cfg_leaks)
		t->leaks = tmp_alloc(tm, g_cfg_leaks * sizeof *t->leaks);
	ids = tmp_alloc(tm, (wsize)maxidx * sizeof *ids + 4);
	bins = tmp_alloc(tm, NBINS * sizeof *bins);
	if (!ids || !bins || !pmap_init(&w.fns, tm, (u32)nnodes) || !pmap_init(&w.sites, tm, (u32)nnodes) ||
	    !pmap_init(&w.strs, tm, (u32)nnodes * 3 + 16) ||
	    !(w.fn_of = tmp_alloc(tm, (wsize)(w.fns.mask + 1) * sizeof *w.fn_of)) ||
	    !(w.site_of = tmp_alloc(tm, (wsize)(w.sites.mask + 1) * sizeof *w.site_of))) {
		o->err = ENOMEM;
		return;
	}

	out_str(o, "weave profile 1\n");
	out_str(o, "M pid");
	out_field(o, (u64)getpid());
	/* Second, where save_profile looks for it (see exec_profile). */
	out_str(o, "\nM end ");
	out_str(o, g_end);
	if (g_end_sig)
		out_field(o, (u64)g_end_sig);
	out_str(o, "\nM ppid");
	out_field(o, (u64)getppid());
	out_str(o, "\nM argv ");
	out_cmdline(o);
	out_str(o, "\nM start_ns");
	out_field(o, g_start_ns);
	out_str(o, "\nM end_ns");
	out_field(o, now_ns());
	out_str(o, "\nM complete ");
	out_ch(o, g_complete ? '1' : '0');
	out_str(o, "\nM runtime");
	out_field(o, RT_ABI);
	out_str(o, "\nM hidden ");
	out_ch(o, hidden_on() ? '1' : '0');
	out_ch(o, '\n');
	o->records += 9;
	if (g_forked) {
		out_str(o, "M inherited");
		out_field(o, g_inh.blocks);
		out_field(o, g_inh.bytes);
		out_str(o, "\nM inherited_freed");
		out_field(o, __atomic_load_n(&g_inh.freed, __ATOMIC_RELAXED));
		out_field(o, __atomic_load_n(&g_inh.freed_bytes, __ATOMIC_RELAXED));
		out_ch(o, '\n');
		o->records += 2;
	}

	/* Pass 1: strings, functions, sites. */
	for (T = g_threads; T; T = T->next) {
		for (i = T->first, k = 0; k < T->snap; k++) {
			struct rt_node *n = node_at(i);
			if (n->kind == KIND_F)
				note_fn(&w, n->pub.key);
			else if (n->kind == KIND_A)
				note_site(&w, n->pub.key);
			if (k + 1 < T->snap)
				i = n->next;
		}
	}
	for (i = 0; i < w.fns.n; i++) {
		const struct __weave_fn *fn = w.fn_of[i];
		out_ch(o, 'F');
		out_field(o, i);
		out_field(o, intern(&w, fn->name));
		out_field(o, intern(&w, fn->file));
		out_field(o, fn->line);
		out_ch(o, '\n');
	}
	for (i = 0; i < w.sites.n; i++) {
		const struct __weave_site *s = w.site_of[i];
		int fresh;
		out_ch(o, 'A');
		out_field(o, i);
		out_field(o, s->fn ? pmap_get(&w.fns, s->fn, &fresh) : ~0ull);
		out_field(o, intern(&w, s->file));
		out_field(o, s->line);
		out_field(o, s->col);
		out_field(o, intern(&w, op_name(s->op)));
		out_field(o, s->type ? intern(&w, s->type) : ~0ull);
		out_field(o, s->type_size);
		if (is_hidden_site(s))
			out_str(o, " 1"); /* flags: hidden */
		out_ch(o, '\n');
	}
	o->records += w.fns.n + w.sites.n;
	for (T = g_threads; T; T = T->next) {
		out_ch(o, 'T');
		out_field(o, T->num);
		out_field(o, (u64)T->tid);
		out_ch(o, '\n');
		o->records++;
	}

	/* Pass 2: nodes. A parent is always created before its children, by
	   the same thread. */
	for (T = g_threads; T; T = T->next) {
		for (i = T->first, k = 0; k < T->snap; k++) {
			struct rt_node *n = node_at(i);
			int fresh;
			ids[i] = nid++;
			out_ch(o, 'N');
			out_field(o, ids[i]);
			out_field(o, n->kind == KIND_R ? ~0ull : ids[n->parent]);
			out_field(o, n->thread);
			out_ch(o, ' ');
			out_ch(o, "RFA"[n->kind]);
			out_field(o, n->kind == KIND_R ? ~0ull
				     : pmap_get(n->kind == KIND_F ? &w.fns : &w.sites, n->pub.key, &fresh));
			out_ch(o, '\n');
			o->records++;
			if (k + 1 < T->snap)
				i = n->next;
		}
	}

	/* Pass 3: counters, totals, leaks. */
	for (T = g_threads; T; T = T->next) {
		for (i = T->first, k = 0; k < T->snap; k++) {
			struct rt_node *n = node_at(i);
			u64 calls = n->pub.calls;
			if (n->kind == KIND_F && calls) {
				out_ch(o, 'C');
				out_field(o, ids[i]);
				out_field(o, calls);
				out_ch(o, '\n');
				o->records++;
			}
			if (n->kind == KIND_A) {
				u64 nz = 0, a = 0, b = 0, f = 0, g = 0;
				int c;
				heap_read(n->u.heap, v);
				for (c = 0; c < 16; c++)
					nz |= v[c];
				if (nz) {
					out_ch(o, 'H');
					out_field(o, ids[i]);
					for (c = 0; c < 16; c++)
						out_field(o, v[c]);
					out_ch(o, '\n');
					o->records++;
				}
				for (c = 0; c < 4; c++) {
					a += v[c];
					b += v[4 + c];
					f += v[8 + c];
					g += v[12 + c];
				}
				t->allocs += a;
				t->bytes += b;
				t->frees += f;
				t->fbytes += g;
				if (a > f) {
					/* Keep the g_cfg_leaks largest, by bytes then
					   blocks, in t->leaks (sorted). */
					struct leak L = {i, b > g ? b - g : 0, a - f};
					u32 j;
					t->leak_nodes++;
					if (t->leaks) {
						for (j = t->nleaks; j > 0; j--) {
							struct leak *p = &t->leaks[j - 1];
							if (p->bytes > L.bytes || (p->bytes == L.bytes && p->blocks >= L.blocks))
								break;
							if (j < g_cfg_leaks)
								t->leaks[j] = *p;
						}
						if (j < g_cfg_leaks) {
							t->leaks[j] = L;
							if (t->nleaks < g_cfg_leaks)
								t->nleaks++;
						}
					}
				}
			}
			if (k + 1 < T->snap)
				i = n->next;
		}
	}
	t->live_blocks = t->allocs > t->frees ? t->allocs - t->frees : 0;
	t->live_bytes = t->bytes > t->fbytes ? t->bytes - t->fbytes : 0;

	/* Bins. */
	for (i = 0; i < NBINS; i++) {
		bins[i].allocs = __atomic_load_n(&g_shared_bins[i].allocs, __ATOMIC_RELAXED);
		bins[i].frees = __atomic_load_n(&g_shared_bins[i].frees, __ATOMIC_RELAXED);
		bins[i].bytes = __atomic_load_n(&g_shared_bins[i].bytes, __ATOMIC_RELAXED);
		bins[i].fbytes = __atomic_load_n(&g_shared_bins[i].fbytes, __ATOMIC_RELAXED);
	}
	for (T = g_threads; T; T = T->next) {
		if (!T->bins)
			continue;
		for (i = 0; i < NBINS; i++) {
			bins[i].allocs += T->bins[i].allocs;
			bins[i].frees += T->bins[i].frees;
			bins[i].bytes += T->bins[i].bytes;
			bins[i].fbytes += T->bins[i].fbytes;
		}
	}
	for (i = 0; i < NBINS; i++) {
		if (!(bins[i].allocs | bins[i].frees))
			continue;
		out_ch(o, 'B');
		out_field(o, i);
		out_field(o, bins[i].allocs);
		out_field(o, bins[i].frees);
		out_field(o, bins[i].bytes);
		out_field(o, bins[i].fbytes);
		out_ch(o, '\n');
		o->records++;
	}
	time_write(o, ids, tm);
	out_ch(o, 'E');
	out_field(o, o->records);
	out_ch(o, '\n');
}

/* A fixed-capacity string. */
struct sbuf {
	char s[4200];
	wsize n;
};

static void sb_str(struct sbuf *b, const char *s)
{
	wsize k = strlen(s);
	if (k > sizeof b->s - 1 - b->n)
		k = sizeof b->s - 1 - b->n;
	memcpy(b->s + b->n, s, k);
	b->n += k;
	b->s[b->n] = 0;
}

static void sb_mem(struct sbuf *b, const char *s, wsize k)
{
	if (k > sizeof b->s - 1 - b->n)
		k = sizeof b->s - 1 - b->n;
	memcpy(b->s + b->n, s, k);
	b->n += k;
	b->s[b->n] = 0;
}

static void sb_u64(struct sbuf *b, u64 v)
{
	char d[24];
	int i = sizeof d;
	do
		d[--i] = (char)('0' + v % 10);
	while (v /= 10);
	sb_mem(b, d + i, sizeof d - (wsize)i);
}

/* The program's name: basename of /proc/self/exe, else of argv[0]. */
static void prog_name(struct sbuf *b)
{
	char p[4096];
	const char *base;
	ssize_t n = readlink("/proc/self/exe", p, sizeof p - 1);
	wsize k;
	if (n <= 0) {
		int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, p, sizeof p - 1);
		if (fd >= 0)
			close(fd);
	}
	if (n <= 0) {
		sb_str(b, "prog");
		return;
	}
	p[n] = 0;
	k = strlen(p);
	if (k > 10 && strcmp(p + k - 10, " (deleted)") == 0)
		p[k - 10] = 0;
	base = strrchr(p, '/');
	base = base ? base + 1 : p;
	sb_str(b, *base ? base : "prog");
}

/* Writes the profile into the file chosen by WEAVE_OUT (see the top
   comment); path gets the final name. Returns 0, or -1 with errno set. */
/* Whether path holds a profile this process wrote before an exec (a
   former image of the same pid): its first lines say so. */
static int exec_profile(const char *path)
{
	char want[96], got[96];
	struct sbuf w = {.n = 0};
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	if (fd < 0)
		return 0;
	sb_str(&w, "weave profile 1\nM pid ");
	sb_u64(&w, (u64)getpid());
	sb_str(&w, "\nM end exec\n");
	memcpy(want, w.s, w.n);
	n = read(fd, got, w.n);
	close(fd);
	return n == (ssize_t)w.n && memcmp(want, got, w.n) == 0;
}

static int save_profile(struct sbuf *path, struct totals *t, struct tmpmem *tm)
{
	struct sbuf tmp = {.n = 0}, base = {.n = 0};
	struct out o = {.fd = -1};
	const char *slash;
	int fd, e, replace = 0;
	u64 pid = (u64)getpid();

	if (g_prev_path[0]) {
		/* This process's provisional profile: replace it. */
		sb_str(path, g_prev_path);
		replace = 1;
	} else if (g_cfg_out_set) {
		const char *c;
		for (c = g_cfg_out; *c; c++) {
			if (c[0] == '%' && c[1] == 'p') {
				sb_u64(path, pid);
				c++;
			} else {
				sb_mem(path, c, 1);
			}
		}
		replace = !exec_profile(path->s);
	} else {
		sb_str(path, "weave-");
		prog_name(path);
		sb_str(path, ".");
		sb_u64(path, pid);
		sb_str(path, ".prof");
	}
	sb_str(&base, path->s);
	slash = strrchr(path->s, '/');
	if (slash)
		sb_mem(&tmp, path->s, (wsize)(slash + 1 - path->s));
	sb_str(&tmp, ".");
	sb_str(&tmp, slash ? slash + 1 : path->s);
	sb_str(&tmp, ".tmp.");
	sb_u64(&tmp, pid);

	o.buf = tmp_alloc(tm, 1 << 16);
	o.cap = 1 << 16;
	if (!o.buf) {
		errno = ENOMEM;
		return -1;
	}
	fd = open(tmp.s, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		return -1;
	o.fd = fd;
	write_profile(&o, t, tm);
	out_flush(&o);
	if (close(fd) != 0 && !o.err)
		o.err = errno;
	if (o.err) {
		unlink(tmp.s);
		errno = o.err;
		return -1;
	}
	if (replace) {
		if (rename(tmp.s, path->s) != 0) {
			e = errno;
			unlink(tmp.s);
			errno = e;
			return -1;
		}
		return 0;
	}
	/* Never replace another run's profile: link() fails if the name
	   exists; try weave-<prog>.<pid>.<n>.prof (<name>.<n>.prof) next. */
	for (u32 n = 1;; n++) {
		if (link(tmp.s, path->s) == 0)
			break;
		e = errno;
		if (e != EEXIST) {
			/* No hard links here: reserve the name, then rename. */
			fd = open(path->s, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
			if (fd >= 0) {
				close(fd);
				if (rename(tmp.s, path->s) == 0)
					return 0;
				e = errno;
				unlink(path->s);
				unlink(tmp.s);
				errno = e;
				return -1;
			}
			if (errno != EEXIST) {
				unlink(tmp.s);
				errno = e;
				return -1;
			}
		}
		if (n > 1000) {
			unlink(tmp.s);
			errno = EEXIST;
			return -1;
		}
		path->n = 0;
		if (base.n > 5 && strcmp(base.s + base.n - 5, ".prof") == 0) {
			sb_mem(path, base.s, base.n - 5);
			sb_str(path, ".");
			sb_u64(path, n);
			sb_str(path, ".prof");
		} else {
			sb_str(path, base.s);
			sb_str(path, ".");
			sb_u64(path, n);
		}
	}
	unlink(tmp.s);
	return 0;
}

/* Totals only, when no profile is written. g_lock held. */
static void count_only(struct totals *t, struct tmpmem *tm)
{
	struct out o = {.fd = -1};
	write_profile(&o, t, tm);
}

static const char *errdesc(int e)
{
	const char *s = strerrordesc_np(e);
	return s ? s : "unknown error";
}

static void summary(struct totals *t, const char *path, int perr)
{
	static char buf[8192];
	struct out o = {.fd = 2, .buf = buf, .cap = sizeof buf};
	const char *P = "==weave== ";
	u32 i;

	out_str(&o, P);
	out_str(&o, "HEAP SUMMARY:\n");
	if (!g_complete) {
		out_str(&o, P);
		out_str(&o, "    (incomplete: written when the process got signal ");
		out_u64(&o, (u64)g_end_sig);
		out_str(&o, ")\n");
	}
	out_str(&o, P);
	out_str(&o, "    in use at exit: ");
	out_commas(&o, t->live_bytes);
	out_str(&o, " bytes in ");
	out_commas(&o, t->live_blocks);
	out_str(&o, " blocks\n");
	out_str(&o, P);
	out_str(&o, "  total heap usage: ");
	out_commas(&o, t->allocs);
	out_str(&o, " allocs, ");
	out_commas(&o, t->frees);
	out_str(&o, " frees, ");
	out_commas(&o, t->bytes);
	out_str(&o, " bytes allocated\n");
	out_str(&o, P);
	out_ch(&o, '\n');
	if (!t->live_blocks) {
		out_str(&o, P);
		out_str(&o, "All heap blocks were freed -- no leaks are possible\n");
	} else if (t->nleaks) {
		out_str(&o, P);
		out_str(&o, "top leaks:\n");
		for (i = 0; i < t->nleaks; i++) {
			struct rt_node *a = node_at(t->leaks[i].node), *n;
			const struct __weave_site *s = a->pub.key;
			int depth = 0;
			out_str(&o, P);
			out_str(&o, "  ");
			out_commas(&o, t->leaks[i].bytes);
			out_str(&o, " bytes in ");
			out_commas(&o, t->leaks[i].blocks);
			out_str(&o, " blocks at ");
			if (is_hidden_site(s)) {
				out_str(&o, "(hidden ");
				out_str(&o, op_name(s->op));
				out_ch(&o, ')');
			} else {
				out_str(&o, s->file ? s->file : "?");
				out_ch(&o, ':');
				out_u64(&o, s->line);
			}
			for (n = node_at(a->parent); n->kind == KIND_F; n = node_at(n->parent)) {
				const struct __weave_fn *fn = n->pub.key;
				if (depth == 8) {
					out_str(&o, " <- ...");
					break;
				}
				out_str(&o, depth++ ? " <- " : " ");
				out_str(&o, fn->name ? fn->name : "?");
			}
			if (!depth && s->fn) {
				/* Charged to the thread's root: no woven frame. */
				out_ch(&o, ' ');
				out_str(&o, s->fn->name ? s->fn->name : "?");
			} else if (!depth) {
				out_str(&o, " (unwoven)"); /* a hidden one, outside woven code */
			}
			out_ch(&o, '\n');
		}
		if (t->leak_nodes > t->nleaks) {
			out_str(&o, P);
			out_str(&o, "  ... and ");
			out_commas(&o, t->leak_nodes - t->nleaks);
			out_str(&o, " more\n");
		}
	}
	if (g_cfg_stats) {
		u64 tab = 0, live = 0;
		side_usage(&tab, &live);
		out_str(&o, P);
		out_str(&o, "runtime: ");
		out_commas(&o, t->nodes);
		out_str(&o, " nodes (");
		out_u64(&o, sizeof(struct rt_node));
		out_str(&o, " bytes each), side table ");
		out_commas(&o, tab);
		out_str(&o, " bytes for ");
		out_commas(&o, live);
		out_str(&o, " live blocks");
		if (live) {
			u64 x = tab * 100 / live;
			out_str(&o, " (");
			out_u64(&o, x / 100);
			out_ch(&o, '.');
			out_ch(&o, (char)('0' + x / 10 % 10));
			out_ch(&o, (char)('0' + x % 10));
			out_str(&o, " bytes per block)");
		}
		out_str(&o, ", ");
		out_u64(&o, g_nthreads);
		out_str(&o, " threads\n");
	}
	if (path && !perr) {
		out_str(&o, P);
		out_str(&o, "profile written to ");
		out_str(&o, path);
		out_str(&o, " (weave report ");
		out_str(&o, path);
		out_str(&o, ")\n");
	} else if (path) {
		out_str(&o, P);
		out_str(&o, "cannot write profile ");
		out_str(&o, path);
		out_str(&o, ": ");
		out_str(&o, errdesc(perr));
		out_ch(&o, '\n');
	}
	out_flush(&o);
}

/* weave links the runtime into every executable and shared object, so a
   process may hold several copies. The dynamic linker binds every reference
   to an exported __weave_* symbol, from all of them, to the first definition
   in lookup order: that copy is active; the others' constructor and
   destructor do nothing. Read through the GOT (-fPIC), __weave_rt_self is
   the active copy's and holds the address of its rt_self_mark. */
static const char rt_self_mark;
const void *const volatile __weave_rt_self = &rt_self_mark;
static int rt_is_active(void) { return __weave_rt_self == (const void *)&rt_self_mark; }

/* ------------------------------------------------------------ ways out */

enum { LOCK_WAIT, LOCK_TRY, LOCK_ONCE };

/* Takes g_lock for a writer: LOCK_WAIT blocks; LOCK_TRY (a signal
   handler, _exit) tries for about a second; LOCK_ONCE (this thread was
   inside the runtime, and may hold it) tries once. Without the lock the
   writer goes on: it reads the counts as they are anyway. Returns whether
   it holds the lock. */
static int lock_for_exit(int mode)
{
	int i;
	if (mode == LOCK_WAIT) {
		pthread_mutex_lock(&g_lock);
		return 1;
	}
	for (i = 0; i < (mode == LOCK_TRY ? 200 : 1); i++) {
		struct timespec ts = {0, 5000000};
		if (pthread_mutex_trylock(&g_lock) == 0)
			return 1;
		if (mode == LOCK_TRY)
			nanosleep(&ts, NULL);
	}
	return 0;
}

/* Writes the profile and prints the summary, once (see "fork, exec and
   the ways out"). final: the process ends here (else provisional: exec,
   crash); complete: M complete; how and sig: M end. */
static void rt_finish(int final, int complete, const char *how, int sig, int mode)
{
	struct rt_local *l = &rt_local;
	struct totals t;
	struct tmpmem tm = {.k = 0};
	struct sbuf path = {.n = 0};
	int was = l->in_rt, perr = 0, save, st, locked, e = errno;

	if (!rt_is_active())
		return;
	if (__atomic_load_n(&g_pid, __ATOMIC_RELAXED) && (int)getpid() != g_pid)
		return; /* a vfork child, or a clone the fork handlers missed */
	st = __atomic_load_n(&g_finished, __ATOMIC_ACQUIRE);
	do {
		if (st == FIN_FINAL || st == FIN_PROV_BUSY)
			return;
	} while (!__atomic_compare_exchange_n(&g_finished, &st, final ? FIN_FINAL : FIN_PROV_BUSY, 0,
					      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	rt_enter(l);
	pthread_once(&g_once, rt_global_init);
	rt_config();
	if (!was)
		time_finish(); /* takes g_lock */
	locked = lock_for_exit(was ? LOCK_ONCE : mode);
	g_end = how;
	g_end_sig = sig;
	g_complete = complete;
	memset(&t, 0, sizeof t);
	save = !g_cfg_out_set || g_cfg_out[0];
	if (save && save_profile(&path, &t, &tm) != 0)
		perr = errno ? errno : EIO;
	if (!save || perr) {
		tmp_free(&tm);
		memset(&t, 0, sizeof t);
		count_only(&t, &tm);
	}
	if (g_cfg_summary)
		summary(&t, save ? path.s : NULL, perr);
	if (!final && save && !perr && path.n < sizeof g_prev_path) {
		memcpy(g_prev_path, path.s, path.n);
		g_prev_path[path.n] = 0;
	}
	if (locked)
		pthread_mutex_unlock(&g_lock);
	tmp_free(&tm);
	if (!final)
		__atomic_store_n(&g_finished, FIN_PROV, __ATOMIC_RELEASE);
	fence();
	l->in_rt = was;
	errno = e;
}

/* Crash signals. */
static const int rt_crash_sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};

static void rt_crash(int sig, siginfo_t *si, void *uc)
{
	struct sigaction dfl;
	int e = errno;
	(void)uc;
	rt_finish(0, 0, "signal", sig, LOCK_TRY);
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	/* A fault happens again when the handler returns; a signal that was
	   sent (abort's included) is sent again, and stays pending until
	   then. Either way the default action ends the process. */
	if (!si || si->si_code <= 0)
		raise(sig);
	errno = e;
}

/* Installs rt_crash for each crash signal whose disposition is SIG_DFL. */
static void rt_crash_install(void)
{
	static int done;
	struct sigaction sa, old;
	unsigned i, n = sizeof rt_crash_sigs / sizeof rt_crash_sigs[0];
	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = rt_crash;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < n; i++)
		sigaddset(&sa.sa_mask, rt_crash_sigs[i]);
	for (i = 0; i < n; i++) {
		if (sigaction(rt_crash_sigs[i], NULL, &old) != 0)
			continue;
		if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
			sigaction(rt_crash_sigs[i], &sa, NULL);
	}
}

/* _exit and _Exit (the same function in glibc). */
static __attribute__((noreturn)) void rt_exit_now(int status)
{
	rt_finish(1, 1, "_exit", 0, LOCK_TRY);
	if (REAL_FN(exit_))
		g_real.exit_(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

__attribute__((weak, noreturn)) void _exit(int status)
{
	rt_exit_now(status);
}

__attribute__((weak, noreturn)) void _Exit(int status)
{
	rt_exit_now(status);
}

static void rt_quick_exit(void)
{
	rt_finish(1, 1, "quick_exit", 0, LOCK_WAIT);
}

/* exec*: the profile first (see "fork, exec and the ways out"). Without
   the real functions (dlsym missing) the system calls do it, and a PATH
   search like glibc's, without its fallback to /bin/sh for scripts. */
static void before_exec(void)
{
	rt_finish(0, 1, "exec", 0, LOCK_WAIT);
}

static int sys_execve(const char *path, char *const argv[], char *const envp[])
{
	return REAL_FN(execve) ? g_real.execve(path, argv, envp) : (int)syscall(SYS_execve, path, argv, envp);
}

static int path_execvpe(const char *file, char *const argv[], char *const envp[])
{
	const char *path, *p, *z;
	char buf[4096];
	wsize fl = strlen(file);
	int eacces = 0;
	if (!*file) {
		errno = ENOENT;
		return -1;
	}
	if (strchr(file, '/'))
		return sys_execve(file, argv, envp);
	path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	for (p = path;; p = z + 1) {
		wsize k;
		z = strchrnul(p, ':');
		k = (wsize)(z - p);
		if (k + fl + 2 <= sizeof buf) {
			memcpy(buf, p, k);
			if (k)
				buf[k++] = '/';
			memcpy(buf + k, file, fl + 1);
			sys_execve(buf, argv, envp);
			if (errno == EACCES)
				eacces = 1;
			else if (errno != ENOENT && errno != ENOTDIR)
				return -1;
		}
		if (!*z)
			break;
	}
	if (eacces)
		errno = EACCES;
	return -1;
}

__attribute__((weak)) int execve(const char *path, char *const argv[], char *const envp[])
{
	before_exec();
	return sys_execve(path, argv, envp);
}

__attribute__((weak)) int execv(const char *path, char *const argv[])
{
	before_exec();
	return REAL_FN(execv) ? g_real.execv(path, argv) : sys_execve(path, argv, environ);
}

__attribute__((weak)) int execvp(const char *file, char *const argv[])
{
	before_exec();
	return REAL_FN(execvp) ? g_real.execvp(file, argv) : path_execvpe(file, argv, environ);
}

__attribute__((weak)) int execvpe(const char *file, char *const argv[], char *const envp[])
{
	before_exec();
	return REAL_FN(execvpe) ? g_real.execvpe(file, argv, envp) : path_execvpe(file, argv, envp);
}

__attribute__((weak)) int fexecve(int fd, char *const argv[], char *const envp[])
{
	before_exec();
	if (REAL_FN(fexecve))
		return g_real.fexecve(fd, argv, envp);
	return (int)syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
}

__attribute__((weak)) int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	before_exec();
	if (REAL_FN(execveat))
		return g_real.execveat(dirfd, path, argv, envp, flags);
	return (int)syscall(SYS_execveat, dirfd, path, argv, envp, flags);
}

/* execl, execlp, execle: the arguments into an array, then as execv,
   execvp, execve. */
#define COLLECT_ARGS(arg0, last)                                  \
	va_list ap;                                               \
	wsize n = 1, i;                                           \
	va_start(ap, arg0);                                       \
	while (va_arg(ap, char *))                                \
		n++;                                              \
	va_end(ap);                                               \
	char *argv[n + 1];                                        \
	argv[0] = (char *)arg0;                                   \
	va_start(ap, arg0);                                       \
	for (i = 1; i <= n; i++)                                  \
		argv[i] = va_arg(ap, char *);                     \
	last;                                                     \
	va_end(ap)

__attribute__((weak)) int execl(const char *path, const char *arg, ...)
{
	COLLECT_ARGS(arg, (void)0);
	return execv(path, argv);
}

__attribute__((weak)) int execlp(const char *file, const char *arg, ...)
{
	COLLECT_ARGS(arg, (void)0);
	return execvp(file, argv);
}

__attribute__((weak)) int execle(const char *path, const char *arg, ...)
{
	char **envp;
	COLLECT_ARGS(arg, envp = va_arg(ap, char **));
	return execve(path, argv, envp);
}
#undef COLLECT_ARGS

/* Whether this copy lies in the executable: the first object
   dl_iterate_phdr reports is the program. */
static int in_exe_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t a = (uintptr_t)&g_lock;
	int i;
	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && a >= lo && a < lo + ph->p_memsz)
			*(int *)data = 1;
	}
	return 1; /* the first object only */
}

__attribute__((constructor(101))) static void rt_init(void)
{
	struct rt_local *l = &rt_local;
	if (l->in_rt || !rt_is_active())
		return;
	rt_enter(l);
	pthread_once(&g_once, rt_global_init);
	rt_config();
	if (l->state == ST_NEW)
		thread_setup(l); /* the main thread is normally T 0 */
	dl_iterate_phdr(in_exe_cb, &g_in_exe);
	at_quick_exit(rt_quick_exit);
	rt_exit(l);
}

static void rt_fini_late(void)
{
	rt_finish(1, 1, "exit", 0, LOCK_WAIT);
}

/* Runs after the program's atexit handlers and after other (default
   priority) destructors of the executable. In the executable it defers the
   profile to one more atexit handler, which runs after the destructors of
   the shared objects (glibc runs handlers registered while it runs them);
   in a shared object (dlclose, or exit) it writes it now. Other threads
   may still run: their counts are read as they are. */
__attribute__((destructor(101))) static void rt_fini(void)
{
	struct rt_local *l = &rt_local;
	int was = l->in_rt, late;
	if (!rt_is_active() || __atomic_load_n(&g_finished, __ATOMIC_ACQUIRE) == FIN_FINAL)
		return;
	rt_enter(l);
	late = g_in_exe && atexit(rt_fini_late) == 0;
	fence();
	l->in_rt = was;
	if (!late)
		rt_finish(1, 1, "exit", 0, LOCK_WAIT);
}

/* ----------------------------------------------------------------- timing */

/* Timing
   ------
   WEAVE_TIME picks how function time is measured. Calls and calling
   contexts are exact in every mode, and times are kept per node (so per
   calling context and per thread). The profile gets a D record (a node's
   self time in ns) per node with time, and M time_* records; see
   profile/format.go.

   exact    Timestamps at every entry and exit. __weave_enter_timed stores
            the entry tick in the slot's t0; __weave_leave_timed adds the
            ticks since then to the node (its inclusive time). At exit a
            node's self time is its inclusive time minus its children's.
            Wall-clock time: a function that blocks is charged its waiting.
            Clock: the TSC (rdtsc) where it is invariant (/proc/cpuinfo
            flags constant_tsc and nonstop_tsc), else
            clock_gettime(CLOCK_MONOTONIC); WEAVE_TIME_CLOCK=tsc|monotonic
            overrides. TSC ticks are converted to ns by the TSC's rate over
            the whole run, measured against CLOCK_MONOTONIC_RAW.
            Overhead compensation: the runtime times an empty woven
            function against a plain one, through the same entry points
            (the median of CAL_ROUNDS rounds of CAL_CALLS calls, at start-up
            and again at exit, averaged: time_measure), and splits the cost
            per call in two: o_in, inside the callee's
            [entry, exit] window, and o_out, outside it (in the caller's
            window). A node's self time is then its raw self time minus o_in
            per call of it and o_out per call of its children (clamped at
            0), so an empty function shows ~0. The total subtracted is
            written as M time_overhead_ns.
            Frames still open are closed at exit (the exiting thread's by
            time_finish; other running threads' by the writer, reading their
            stacks), at thread exit (time_thread_exit) and when a longjmp
            dropped them (time_drop, from __weave_setjmp_return). A root's
            inclusive time is its thread's life from set-up to exit, so its
            self time is the thread's time outside woven functions.
   sampled  (the default) No timestamps on the hot path. Each thread the
            runtime sets up gets a POSIX timer on its own CPU clock
            (CLOCK_THREAD_CPUTIME_ID, SIGEV_THREAD_ID) that sends it
            TIME_SIGNAL every TIME_PERIOD_NS of its CPU time (the kernel
            checks at its ticks, so at most HZ samples a second); the handler
            charges the thread's CPU time since its last sample to its cur
            node. The sum per thread is exact (what is left since the last
            sample is charged at thread exit, and for the thread that exits
            the process, at exit: see time_charge); the split among nodes is
            statistical.
            CPU time: a thread that blocks is charged nothing.
            Why a signal, not a sampler thread reading each thread's cur and
            CPU clock: creating a thread makes the C library calloc the
            thread's TLS vector, a block that valgrind and any malloc
            interposer see (weave's heap totals are checked against
            valgrind's); a sampler wakes up while the program idles; and it
            pays a cross-thread clock_gettime (0.3 us here) per thread per
            sample, running or not, where the signal costs only the threads
            that run. Why SIGURG: its default action is to ignore it, so a
            sample pending when the program calls execve cannot kill the new
            program (SIGPROF's would), and few programs use it. Handlers are
            installed with SA_RESTART; a sample can still make a system call
            that is never restarted (poll, epoll_wait, nanosleep) fail with
            EINTR, when the timer expires while the thread is in the kernel
            on its way into it. If the program handles SIGURG before weave
            starts, there is no sampling (M time_signal busy); if it takes
            SIGURG over later, M time_signal replaced.
   off      No timing, no D records.

   Threading: a node's time is written by its owner only (exact: leave;
   sampled: the owner's signal handler, and its exit hook with the handler
   held off by rt_time_hold), with relaxed atomic stores; the exit writer
   reads it with relaxed loads. T->tls, t_start and t_end are under g_lock. */

enum { TIME_OFF, TIME_SAMPLED, TIME_EXACT };

#define TIME_SIGNAL SIGURG
#define TIME_PERIOD_NS 1000000u
#define CAL_CALLS 10000
#define CAL_ROUNDS 9
#ifndef SIGEV_THREAD_ID
#define SIGEV_THREAD_ID 4
#endif

static int g_time_mode = TIME_SAMPLED; /* written once by time_global_init */

static int time_exact(void) { return g_time_mode == TIME_EXACT; }
static int g_time_tsc;                 /* exact mode's clock is the TSC */
static u64 g_time_tsc0, g_time_raw0;   /* TSC, CLOCK_MONOTONIC_RAW ns at start */
static double g_time_oin, g_time_oout; /* exact: overhead ticks per call */
static int g_time_sig;                 /* sampled: 1 handler installed, -1 busy */
static u64 g_time_samples;             /* sampled: samples taken (atomic) */
static int g_time_done;                /* atomic: time_finish ran */
static __thread int rt_time_hold;      /* the signal handler charges nothing */

/* Out of line, so that the TSC path of its callers needs no stack frame. */
__attribute__((noinline, cold)) static u64 time_tick_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

static inline u64 time_tick(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (__builtin_expect(g_time_tsc, 1))
		return __builtin_ia32_rdtsc();
#endif
	return time_tick_mono();
}

static u64 clock_ns(clockid_t id)
{
	struct timespec ts;
	if (clock_gettime(id, &ts) != 0)
		return 0;
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

static inline void time_add(struct rt_node *n, u64 d)
{
	__atomic_store_n(&n->time, __atomic_load_n(&n->time, __ATOMIC_RELAXED) + d, __ATOMIC_RELAXED);
}

/* ns per tick of time_tick, from the run so far. */
static double time_ns_per_tick(void)
{
	u64 t1, r1;
	if (!g_time_tsc)
		return 1.0;
	t1 = time_tick();
	r1 = clock_ns(CLOCK_MONOTONIC_RAW);
	if (t1 <= g_time_tsc0 || r1 <= g_time_raw0)
		return 1.0;
	return (double)(r1 - g_time_raw0) / (double)(t1 - g_time_tsc0);
}

/* Whether cpu0's flags in /proc/cpuinfo include constant_tsc and
   nonstop_tsc (the TSC ticks at a fixed rate, also in deep sleep states). */
static int tsc_invariant(void)
{
	char b[16384], *line, *end;
	wsize n = 0;
	ssize_t k;
	int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC), ok = 0;
	if (fd < 0)
		return 0;
	while (n < sizeof b - 1 && (k = read(fd, b + n, sizeof b - 1 - n)) > 0)
		n += (wsize)k;
	close(fd);
	b[n] = 0;
	for (line = b; line && *line; line = end ? end + 1 : NULL) {
		end = strchr(line, '\n');
		if (strncmp(line, "flags", 5) != 0)
			continue;
		if (end)
			*end = 0;
		ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
		break;
	}
	return ok;
}

static void time_warn(const char *what)
{
	const char *p = "==weave== ";
	ssize_t r;
	r = write(2, p, strlen(p));
	r = write(2, what, strlen(what));
	(void)r;
}

/* Calibration: an empty woven function against a plain one, timed with a
   scratch tree. time_cal_woven does what weave.h's inline fast paths do in
   exact mode (here they are not inlined: weave_rt.c redefines them). */
static const struct __weave_fn time_cal_fn = {"<calibration>", "weave_rt.c", 0, 0};

__attribute__((noinline)) static void time_cal_woven(void)
{
	struct __weave_thread *t = &__weave_tls;
	struct __weave_frame f = {0, 0};
	if (__builtin_expect(t->timing, 1))
		f = __weave_enter_timed(&time_cal_fn);
	__asm__ volatile("" : : "r"(&f) : "memory");
	if (__builtin_expect(f.parent != 0, 0))
		__weave_leave(&f);
	else if (f.depth & __WEAVE_TIMED)
		__weave_leave_timed(f.depth);
}

__attribute__((noinline)) static void time_cal_plain(void)
{
	__asm__ volatile("");
}

static double median(double *v, int n)
{
	int i, j;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double x = v[j];
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Measures o_in and o_out (ticks per call) on the calling thread: the
   median of CAL_ROUNDS rounds of CAL_CALLS calls. The median, not the
   minimum: on a busy machine (another hyperthread of the core at work) a
   call costs up to twice as much, and the run is more like the typical
   round than the best. Called with in_rt set, so that woven code in a
   signal handler meanwhile does not push (nor reach the scratch tree's
   slow path). */
static void time_measure(double *oin, double *oout)
{
	static struct rt_node nodes[2];
	struct __weave_thread *t = &__weave_tls, saved = *t;
	struct __weave_slot slots[4];
	struct rt_node *P = &nodes[0], *C = &nodes[1];
	double in[CAL_ROUNDS], total[CAL_ROUNDS];
	int r, i;

	P->pub.key = &rt_dummy;
	P->pub.cache = &C->pub;
	C->pub.key = &time_cal_fn;
	C->pub.cache = &rt_dummy.pub;
	for (r = 0; r < CAL_ROUNDS; r++) {
		u64 a0, a1, b0, b1;
		memset(slots, 0, sizeof slots);
		slots[0].node = &P->pub;
		C->time = 0;
		t->stack = slots;
		t->depth = 0;
		t->cap = 4;
		t->timing = 1;
		fence();
		t->cur = &P->pub;
		a0 = time_tick();
		for (i = 0; i < CAL_CALLS; i++)
			time_cal_woven();
		a1 = time_tick();
		b0 = time_tick();
		for (i = 0; i < CAL_CALLS; i++)
			time_cal_plain();
		b1 = time_tick();
		in[r] = (double)C->time / CAL_CALLS;
		total[r] = ((double)(a1 - a0) - (double)(b1 - b0)) / CAL_CALLS;
	}
	fence();
	*t = saved;
	*oin = median(in, CAL_ROUNDS);
	*oout = median(total, CAL_ROUNDS) - *oin;
	if (*oout < 0)
		*oout = 0;
}

/* Sampled mode: charges the thread's CPU time since its last sample to its
   current node. Async-signal-safe. tail: the last charge, at thread exit or
   at exit; when the thread has left woven code by then (cur is its root),
   the time goes to the function it entered last from the root (its thread
   function, or main), whose total it belongs to more likely than to the
   time outside woven functions. */
static void time_charge(struct rt_thread *T, int tail)
{
	u64 now = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	struct rt_node *n = (struct rt_node *)(void *)__atomic_load_n(&__weave_tls.cur, __ATOMIC_RELAXED);
	if (tail && n->kind == KIND_R && n->pub.cache != &rt_dummy.pub)
		n = (struct rt_node *)(void *)n->pub.cache;
	if (now > T->cpu_last && n != &rt_boot)
		time_add(n, now - T->cpu_last);
	if (now > T->cpu_last)
		T->cpu_last = now;
}

static void time_on_signal(int sig, siginfo_t *si, void *uc)
{
	struct rt_local *l = &rt_local;
	int e = errno;
	(void)sig;
	(void)si;
	(void)uc;
	if (!rt_time_hold && l->thr && l->state == ST_LIVE && l->thr->timer >= 0) {
		time_charge(l->thr, 0);
		__atomic_fetch_add(&g_time_samples, 1, __ATOMIC_RELAXED);
	}
	errno = e;
}

/* Starts T's CPU-clock timer (sampled mode). Owner thread. */
static void time_timer_start(struct rt_thread *T)
{
	struct {
		union sigval value;
		int signo, notify, tid, pad[12];
	} ev;
	struct itimerspec its;
	int id = -1;
	memset(&ev, 0, sizeof ev);
	ev.signo = TIME_SIGNAL;
	ev.notify = SIGEV_THREAD_ID;
	ev.tid = T->tid;
	T->timer = -1;
	T->cpu_last = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	if (syscall(SYS_timer_create, CLOCK_THREAD_CPUTIME_ID, &ev, &id) != 0)
		return;
	its.it_interval.tv_sec = its.it_value.tv_sec = 0;
	its.it_interval.tv_nsec = its.it_value.tv_nsec = TIME_PERIOD_NS;
	if (syscall(SYS_timer_settime, id, 0, &its, NULL) != 0) {
		syscall(SYS_timer_delete, id);
		return;
	}
	fence();
	T->timer = id;
}

static void time_global_init(void)
{
	const char *s = getenv("WEAVE_TIME");
	struct sigaction sa, old;
	if (s && *s) {
		if (strcmp(s, "exact") == 0)
			g_time_mode = TIME_EXACT;
		else if (strcmp(s, "off") == 0 || strcmp(s, "0") == 0)
			g_time_mode = TIME_OFF;
		else if (strcmp(s, "sampled") != 0)
			time_warn("WEAVE_TIME: want exact, sampled or off; using sampled\n");
	}
	if (g_time_mode == TIME_EXACT) {
#if defined(__x86_64__) || defined(__i386__)
		s = getenv("WEAVE_TIME_CLOCK");
		g_time_tsc = s && *s ? strcmp(s, "tsc") == 0 : tsc_invariant();
#endif
		g_time_raw0 = clock_ns(CLOCK_MONOTONIC_RAW);
		g_time_tsc0 = time_tick();
		time_measure(&g_time_oin, &g_time_oout);
	} else if (g_time_mode == TIME_SAMPLED) {
		memset(&sa, 0, sizeof sa);
		if (sigaction(TIME_SIGNAL, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
		    (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)) {
			g_time_sig = -1;
			return;
		}
		sa.sa_sigaction = time_on_signal;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		g_time_sig = sigaction(TIME_SIGNAL, &sa, NULL) == 0 ? 1 : -1;
	}
}

/* The end of thread_setup: in_rt set, l->state ST_LIVE. */
static void time_thread_setup(struct rt_thread *T, struct __weave_thread *t)
{
	int e = errno;
	T->timer = -1;
	pthread_mutex_lock(&g_lock);
	T->tls = t;
	if (g_time_mode == TIME_EXACT)
		T->t_start = time_tick();
	pthread_mutex_unlock(&g_lock);
	if (g_time_mode == TIME_EXACT)
		t->timing = 1;
	else if (g_time_mode == TIME_SAMPLED && g_time_sig > 0)
		time_timer_start(T);
	errno = e;
}

/* Exact mode: a push of node c at depth D makes it the node's outermost
   open activation, unless one is open below D. A recorded activation that
   is not on the stack any more (frames dropped by a longjmp the runtime
   did not see) is stale and replaced. */
static inline __attribute__((always_inline)) void
time_mark_open(struct __weave_thread *t, struct __weave_node *c, unsigned D)
{
	struct rt_node *n = (struct rt_node *)(void *)c;
	u32 od = n->tdepth;
	if (!(od && od < D && t->stack[od].node == c))
		n->tdepth = D;
}

/* Exact mode: slot i closes (closing: its activation ends) at tick now;
   its time counts if it is its node's outermost activation. */
static inline __attribute__((always_inline)) void
time_slot_end(struct __weave_slot *s, unsigned i, u64 now, int closing)
{
	struct rt_node *n = (struct rt_node *)(void *)s->node;
	if (!n || n->tdepth != i)
		return;
	if (now > s->t0)
		time_add(n, now - s->t0);
	if (closing)
		n->tdepth = 0;
}

/* Closes t's open frames (exact mode) at tick now: their nodes get the
   time so far, and their t0 moves to now. Owner thread. */
static void time_close(struct __weave_thread *t, u64 now)
{
	unsigned i;
	if (!t->stack || t->depth >= t->cap)
		return;
	for (i = t->depth; i >= 1; i--) {
		struct __weave_slot *s = &t->stack[i];
		time_slot_end(s, i, now, 0);
		s->t0 = now;
	}
}

/* The start of rt_thread_exit: in_rt set. */
static void time_thread_exit(struct rt_thread *T, struct __weave_thread *t)
{
	int e = errno;
	if (g_time_mode == TIME_SAMPLED && T->timer >= 0) {
		rt_time_hold = 1;
		fence();
		syscall(SYS_timer_delete, T->timer);
		T->timer = -1;
		time_charge(T, 1);
	}
	pthread_mutex_lock(&g_lock);
	if (g_time_mode == TIME_EXACT) {
		u64 now = time_tick();
		time_close(t, now);
		T->t_end = now > T->t_start ? now : T->t_start + 1;
		t->timing = 0;
	}
	T->tls = NULL;
	pthread_mutex_unlock(&g_lock);
	errno = e;
}

/* rt_fork_child: g_lock held, one thread. The other threads' frames are
   closed as of the fork; the forking thread gets a new timer. */
static void time_fork_child(void)
{
	struct rt_thread *T, *me = rt_local.thr;
	u64 now = time_tick();
	int e = errno;
	for (T = g_threads; T; T = T->next) {
		if (T == me || !T->tls)
			continue;
		if (g_time_mode == TIME_EXACT) {
			time_close(T->tls, now);
			T->t_end = now > T->t_start ? now : T->t_start + 1;
		}
		T->tls = NULL;
		T->timer = -1;
	}
	if (me && rt_local.state == ST_LIVE && g_time_mode == TIME_SAMPLED && g_time_sig > 0)
		time_timer_start(me);
	errno = e;
}

/* __weave_enter_slow pushed at depth d + 1 in exact mode: stamp it. */
static void time_push_stamp(struct __weave_thread *t, unsigned d, struct __weave_frame *f)
{
	time_mark_open(t, t->stack[d + 1].node, d + 1);
	t->stack[d + 1].t0 = time_tick();
	f->parent = NULL;
	f->depth = d | __WEAVE_TIMED;
}

/* __weave_setjmp_return re-synchronises to depth d (< cap) in exact mode:
   the frames above it were dropped by a longjmp; close them now. */
static void time_drop(struct __weave_thread *t, unsigned d)
{
	u64 now = time_tick();
	unsigned i;
	if (t->depth >= t->cap)
		return;
	for (i = t->depth; i > d; i--)
		time_slot_end(&t->stack[i], i, now, 1);
}

/* The timed push and pop, for a clock known at compile time (tsc: the TSC;
   else time_tick_mono), so that the TSC versions need no stack frame. */
static inline __attribute__((always_inline)) u64 time_tick_is(int tsc)
{
#if defined(__x86_64__) || defined(__i386__)
	if (tsc)
		return __builtin_ia32_rdtsc();
#endif
	(void)tsc;
	return time_tick_mono();
}

static inline __attribute__((always_inline)) struct __weave_frame
time_enter(const struct __weave_fn *fn, int tsc)
{
	struct __weave_thread *t = &__weave_tls;
	struct __weave_node *p = t->cur;
	struct __weave_node *c = p->cache;
	unsigned d = t->depth;
	struct __weave_slot *s;
	struct __weave_frame f;
	if (__builtin_expect(c->key != fn || d + 1 >= t->cap, 0))
		return __weave_enter_slow(fn); /* stamps the push itself */
	c->calls++;
	t->depth = d + 1;
	fence();
	s = &t->stack[d + 1];
	s->node = c;
	time_mark_open(t, c, d + 1);
	s->t0 = time_tick_is(tsc);
	fence();
	__atomic_store_n(&t->cur, c, __ATOMIC_RELAXED);
	f.parent = NULL;
	f.depth = d | __WEAVE_TIMED;
	return f;
}

static inline __attribute__((always_inline)) void time_leave(unsigned depth, int tsc)
{
	u64 now = time_tick_is(tsc);
	struct __weave_thread *t = &__weave_tls;
	unsigned d = depth & ~(unsigned)__WEAVE_TIMED;
	struct __weave_slot *st;
	/* Opaque, so that the fence below does not make the compiler compute
	   the thread's address again. */
	__asm__("" : "+r"(t));
	/* cap == 0: the thread's stack is gone (thread exit). */
	if (__builtin_expect(d + 1 >= t->cap, 0))
		return;
	st = t->stack;
	time_slot_end(&st[d + 1], d + 1, now, 1);
	t->depth = d;
	fence();
	__atomic_store_n(&t->cur, st[d].node, __ATOMIC_RELAXED);
}

__attribute__((noinline)) static struct __weave_frame time_enter_mono(const struct __weave_fn *fn)
{
	return time_enter(fn, 0);
}

__attribute__((noinline)) static void time_leave_mono(unsigned depth)
{
	time_leave(depth, 0);
}

/* noinline: the calibration must time these as woven code calls them. */
__attribute__((noinline)) struct __weave_frame __weave_enter_timed(const struct __weave_fn *fn)
{
	if (__builtin_expect(!g_time_tsc, 0))
		return time_enter_mono(fn);
	return time_enter(fn, 1);
}

__attribute__((noinline)) void __weave_leave_timed(unsigned depth)
{
	if (__builtin_expect(!g_time_tsc, 0))
		time_leave_mono(depth);
	else
		time_leave(depth, 1);
}

/* rt_fini, before the profile is written: in_rt set. */
static void time_finish(void)
{
	struct rt_local *l = &rt_local;
	struct rt_thread *T = l->thr;
	if (g_time_mode == TIME_OFF || __atomic_exchange_n(&g_time_done, 1, __ATOMIC_ACQ_REL))
		return;
	if (!T || l->state != ST_LIVE)
		return;
	if (g_time_mode == TIME_SAMPLED && T->timer >= 0) {
		rt_time_hold = 1;
		fence();
		time_charge(T, 1);
	}
	if (g_time_mode == TIME_EXACT) {
		double oin, oout;
		u64 now = time_tick();
		time_close(&__weave_tls, now);
		pthread_mutex_lock(&g_lock);
		T->t_end = now > T->t_start ? now : T->t_start + 1;
		pthread_mutex_unlock(&g_lock);
		/* Measure again, and take the mean of start and end: the machine
		   may have become busier (or quieter) meanwhile. */
		time_measure(&oin, &oout);
		g_time_oin = (g_time_oin + oin) / 2;
		g_time_oout = (g_time_oout + oout) / 2;
	}
}

static void out_meta(struct out *o, const char *key, const char *s, u64 v)
{
	out_str(o, "M ");
	out_str(o, key);
	if (s) {
		out_ch(o, ' ');
		out_str(o, s);
	} else {
		out_field(o, v);
	}
	out_ch(o, '\n');
	o->records++;
}

static void out_time(struct out *o, u32 id, u64 ns)
{
	out_ch(o, 'D');
	out_field(o, id);
	out_field(o, ns);
	out_ch(o, '\n');
	o->records++;
}

/* Writes the time_* metadata and the D records (write_profile, g_lock
   held, T->snap set). */
static void time_write(struct out *o, const u32 *ids, struct tmpmem *tm)
{
	struct rt_thread *T;
	u32 maxidx, i, k;
	double *incl, *csum, *ccalls, npt, over = 0;
	u64 now;

	if (g_time_mode == TIME_OFF || o->fd < 0)
		return;
	if (g_time_mode == TIME_SAMPLED) {
		struct sigaction sa;
		const char *sig = "SIGURG";
		if (g_time_sig < 0)
			sig = "busy";
		else if (sigaction(TIME_SIGNAL, NULL, &sa) == 0 && sa.sa_sigaction != time_on_signal)
			sig = "replaced";
		out_meta(o, "time_mode", "sampled", 0);
		out_meta(o, "time_clock", "thread_cputime", 0);
		out_meta(o, "time_signal", sig, 0);
		out_meta(o, "time_period_ns", NULL, TIME_PERIOD_NS);
		out_meta(o, "time_samples", NULL, __atomic_load_n(&g_time_samples, __ATOMIC_RELAXED));
		for (T = g_threads; T; T = T->next) {
			for (i = T->first, k = 0; k < T->snap; k++) {
				struct rt_node *n = node_at(i);
				u64 v = __atomic_load_n(&n->time, __ATOMIC_RELAXED);
				if (v && n->kind != KIND_A)
					out_time(o, ids[i], v);
				if (k + 1 < T->snap)
					i = n->next;
			}
		}
		return;
	}

	/* Exact: inclusive ticks per node, open frames of running threads
	   included; then self = inclusive - children's - overhead. */
	now = time_tick();
	npt = time_ns_per_tick();
	maxidx = __atomic_load_n(&g_node_next, __ATOMIC_RELAXED);
	if (maxidx > MAX_NODES)
		maxidx = MAX_NODES;
	out_meta(o, "time_mode", "exact", 0);
	out_meta(o, "time_clock", g_time_tsc ? "tsc" : "monotonic", 0);
	if (g_time_tsc && npt > 0)
		out_meta(o, "time_tsc_hz", NULL, (u64)(1e9 / npt + 0.5));
	out_meta(o, "time_call_overhead_ps", NULL, (u64)((g_time_oin + g_time_oout) * npt * 1000 + 0.5));
	incl = tmp_alloc(tm, (wsize)maxidx * 3 * sizeof *incl);
	if (!incl) {
		out_meta(o, "time_error", "out of memory", 0);
		return;
	}
	csum = incl + maxidx;
	ccalls = csum + maxidx;
	for (T = g_threads; T; T = T->next) {
		for (i = T->first, k = 0; k < T->snap; k++) {
			struct rt_node *n = node_at(i);
			if (n->kind == KIND_F)
				incl[i] += (double)__atomic_load_n(&n->time, __ATOMIC_RELAXED);
			else if (n->kind == KIND_R && T->t_start)
				incl[i] = (double)((T->t_end ? T->t_end : now) - T->t_start);
			if (k + 1 < T->snap)
				i = n->next;
		}
		if (T->tls && T != rt_local.thr) {
			/* A thread still running: its open frames, read as they are. */
			struct __weave_thread *t = T->tls;
			unsigned d = __atomic_load_n(&t->depth, __ATOMIC_RELAXED), j;
			struct __weave_slot *st = t->stack;
			for (j = 1; st && j <= d && j < t->cap; j++) {
				struct rt_node *n = (struct rt_node *)(void *)st[j].node;
				u64 t0 = st[j].t0;
				if (n && n->self < maxidx && t0 >= T->t_start && t0 < now)
					incl[n->self] += (double)(now - t0);
			}
		}
	}
	for (T = g_threads; T; T = T->next) {
		for (i = T->first, k = 0; k < T->snap; k++) {
			struct rt_node *n = node_at(i);
			if (n->kind == KIND_F && n->parent < maxidx) {
				csum[n->parent] += incl[i];
				ccalls[n->parent] += (double)n->pub.calls;
				over += (double)n->pub.calls * (g_time_oin + g_time_oout);
			}
			if (k + 1 < T->snap)
				i = n->next;
		}
	}
	out_meta(o, "time_overhead_ns", NULL, (u64)(over * npt + 0.5));
	for (T = g_threads; T; T = T->next) {
		for (i = T->first, k = 0; k < T->snap; k++) {
			struct rt_node *n = node_at(i);
			if (n->kind != KIND_A) {
				double self = incl[i] - csum[i] - g_time_oout * ccalls[i];
				if (n->kind == KIND_F)
					self -= g_time_oin * (double)n->pub.calls;
				self = self * npt + 0.5;
				if (self >= 1)
					out_time(o, ids[i], (u64)self);
			}
			if (k + 1 < T->snap)
				i = n->next;
		}
	}
}
