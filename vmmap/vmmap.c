//go:build ignore

/* vmmap.c: the process's memory map, the heap over time, and what held the
   heap at its peak (the runtime part of package vmmap; see
   profile/format.go, records Y, V, L, P and M heap_peak, peak_snapshot).

   Heap in use. Every allocation and free the runtime records also moves
   g_vm.bytes and counts in g_vm.allocs or g_vm.frees. With one thread the
   fast path (vm_alloc, vm_free) is plain loads and stores and one compare
   against g_vm.hi (allocation) or g_vm.lo (free), which send the rare
   cases to the slow paths (vm_up, vm_down):
     - the exact peak: the heap just before the first free after a climb
       is the climb's top, so vm_free compares it with the peak (one more
       compare) and raises it, with the counts then (blocks in use);
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
   Once a second thread is set up (vm_multi), hi is 0 and lo ~0: every
   allocation and free takes the slow path, whose adds are atomic and
   whose peak is a compare-and-swap. (A first thread between its load and
   store of g_vm.bytes at that very moment would lose the second thread's
   first add; a heap that then went below zero is never taken for a
   peak.)
   The timeline keeps at most VM_POINTS points: when full, every other
   point is dropped (its counts added to the next) and the spacing doubled,
   as massif does, so a long run costs no more memory than a short one.

   Maps and statm are copied raw (read() into mmap'd buffers; no stdio, no
   malloc) at start-up, at each peak snapshot and at exit, and parsed by
   package vmmap. An unreadable /proc (a chroot, a sandbox) leaves the
   buffers empty and the error in M maps_error.

   Threading: g_vm.bytes, allocs, frees, peak: see above. Snapshots, the
   timeline and the peak's time: g_vm.lock (a spinlock taken with in_rt
   set; lock order: g_lock, then g_vm.lock). Thresholds read outside the
   lock (hi, lo, tl_hi, tl_lo, snap_next, stamp_next, due) are relaxed
   atomics, written by the lock holder (hi, lo, due by the signal handler
   too): a stale value costs a slow-path call or a point late.

   Test hook: WEAVE_PROC (ignored in a setuid program) names the directory
   read instead of /proc, so that tests can make it unreadable. */

#include "internal.h"

#define VM_POINTS 4096u      /* timeline capacity, a power of two */
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
	u64 bytes, allocs, frees; /* see the top comment */
	u64 hi, lo;               /* slow-path thresholds */
	int due;                  /* the timer asked for a point */
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
		munmap(b->p, b->cap);
		b->cap *= 2;
		if (!(b->p = rt_map(b->cap))) {
			b->cap = b->n = 0;
			return ENOMEM;
		}
	}
}

/* Reads /proc/self/maps into b: 0 or an errno. */
static int vm_read_maps(struct vm_buf *b)
{
	char path[300];
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
static __attribute__((unused)) int vm_next_map(const char **cur, const char *end, struct vm_map *m)
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
	int fd;
	*vm = *rss = -1;
	vm_path(path, sizeof path, "self/statm");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		k = read(fd, b, sizeof b);
		close(fd);
	}
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
	clock_gettime(CLOCK_MONOTONIC, &ts);
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

/* Blocks in use now. */
static u64 vm_blocks(void)
{
	u64 a = vm_load(&g_vm.allocs), f = vm_load(&g_vm.frees);
	return a > f ? a - f : 0;
}

/* Takes snapshot s of the process: time, heap, statm, maps. */
static void vm_snap_take(struct vm_snap *s)
{
	s->ns = vm_now();
	s->bytes = vm_load(&g_vm.bytes);
	s->blocks = vm_blocks();
	vm_statm(&s->vm, &s->rss);
	s->err = vm_read_maps(&s->maps);
	s->taken = 1;
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
			munmap(g_vm.leaves, (wsize)g_vm.cap_leaves * sizeof *nl);
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
	g_vm.tick_every *= 2;
}

/* Sets hi and lo from the timeline thresholds and the peak; with several
   threads, hi 0 and lo ~0 send every allocation and free to the slow path
   (see vm_alloc). */
