//go:build ignore

/* vmmap.c: the process's memory map, the heap over time, and what held the
   heap at its peak (the runtime part of package vmmap; see
   profile/format.go, records Y, V, L, P and M heap_peak, peak_snapshot).

   Heap in use. Every allocation and free the runtime records moves the
   heap and counts in its thread's vm_thread record (allocs, frees). With
   one thread the heap is g_vm.hi + x, x (and lo_rel) that thread's
   record's, g_vm_first: x is its offset from the next threshold, negative
   below it, so the allocation's fast path (vm_alloc) is an add to x, a
   branch on its sign and a count (three instructions), and the free's
   (vm_free) a subtract, a compare with lo_rel (the lower threshold, less
   hi) and a count. The rare cases go to the slow paths (vm_up, vm_down),
   which move hi and x together (vm_rearm):
     - the exact peak: an allocation past hi raises it; below hi, the
       heap can pass the peak only when hi is above it ("the peak in
       reach"), and then lo_rel sends every free to vm_down, where the heap
       before the first free after a climb is the climb's top. A free
       there that finds the heap already below the peak (the climb is
       over) clamps hi to the peak + 1 (g_vm.clamp) until the next
       allocation past hi, so that the frees of a heap that wanders just
       below its peak (a server's ring, a garbage collector's cycle) do
       not all come here. Out of reach (a heap below its old peak,
       binary-trees after its first tree), frees cost nothing more;
     - the peak's time: taken when the heap grows past the last stamp by
       1/1024 (VM_STAMP_SHIFT), so it is when the heap came within 1/1024
       of its peak, without a clock read per allocation of a climb;
     - the heap grown by VM_TOL (1/16) since the last peak snapshot: the
       bytes and blocks in use per allocation leaf (a walk over every
       node: O(contexts), so taken a logarithmic number of times) and a
       copy of the maps if the heap doubled since the last copy, or grew
       and VM_MAPS_NS passed. The contexts reported are thus within 1/16 of the
       true peak; at exit, if the heap is still at its peak, one more
       snapshot makes them exact;
     - the heap moved by VM_STEP (1/32) of the peak since the last timeline
       point (either way), or the sampling timer asked for a point
       (vm_tick): a point, unless fewer than g_vm.gap allocations and frees
       happened since the last one. A point reads statm (three system
       calls) only if the last read is VM_STATM_NS old, else its VM size and
       RSS are -1 (not read).
   The sampler (vm_tick, sampled time's thread: runtime/sampler.c) asks
   for its point by setting due and the sampled thread's lo_rel, so it is
   taken by that thread at its next free (or its next allocation past
   hi): the sampler never writes x, which the thread updates without a
   lock.
   Once a second thread is set up (vm_multi), each thread works on credit
   reserved in g_vm.bytes, with the same fast paths on its own record
   (vmthreads.c).
   The timeline keeps at most VM_POINTS points: when full, every other
   point is dropped (its counts added to the next) and the spacing doubled,
   as massif does, so a long run costs no more memory than a short one.
   Full is fewer points while VM_POINTS would take more than 1/16 of the
   heap's peak (vm_points_cap, at least VM_POINTS_MIN): a long run of a
   small heap (a server's ring of messages, 200 KiB) filled all 112 KiB,
   whose pages stayed resident to the end.

   Maps and statm are copied raw (read() into mmap'd buffers; no stdio, no
   malloc) at start-up, at each peak snapshot and at exit, and parsed by
   package vmmap; maps of over a page packed (vmpack.c: a quarter of the
   text, byte for byte). An unreadable /proc (a chroot, a sandbox) leaves the
   buffers empty and the error in M maps_error.

   Threading: x, bytes, allocs, frees, peak: see above. Snapshots, the
   timeline and the peak's time: g_vm.lock (a spinlock taken with in_rt
   set; lock order: g_lock, then g_vm.lock). Thresholds read outside the
   lock (lo_rel, tl_hi, tl_lo, snap_next, stamp_next, due) are relaxed
   atomics (lo_rel a plain load on the fast path), written by the lock
   holder (lo_rel and due by the sampler too): a stale value costs
   a slow-path call or a point late.

   Test hook: WEAVE_PROC (ignored in a setuid program) names the directory
   read instead of /proc, so that tests can make it unreadable. */

#include "internal.h"

#define VM_POINTS 2048u      /* timeline capacity, a power of two (56 bytes a point: 112 KiB, resident once full) */
#define VM_POINTS_MIN 256u   /* ... but at most 1/16 of the peak's bytes, or this many (14 KiB) */
#define VM_POINTS_SHIFT 4
#define VM_TOL_SHIFT 4       /* peak snapshots every 1/16 of growth */
#define VM_MAPS_NS 10000000u /* ... with a copy of the maps at most every 10 ms */
#define VM_STEP_SHIFT 5      /* timeline points every 1/32 of the peak */
#define VM_STEP_MIN 4096u    /* ... or 4 KiB, whichever is more */
#define VM_STAMP_SHIFT 10    /* the peak's time: taken every 1/1024 of growth */
#define VM_STATM_NS 5000000u /* statm read for a point at most every 5 ms */
#define VM_TICKS 10u         /* timer-driven points: every 10th sample at first */
#define VM_MAPS_INIT 65536u  /* first size of a maps buffer */

/* A snapshot of the process (a Y record and its V records). */
struct vm_snap {
	const char *name;
	int taken, err; /* err: errno of reading the maps, or 0 */
	int packed;     /* maps: packed (vmpack.c), or raw */
	u64 ns, bytes, blocks;
	long long vm, rss; /* bytes; -1 unknown */
	struct vm_buf maps;
};

struct vm_point {
	u64 ns, bytes, blocks, allocs, frees;
	long long vm, rss;
};

/* A leaf's heap at the peak snapshot. */
struct vm_leaf {
	u32 node;
	u64 bytes, blocks;
};

static struct {
	u64 allocs, frees;        /* events of threads without a record, and of exited ones */
	u64 bytes;                /* the heap but what the records hold (vmthreads.c) */
	u32 nthreads;             /* records made (vmthreads.c) */
	long long folded;         /* the first thread's x when vm_multi folded it (vmthreads.c) */
	int first_taken;          /* g_vm_first belongs to a thread */
	u64 hi;                   /* the next slow allocation: at hi + 0 (one thread) */
	int due;                  /* the timer asked for a point */
	int clamp;                /* hi no higher than peak + 1 (see the top) */
	u32 lock;
	u64 peak, peak_allocs, peak_frees; /* the high-water mark, the counts then */
	u64 peak_ns, stamp_next;  /* time taken when the heap exceeds stamp_next */
	u64 snap_next;            /* heap bytes that trigger a peak snapshot */
	u64 snap_bytes, snap_blocks, snap_ns;
	u64 maps_next;            /* heap bytes for the next copy of the maps at a peak snapshot */
	u64 tl_hi, tl_lo;         /* timeline thresholds */
	u64 tl_allocs, tl_frees;  /* counts at the last point */
	u64 statm_ns;             /* time of the last point that read statm */
	u64 gap;                  /* allocations and frees between points, at least */
	u32 ticks, tick_every;    /* timer samples, and how many make a point */
	struct vm_point *pts;
	u32 npts;
	struct vm_leaf *leaves;
	u32 nleaves, cap_leaves;
	u64 mono0;                /* CLOCK_MONOTONIC ns at start */
	struct vm_snap at_start, at_peak, at_exit;
	char proc[256];           /* "/proc" or WEAVE_PROC */
} g_vm __attribute__((aligned(64))) = {
	.at_start = {.name = "start"},
	.at_peak = {.name = "peak"},
	.at_exit = {.name = "exit"},
};

#if defined(__SANITIZE_THREAD__)
#define VM_TSAN 1 /* x with atomic adds: threads race on it (see the top) */
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define VM_TSAN 1
#endif
#endif
#ifndef VM_TSAN
#define VM_TSAN 0
#endif
#if VM_TSAN
#define VM_LOAD_FAST(v) __atomic_load_n(&(v), __ATOMIC_RELAXED)
#else
#define VM_LOAD_FAST(v) (v) /* plain: a compare with memory; races are benign (see the top) */
#endif
#define VM_FAR (1ll << 62)   /* x of g_vm_none: every allocation is slow */
#define VM_NEVER 0x7fffffffffffffffll /* lo_rel: every free is slow */
#if VM_TSAN
#define VM_COUNT(c) __atomic_fetch_add(&(c), 1, __ATOMIC_RELAXED)
#else
#define VM_COUNT(c) ((c)++) /* the owner's; others read it racily */
#endif