static void vm_rearm(void)
{
	u64 hi = vm_load(&g_vm.tl_hi), sn = vm_load(&g_vm.snap_next), st = vm_load(&g_vm.stamp_next);
	int multi = __atomic_load_n(&g_multi, __ATOMIC_RELAXED);
	hi = hi < sn ? hi : sn;
	hi = hi < st ? hi : st;
	__atomic_store_n(&g_vm.hi, multi ? 0 : hi, __ATOMIC_RELAXED);
	__atomic_store_n(&g_vm.lo, multi ? ~0ull : vm_load(&g_vm.tl_lo), __ATOMIC_RELAXED);
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
	u64 a = vm_load(&g_vm.allocs), f = vm_load(&g_vm.frees);
	struct vm_point *p;
	__atomic_store_n(&g_vm.due, 0, __ATOMIC_RELAXED);
	if (!g_vm.pts)
		return;
	if (!force && a + f - g_vm.tl_allocs - g_vm.tl_frees < g_vm.gap) {
		vm_arm(b);
		return;
	}
	if (g_vm.npts == VM_POINTS)
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

/* Adds n to the heap (n as a two's complement negative for a free),
   counting one allocation or free, and returns the heap: plain adds with
   one thread, atomic ones with several. */
static u64 vm_add(u64 n, int is_free)
{
	if (!__atomic_load_n(&g_multi, __ATOMIC_RELAXED)) {
		u64 b = vm_load(&g_vm.bytes) + n;
		__atomic_store_n(&g_vm.bytes, b, __ATOMIC_RELAXED);
		if (is_free)
			g_vm.frees++;
		else
			g_vm.allocs++;
		return b;
	}
	__atomic_fetch_add(is_free ? &g_vm.frees : &g_vm.allocs, 1, __ATOMIC_RELAXED);
	return __atomic_add_fetch(&g_vm.bytes, n, __ATOMIC_RELAXED);
}

/* Raises the peak to b, the heap after an allocation or before a free,
   with the counts then. Returns whether b is a new peak. */
static int vm_peak_raise(u64 b)
{
	u64 pk = vm_load(&g_vm.peak);
	while (b > pk && b < 1ull << 62) { /* 2^62: a count lost, see the top */
		if (__atomic_compare_exchange_n(&g_vm.peak, &pk, b, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			__atomic_store_n(&g_vm.peak_allocs, vm_load(&g_vm.allocs), __ATOMIC_RELAXED);
			__atomic_store_n(&g_vm.peak_frees, vm_load(&g_vm.frees), __ATOMIC_RELAXED);
			return 1;
		}
	}
	return 0;
}

/* The slow path of an allocation of n bytes: counts it, then the peak's
   time, a peak snapshot, a timeline point. in_rt set. */
static __attribute__((noinline, cold)) void vm_up(u64 n)
{
	u64 b = vm_add(n, 0);
	int due = __atomic_load_n(&g_vm.due, __ATOMIC_RELAXED);
	if (b > vm_load(&g_vm.peak))
		vm_peak_raise(b);
	if (!due && b <= vm_load(&g_vm.tl_hi) && b <= vm_load(&g_vm.snap_next) && b <= vm_load(&g_vm.stamp_next)) {
		vm_rearm(); /* a stale threshold; with threads, just counted */
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

/* The slow path of a free of n bytes. in_rt set. */
static __attribute__((noinline, cold)) void vm_down(u64 n)
{
	u64 b = vm_add(-n, 1);
	vm_peak_raise(b + n);
	if (!__atomic_load_n(&g_vm.due, __ATOMIC_RELAXED) && b >= vm_load(&g_vm.tl_lo)) {
		vm_rearm();
		return;
	}
	spin_lock(&g_vm.lock);
	vm_point(b, 0);
	spin_unlock(&g_vm.lock);
}

/* Records an allocation of n bytes. in_rt set. The fast path (one thread,
   no threshold crossed) is a load, an add, a compare and two stores;
   with several threads hi is 0 and every call goes to vm_up's atomic
   adds. */
static inline __attribute__((always_inline)) void vm_alloc(u64 n)
{
	u64 b = vm_load(&g_vm.bytes) + n;
	if (__builtin_expect(b >= __atomic_load_n(&g_vm.hi, __ATOMIC_RELAXED), 0)) {
		vm_up(n);
		return;
	}
	__atomic_store_n(&g_vm.bytes, b, __ATOMIC_RELAXED);
	g_vm.allocs++;
}

/* Records a free of n bytes. in_rt set. The heap before the first free
   after a climb is the climb's top: the exact peak, when above the last
   one. */
static inline __attribute__((always_inline)) void vm_free(u64 n)
{
	u64 cur = vm_load(&g_vm.bytes), b = cur - n;
	if (__builtin_expect(b < __atomic_load_n(&g_vm.lo, __ATOMIC_RELAXED), 0)) {
		vm_down(n);
		return;
	}
	if (__builtin_expect(cur > g_vm.peak, 0)) {
		g_vm.peak = cur;
		g_vm.peak_allocs = g_vm.allocs;
		g_vm.peak_frees = g_vm.frees;
	}
	__atomic_store_n(&g_vm.bytes, b, __ATOMIC_RELAXED);
	g_vm.frees++;
}

/* A second thread is being set up: from now on every allocation and free
   takes the slow path, with atomic adds. g_lock held. */
static void vm_multi(void)
{
	__atomic_store_n(&g_vm.hi, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&g_vm.lo, ~0ull, __ATOMIC_RELAXED);
}

/* A sample of the timing signal: every tick_every-th asks for a point at
   the next allocation or free. Async-signal-safe. */
static void vm_tick(void)
{
	u32 t = __atomic_add_fetch(&g_vm.ticks, 1, __ATOMIC_RELAXED);
	if (g_vm.tick_every && t % g_vm.tick_every == 0) {
		__atomic_store_n(&g_vm.due, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&g_vm.hi, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&g_vm.lo, ~0ull, __ATOMIC_RELAXED);
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
	vm_point(vm_load(&g_vm.bytes), 1);
}

/* A fork child: the parent's heap is not the child's (see M inherited).
   One thread. */
static void vm_fork_child(void)
{
	g_vm.bytes = g_vm.allocs = g_vm.frees = 0;
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

/* ---------------------------------------------------------------- output */

static void out_i64(struct out *o, long long v)
{
	if (v < 0) {
		out_str(o, " -1");
		return;
	}
	out_field(o, (u64)v);
}

static void vm_write_snap(struct out *o, const struct vm_snap *s)
{
	const char *cur, *end;
	if (!s->taken)
		return;
	out_str(o, "Y ");
	out_str(o, s->name);
	out_field(o, s->ns);
	out_field(o, s->bytes);
	out_field(o, s->blocks);
	out_i64(o, s->vm);
	out_i64(o, s->rss);
	out_ch(o, '\n');
	o->records++;
	if (s->err || !s->maps.p)
		return;
	for (cur = s->maps.p, end = s->maps.p + s->maps.n; cur < end;) {
		const char *eol = memchr(cur, '\n', (wsize)(end - cur));
		const char *next = eol ? eol + 1 : end;
		if (!eol)
			eol = end;
		if (eol > cur) {
			out_str(o, "V ");
			out_str(o, s->name);
			out_ch(o, ' ');
			out_mem(o, cur, (wsize)(eol - cur));
			out_ch(o, '\n');
			o->records++;
		}
		cur = next;
	}
}

/* Writes the memory records (M, Y, V, L, P) at exit: takes the exit
   snapshot, a last point, and a last peak snapshot if the heap is at its
   peak. ids maps node indices to profile ids. g_lock held, in_rt set. */
static void vm_write(struct out *o, const u32 *ids)
{
	char exe[4096], path[300];
	const struct vm_snap *snaps[3] = {&g_vm.at_start, &g_vm.at_peak, &g_vm.at_exit};
	u64 b;
	ssize_t k;
	u32 i;
	int err = 0, locked;

	/* From a crash handler the thread may hold the lock: give up waiting
	   after a while and write what is there. */
	for (i = 0; (locked = !__atomic_exchange_n(&g_vm.lock, 1, __ATOMIC_ACQUIRE)) == 0 && i < 1u << 24; i++)
		cpu_relax();
	b = vm_load(&g_vm.bytes);
	vm_peak_raise(b);
	if (b == vm_load(&g_vm.peak) && b != g_vm.snap_bytes && b)
		vm_peak_take(b);
	vm_snap_take(&g_vm.at_exit);
	vm_point(b, 1);

	out_str(o, "M page_size");
	out_field(o, (u64)getauxval(AT_PAGESZ));
	out_ch(o, '\n');
	o->records++;
	vm_path(path, sizeof path, "self/exe");
	if ((k = readlink(path, exe, sizeof exe - 1)) > 0 && !memchr(exe, '\n', (wsize)k)) {
		out_str(o, "M exe ");
		out_mem(o, exe, (wsize)k);
		out_ch(o, '\n');
		o->records++;
	}
	out_str(o, "M heap_peak");
	out_field(o, vm_load(&g_vm.peak));
	out_field(o, vm_peak_blocks());
	out_field(o, g_vm.peak_ns);
	out_str(o, "\nM peak_snapshot");
	out_field(o, g_vm.snap_bytes);
	out_field(o, g_vm.snap_blocks);
	out_field(o, g_vm.snap_ns);
	out_str(o, " 0.0625\n"); /* 1 >> VM_TOL_SHIFT */
	o->records += 2;
	for (i = 0; i < 3; i++)
		if (snaps[i]->taken && snaps[i]->err && !err)
			err = snaps[i]->err;
	if (err) {
		out_str(o, "M maps_error reading ");
		vm_path(path, sizeof path, "self/maps");
		out_str(o, path);
		out_str(o, ": ");
		out_str(o, errdesc(err));
		out_ch(o, '\n');
		o->records++;
	}
	for (i = 0; i < 3; i++)
		vm_write_snap(o, snaps[i]);
	for (i = 0; i < g_vm.npts; i++) {
		const struct vm_point *p = &g_vm.pts[i];
		out_ch(o, 'L');
		out_field(o, p->ns);
		out_field(o, p->bytes);
		out_field(o, p->blocks);
		out_field(o, p->allocs);
		out_field(o, p->frees);
		out_i64(o, p->vm);
		out_i64(o, p->rss);
		out_ch(o, '\n');
		o->records++;
	}
	/* P records by node id: the leaves were taken in the writer's order. */
	for (i = 0; i < g_vm.nleaves; i++) {
		out_ch(o, 'P');
		out_field(o, ids[g_vm.leaves[i].node]);
		out_field(o, g_vm.leaves[i].bytes);
		out_field(o, g_vm.leaves[i].blocks);
		out_ch(o, '\n');
		o->records++;
	}
	if (locked)
		spin_unlock(&g_vm.lock);
}