/* The first thread's record (one thread: the fast path's x and lo_rel). */
static struct vm_thread g_vm_first;

static u64 vm_bytes(void);
static u64 vm_blocks(void);
static void vm_thread_fork_child(void);
static int vm_read_packed(struct vm_buf *b, int *packed);
static void vm_up_threads(struct vm_thread *v, u64 n);
static void vm_down_threads(struct vm_thread *v, u64 n);

/* ------------------------------------------------------- reading files */

/* Builds proc/file into b (cap bytes). */
static void vm_path(char *b, wsize cap, const char *file)
{
	const char *proc = g_vm.proc[0] ? g_vm.proc : "/proc";
	wsize n = strlen(proc), k = strlen(file);
	if (n + k + 2 > cap)
		n = k = 0;
	memcpy(b, proc, n);
	b[n] = '/';
	memcpy(b + n + 1, file, k + 1);
}

/* Replaces b's buffer by one twice its size: 0, or -1 (b empty). */
static int vm_buf_grow(struct vm_buf *b)
{
	rt_unmap(b->p, b->cap);
	b->cap *= 2;
	if (!(b->p = rt_map(b->cap))) {
		b->cap = b->n = 0;
		return -1;
	}
	return 0;
}

/* Reads the whole file at path into b, growing it (mmap) until the file
   fits. Returns 0, or an errno. b->n is the bytes read. For /proc files,
   read in one go by the kernel a page or more at a time, a buffer too
   small is retried whole with twice the size: the maps are then one
   consistent read. The runtime's reader of /proc/self/maps, also for
   other parts (the leak finder's roots): see vm_next_map. */
static int vm_buf_read(struct vm_buf *b, const char *path)
{
	for (;;) {
		int fd, e = 0;
		ssize_t k;
		b->n = 0;
		if (!b->p) {
			if (!(b->p = rt_map(VM_MAPS_INIT)))
				return ENOMEM;
			b->cap = VM_MAPS_INIT;
		}
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			return errno;
		while (b->n < b->cap && (k = read(fd, b->p + b->n, b->cap - b->n)) != 0) {
			if (k < 0) {
				if (errno == EINTR)
					continue;
				e = errno;
				break;
			}
			b->n += (wsize)k;
		}
		close(fd);
		if (e || b->n < b->cap)
			return e;
		/* Full: the file may be longer. */
		if (vm_buf_grow(b))
			return ENOMEM;
	}
}

/* Reads the process's maps into b: 0 or an errno. Through thread-self
   (self where it is missing): once main has gone by pthread_exit,
   self/maps is empty (a zombie has no memory map). For the other parts:
   the snapshots read theirs with vm_read_packed (vmpack.c). */
static __attribute__((unused)) int vm_read_maps(struct vm_buf *b)
{
	char path[300];
	int e;
	vm_path(path, sizeof path, "thread-self/maps");
	if ((e = vm_buf_read(b, path)) != ENOENT)
		return e;
	vm_path(path, sizeof path, "self/maps");
	return vm_buf_read(b, path);
}

static uintptr_t vm_hex(const char **s, const char *end)
{
	uintptr_t v = 0;
	for (; *s < end; (*s)++) {
		char c = **s;
		if (c >= '0' && c <= '9')
			v = v << 4 | (uintptr_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uintptr_t)(c - 'a' + 10);
		else
			break;
	}
	return v;
}

/* Parses the mapping at *cur (a maps text ending at end) into m and moves
   *cur to the next line. Returns 0 at the end of the text. Not for hot
   paths. */
RT_RARE static __attribute__((unused)) int vm_next_map(const char **cur, const char *end, struct vm_map *m)
{
	const char *s = *cur, *eol;
	int field;
	if (s >= end)
		return 0;
	for (eol = s; eol < end && *eol != '\n'; eol++)
		;
	*cur = eol < end ? eol + 1 : end;
	m->start = vm_hex(&s, eol);
	if (s < eol && *s == '-')
		s++;
	m->end = vm_hex(&s, eol);
	if (s < eol)
		s++;
	memset(m->perms, 0, sizeof m->perms);
	for (field = 0; field < 4 && s < eol && *s != ' '; s++)
		m->perms[field++] = *s;
	/* offset, dev, inode, then the path. */
	for (field = 0; field < 3 && s < eol; field++) {
		while (s < eol && *s == ' ')
			s++;
		while (s < eol && *s != ' ')
			s++;
	}
	while (s < eol && *s == ' ')
		s++;
	m->path = s;
	m->path_len = (wsize)(eol - s);
	return 1;
}

static u64 vm_dec(const char **s, const char *end)
{
	u64 v = 0;
	for (; *s < end && **s >= '0' && **s <= '9'; (*s)++)
		v = v * 10 + (u64)(**s - '0');
	return v;
}

/* Reads VM size and RSS, in bytes, from statm (-1 when unreadable). */
static void vm_statm(long long *vm, long long *rss)
{
	char path[300], b[256];
	const char *s, *end;
	long long page = (long long)getauxval(AT_PAGESZ);
	ssize_t k = -1;
	int fd, c = rt_nocancel(); /* a malloc's thread, g_vm.lock held */
	*vm = *rss = -1;
	vm_path(path, sizeof path, "self/statm");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		k = read(fd, b, sizeof b);
		close(fd);
	}
	rt_cancel_restore(c);
	if (k <= 0)
		return;
	s = b;
	end = b + k;
	*vm = (long long)vm_dec(&s, end) * page;
	if (s < end && *s == ' ')
		s++;
	*rss = (long long)vm_dec(&s, end) * page;
}

/* ---------------------------------------------------------- snapshots */

static u64 vm_mono(void)
{
	struct timespec ts;
	rt_clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

/* ns since start-up (the first call, if before vm_init). */
static u64 vm_now(void)
{
	u64 t = vm_mono();
	if (!g_vm.mono0)
		g_vm.mono0 = t;
	return t - g_vm.mono0;
}

static inline u64 vm_load(u64 *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }

/* Blocks in use at the peak. */
static u64 vm_peak_blocks(void)
{
	u64 a = vm_load(&g_vm.peak_allocs), f = vm_load(&g_vm.peak_frees);
	return a > f ? a - f : 0;
}

/* Takes snapshot s of the process: time, heap, statm, maps. */
static void vm_snap_take(struct vm_snap *s)
{
	int c;
	s->ns = vm_now();
	s->bytes = vm_bytes();
	s->blocks = vm_blocks();
	vm_statm(&s->vm, &s->rss);
	c = rt_nocancel(); /* a malloc's thread, g_vm.lock held */
	s->err = vm_read_packed(&s->maps, &s->packed);
	rt_cancel_restore(c);
	s->taken = 1;
	own_note();
}

/* The heap in use per allocation leaf now, into g_vm.leaves. g_vm.lock
   held. Other threads' counters move meanwhile: with several threads the
   snapshot is not one instant. The owners write their counters with plain
   stores, which this reads racily (aligned 8-byte loads: each value is
   one the owner wrote); so that ThreadSanitizer, which would see a race,
   does not instrument it. */
static __attribute__((no_sanitize("thread"))) void vm_leaves_take(void)
{
	struct rt_thread *T;
	u32 need = 0, n = 0, i, k;
	for (T = __atomic_load_n(&g_threads, __ATOMIC_ACQUIRE); T; T = __atomic_load_n(&T->next, __ATOMIC_ACQUIRE))
		need += __atomic_load_n(&T->nnodes, __ATOMIC_ACQUIRE);
	if (need > g_vm.cap_leaves) {
		u32 cap = need + need / 2 + 64;
		struct vm_leaf *nl = rt_map((wsize)cap * sizeof *nl);
		if (!nl)
			return; /* keep the last snapshot */
		if (g_vm.leaves)
			rt_unmap(g_vm.leaves, (wsize)g_vm.cap_leaves * sizeof *nl);
		g_vm.leaves = nl;
		g_vm.cap_leaves = cap;
	}
	for (T = __atomic_load_n(&g_threads, __ATOMIC_ACQUIRE); T; T = __atomic_load_n(&T->next, __ATOMIC_ACQUIRE)) {
		u32 snap = __atomic_load_n(&T->nnodes, __ATOMIC_ACQUIRE);
		for (i = T->first, k = 0; k < snap && n < g_vm.cap_leaves; k++) {
			struct rt_node *nd = node_at(i);
			if (nd->kind == KIND_A) {
				const struct heapc *h = nd->u.heap;
				u64 a = 0, b = 0, f = 0, g = 0;
				int c;
				for (c = 0; c < 4; c++) {
					a += h->a[c];
					b += h->b[c];
					f += h->f[c] + __atomic_load_n(&h->rf[c], __ATOMIC_RELAXED);
					g += h->g[c] + __atomic_load_n(&h->rg[c], __ATOMIC_RELAXED);
				}
				if (a > f) {
					g_vm.leaves[n].node = i;
					g_vm.leaves[n].bytes = b > g ? b - g : 0;
					g_vm.leaves[n].blocks = a - f;
					n++;
				}
			}
			if (k + 1 < snap)
				i = nd->next;
		}
	}
	g_vm.nleaves = n;
}

/* A peak snapshot: the leaves and the maps, at heap bytes b. g_vm.lock
   held. */
static void vm_peak_take(u64 b)
{
	vm_leaves_take();
	if (!g_vm.at_peak.taken || b >= g_vm.maps_next ||
	    (b > g_vm.at_peak.bytes && vm_now() - g_vm.at_peak.ns >= VM_MAPS_NS)) {
		/* The maps cost more to copy than the leaves (a system call
		   that formats every mapping): a copy when the heap doubled
		   since the last, or grew and 10 ms passed. */
		vm_snap_take(&g_vm.at_peak);
		g_vm.maps_next = 2 * b;
	}
	g_vm.snap_bytes = b;
	g_vm.snap_blocks = vm_blocks();
	g_vm.snap_ns = vm_now();
	__atomic_store_n(&g_vm.snap_next, b + (b >> VM_TOL_SHIFT > VM_STEP_MIN ? b >> VM_TOL_SHIFT : VM_STEP_MIN), __ATOMIC_RELAXED);
}

/* --------------------------------------------------------- the timeline */

/* The timeline's capacity now: VM_POINTS, or the largest power of two
   from VM_POINTS_MIN whose points take at most 1/16 of the heap's peak.
   The peak only grows (but in a fork child), so neither does this. */
static u32 vm_points_cap(void)
{
	u64 fit = (vm_load(&g_vm.peak) >> VM_POINTS_SHIFT) / sizeof(struct vm_point);
	u32 cap = VM_POINTS_MIN;
	while (cap < VM_POINTS && 2 * (u64)cap <= fit)
		cap *= 2;
	return cap;
}

/* Drops every other point but the first, adding the counts of a dropped
   point to the next, and doubles the spacing. */
static void vm_decimate(void)
{
	u32 i, n = 1;
	for (i = 1; i < g_vm.npts; i++) {
		if (i % 2 && i + 1 < g_vm.npts) {
			g_vm.pts[i + 1].allocs += g_vm.pts[i].allocs;
			g_vm.pts[i + 1].frees += g_vm.pts[i].frees;
			continue;
		}
		g_vm.pts[n++] = g_vm.pts[i];
	}
	g_vm.npts = n;
	g_vm.gap = g_vm.gap ? g_vm.gap * 2 : 2;
	__atomic_store_n(&g_vm.tick_every, g_vm.tick_every * 2, __ATOMIC_RELAXED); /* vm_tick reads it */
}

/* Whether the calling thread keeps the heap with the one-thread scheme
   (see the top comment): the only one set up, on g_vm_first. */
static inline int vm_one(const struct vm_thread *v)
{
	return v == &g_vm_first && v->state == VT_ONE && !__atomic_load_n(&g_multi, __ATOMIC_RELAXED);
}

/* Sets hi and lo from the timeline thresholds and the peak, and the fast
   path's x and lo_rel from them (see the top comment), in the thread that
   keeps the heap with the one-thread scheme (else nothing: the other
   threads' records are their own). in_rt set, g_vm.lock held (or before
   any thread): vm_multi takes x under it. */
static void vm_rearm(void)
{
	u64 hi = vm_load(&g_vm.tl_hi), sn = vm_load(&g_vm.snap_next), st = vm_load(&g_vm.stamp_next);
	u64 lo = vm_load(&g_vm.tl_lo), b;
	struct vm_thread *v = rt_local.vm;
	if (!vm_one(v))
		return;
	b = g_vm.hi + (u64)v->x;
	hi = hi < sn ? hi : sn;
	hi = hi < st ? hi : st;
	if (g_vm.clamp && hi > vm_load(&g_vm.peak) + 1)
		hi = vm_load(&g_vm.peak) + 1; /* the peak is at least b */
	if (lo > b)
		lo = b;
	__atomic_store_n(&g_vm.hi, hi, __ATOMIC_RELAXED);
	__atomic_store_n(&v->x, (long long)(b - hi), __ATOMIC_RELAXED);
	/* Frees go to the slow path below lo, and all of them while the heap
	   may go past its peak before the next threshold (the first free
	   after a climb finds the exact peak), or while the timer waits for
	   a point. */
	__atomic_store_n(&v->lo_rel,
			 hi > vm_load(&g_vm.peak) + 1 || __atomic_load_n(&g_vm.due, __ATOMIC_RELAXED)
				 ? VM_NEVER
				 : (long long)(lo - hi),
			 __ATOMIC_RELAXED);
}

/* Sets the timeline thresholds a step (of the peak) either side of b. */
static void vm_arm(u64 b)
{
	u64 step = vm_load(&g_vm.peak) >> VM_STEP_SHIFT;
	if (step < VM_STEP_MIN)
		step = VM_STEP_MIN;
	__atomic_store_n(&g_vm.tl_hi, b + step, __ATOMIC_RELAXED);
	__atomic_store_n(&g_vm.tl_lo, b > step ? b - step : 0, __ATOMIC_RELAXED);
	vm_rearm();
}

/* Adds a point at heap bytes b, unless too close to the last one (force:
   regardless). g_vm.lock held. */
static void vm_point(u64 b, int force)
{
	u64 a, f;
	struct vm_point *p;
	vm_counts(&a, &f);
	__atomic_store_n(&g_vm.due, 0, __ATOMIC_RELAXED);
	if (!g_vm.pts)
		return;
	if (!force && a + f - g_vm.tl_allocs - g_vm.tl_frees < g_vm.gap) {
		vm_arm(b);
		return;
	}
	if (g_vm.npts >= vm_points_cap())
		vm_decimate();
	p = &g_vm.pts[g_vm.npts++];
	p->ns = vm_now();
	p->bytes = b;
	p->blocks = a > f ? a - f : 0;
	p->allocs = a - g_vm.tl_allocs;
	p->frees = f - g_vm.tl_frees;
	p->vm = p->rss = -1;
	if (force || p->ns - g_vm.statm_ns >= VM_STATM_NS) {
		vm_statm(&p->vm, &p->rss);
		g_vm.statm_ns = p->ns;
	}
	g_vm.tl_allocs = a;
	g_vm.tl_frees = f;
	vm_arm(b);
}

/* The counts at the peak: now. */
static void vm_peak_counts(void)
{
	u64 a, f;
	vm_counts(&a, &f);
	__atomic_store_n(&g_vm.peak_allocs, a, __ATOMIC_RELAXED);
	__atomic_store_n(&g_vm.peak_frees, f, __ATOMIC_RELAXED);
}

/* Raises the peak to b, the heap after an allocation or before a free,
   with the counts then (with several threads, at the peak's time stamps
   only: vmthreads.c). Returns whether b is a new peak. */
static int vm_peak_raise(u64 b)
{
	u64 pk = vm_load(&g_vm.peak);
	while (b > pk && b < 1ull << 62) { /* 2^62: not a heap */
		if (__atomic_compare_exchange_n(&g_vm.peak, &pk, b, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			if (!__atomic_load_n(&g_multi, __ATOMIC_RELAXED))
				vm_peak_counts();
			return 1;
		}
	}
	return 0;
}

/* The slow path of an allocation of n bytes: counts it, then the peak's
   time, a peak snapshot, a timeline point. in_rt set. Not marked cold:
   gcc then moved the whole of the advice's fast path, which ends in
   vm_alloc, to the cold section. */
static __attribute__((noinline)) void vm_up(struct vm_thread *v, u64 n)
{
	long long x = __atomic_load_n(&v->x, __ATOMIC_RELAXED);
	u64 b;
	int due;
	if (__builtin_expect(!vm_one(v) || x >= VM_FAR / 2, 0)) { /* x: folded by vm_multi meanwhile */
		vm_up_threads(v, n);
		return;
	}
	VM_COUNT(v->allocs);
	b = g_vm.hi + (u64)x;
	g_vm.clamp = 0; /* a climb may be starting: its frees find its top */
	due = __atomic_load_n(&g_vm.due, __ATOMIC_RELAXED);
	if (b > vm_load(&g_vm.peak))
		vm_peak_raise(b);
	if (!due && b <= vm_load(&g_vm.tl_hi) && b <= vm_load(&g_vm.snap_next) && b <= vm_load(&g_vm.stamp_next)) {
		spin_lock(&g_vm.lock);
		vm_rearm(); /* at hi exactly */
		spin_unlock(&g_vm.lock);
		return;
	}
	spin_lock(&g_vm.lock);
	if (b > g_vm.stamp_next && b >= vm_load(&g_vm.peak)) {
		/* The peak's time: taken each time the heap grows past the last
		   stamp by 1/1024, so it is when the heap came within that of
		   its peak. */
		g_vm.peak_ns = vm_now();
		__atomic_store_n(&g_vm.stamp_next, b + (b >> VM_STAMP_SHIFT), __ATOMIC_RELAXED);
	}
	if (b > g_vm.snap_next && b >= vm_load(&g_vm.peak))
		vm_peak_take(b);
	if (due || b > vm_load(&g_vm.tl_hi))
		vm_point(b, 0);
	else
		vm_rearm();
	spin_unlock(&g_vm.lock);
}

/* The slow path of a free of n bytes: the heap before it may be the
   peak, raised with the counts before this free. With one thread, while
   the peak is in reach, that is all there is to do (plain stores, no new
   thresholds: a free here too many is harmless) until a free finds the
   heap before it at or below the peak: then hi is clamped to the peak + 1
   (see the top). in_rt set. */
static __attribute__((noinline)) void vm_down(struct vm_thread *v, u64 n)
{
	long long x = __atomic_load_n(&v->x, __ATOMIC_RELAXED);
	u64 b;
	int clamp = 0;
	if (__builtin_expect(!vm_one(v) || x >= VM_FAR / 2, 0)) { /* x: folded by vm_multi meanwhile */
		vm_down_threads(v, n);
		return;
	}
	b = g_vm.hi + (u64)x;
	if (b + n > g_vm.peak && b + n < 1ull << 62) {
		__atomic_store_n(&g_vm.peak, b + n, __ATOMIC_RELAXED);
		vm_peak_counts();
	} else if (!g_vm.clamp) {
		g_vm.clamp = clamp = 1;
	}
	VM_COUNT(v->frees);
	if (!__atomic_load_n(&g_vm.due, __ATOMIC_RELAXED) && b >= vm_load(&g_vm.tl_lo)) {
		if (clamp) {
			spin_lock(&g_vm.lock);
			vm_rearm();
			spin_unlock(&g_vm.lock);
		}
		return;
	}
	spin_lock(&g_vm.lock);
	vm_point(b, 0);
	spin_unlock(&g_vm.lock);
}

/* Records an allocation of n bytes in thread record v, unless its slow
   path is due: then 0, and the caller takes it (vm_up(v, n)), so that a
   caller with no call of its own on its fast path makes none. in_rt set.
   The fast path (below hi with one thread, within its credit with
   several) is an add to the thread's x, a branch on its sign and a
   count. */
static inline __attribute__((always_inline)) int vm_alloc_try(struct vm_thread *v, u64 n)
{
#if VM_TSAN
	long long x = __atomic_add_fetch(&v->x, (long long)n, __ATOMIC_RELAXED);
#else
	long long x = v->x += (long long)n;
#endif
	if (__builtin_expect(x >= 0, 0))
		return 0;
	VM_COUNT(v->allocs);
	return 1;
}

/* Records an allocation of n bytes in thread record v. in_rt set. */
static inline __attribute__((always_inline)) void vm_alloc_in(struct vm_thread *v, u64 n)
{
	if (__builtin_expect(!vm_alloc_try(v, n), 0))
		vm_up(v, n);
}

/* vm_free_in's fast path alone: 0 when its slow path is due, which the
   caller then takes (vm_down(v, n)), so that a caller with no call of
   its own on its fast path makes none. */
static inline __attribute__((always_inline)) int vm_free_try(struct vm_thread *v, u64 n)
{
#if VM_TSAN
	long long x = __atomic_sub_fetch(&v->x, (long long)n, __ATOMIC_RELAXED);
#else
	long long x = v->x -= (long long)n;
#endif
	if (__builtin_expect(x < VM_LOAD_FAST(v->lo_rel), 0))
		return 0;
	VM_COUNT(v->frees);
	return 1;
}

/* Records a free of n bytes in thread record v. in_rt set. The fast path (one thread, above
   lo, the peak out of reach) is a subtract from x, a compare with lo_rel
   and a count. */
static inline __attribute__((always_inline)) void vm_free_in(struct vm_thread *v, u64 n)
{
	if (__builtin_expect(!vm_free_try(v, n), 0))
		vm_down(v, n);
}

/* vm_alloc_in and vm_free_in in the calling thread's record (rt_local.vm:
   a caller that holds &rt_local passes its vm, saving a TLS access). */
static inline __attribute__((always_inline)) void vm_alloc(u64 n) { vm_alloc_in(rt_local.vm, n); }
static inline __attribute__((always_inline)) void vm_free(u64 n) { vm_free_in(rt_local.vm, n); }

/* A sample of sampled time, for thread v (the sampler thread: no TLS,
   no libc): every tick_every-th asks for a point at v's next allocation
   or free. */
static void vm_tick(struct vm_thread *v)
{
	u32 t = __atomic_add_fetch(&g_vm.ticks, 1, __ATOMIC_RELAXED);
	u32 every = __atomic_load_n(&g_vm.tick_every, __ATOMIC_RELAXED);
	if (every && t % every == 0) {
		__atomic_store_n(&g_vm.due, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&v->lo_rel, VM_NEVER, __ATOMIC_RELAXED); /* its next free */
	}
}

/* ------------------------------------------------------------ lifecycle */

/* Start-up (and a fork child's): the start snapshot and the first point.
   in_rt set, or before any other thread. */
static void vm_init(void)
{
	const char *s = getauxval(AT_SECURE) ? NULL : getenv("WEAVE_PROC");
	wsize n;
	if (!s || !*s)
		s = "/proc";
	n = strlen(s);
	if (n >= sizeof g_vm.proc)
		n = sizeof g_vm.proc - 1;
	memcpy(g_vm.proc, s, n);
	g_vm.proc[n] = 0;
	g_vm.mono0 = vm_mono();
	g_vm.tick_every = VM_TICKS;
	if (!g_vm.pts)
		g_vm.pts = rt_map(VM_POINTS * sizeof *g_vm.pts);
	vm_snap_take(&g_vm.at_start);
	vm_point(vm_bytes(), 1);
}

/* A fork child: the parent's heap is not the child's (see M inherited).
   One thread. */
RT_RARE static void vm_fork_child(void)
{
	g_vm.bytes = g_vm.allocs = g_vm.frees = g_vm.hi = 0;
	vm_thread_fork_child();
	g_vm.peak = g_vm.peak_allocs = g_vm.peak_frees = g_vm.peak_ns = g_vm.stamp_next = 0;
	g_vm.snap_next = g_vm.snap_bytes = g_vm.snap_blocks = g_vm.snap_ns = g_vm.maps_next = 0;
	g_vm.tl_allocs = g_vm.tl_frees = g_vm.statm_ns = 0;
	g_vm.npts = g_vm.nleaves = 0;
	g_vm.gap = g_vm.ticks = 0;
	g_vm.due = 0;
	g_vm.lock = 0;
	g_vm.at_peak.taken = g_vm.at_exit.taken = 0;
	vm_init();
}

/* Passes this file's mapped buffers to f (the leak scan's exclusions: they
   hold no pointers of the program's). */
RT_RARE static void vm_exclude(void (*f)(const void *p, u64 n))
{
	const struct vm_snap *snaps[3] = {&g_vm.at_start, &g_vm.at_peak, &g_vm.at_exit};
	int i;
	f(g_vm.pts, VM_POINTS * sizeof *g_vm.pts);
	f(g_vm.leaves, (u64)g_vm.cap_leaves * sizeof *g_vm.leaves);
	for (i = 0; i < 3; i++)
		f(snaps[i]->maps.p, snaps[i]->maps.cap);
}
