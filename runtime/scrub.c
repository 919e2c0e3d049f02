//go:build ignore

/* scrub.c: freed blocks zeroed for the leak scan, which reads the native
   heap: free's scrub, and realloc's moves made here so that the old block
   is scrubbed too; WEAVE_QUARANTINE's freed blocks held back. */

/* A block about to go back to the allocator: its bytes zeroed when the
   leak scan will run. A block the allocator hands out again keeps the
   bytes its program did not write (glibc's writes only its first 16-32):
   memcheck calls them undefined and never reads them as pointers; read
   as such, a stale pointer in a reused block made a block memcheck calls
   definitely lost look reachable (an array of pointers freed without its
   elements, its memory reused: testdata/leaks/reusebig.c). glibc hands
   out again blocks of any size it does not unmap, so all are scrubbed:
   up to SCRUB_MAX bytes by stores on the fast path, larger ones by
   scrub_large. A block under 8 bytes holds no pointer. The stores from a
   block's end are at any byte (a block's size need not be a multiple of
   8): scrub16 is aligned to 1, as movups is (aligned 8, the woven
   program's -fsanitize=undefined reported each store at such an end). */
#define SCRUB_MAX 256
typedef u64 scrub16 __attribute__((vector_size(16), aligned(1), may_alias));
typedef u64 scrub8 __attribute__((may_alias));

/* The offset d if n > lim, else 0, computed without a branch: sizes
   of 65-256 bytes go either way of 128 (the server's, random: 59 k of
   142 k mispredicted), and four stores repeated cost less than a branch
   mispredicted. scrub_small keeps its test of 32: small sizes are
   mostly predictable, and repeating its stores cost binary-trees 1.4%
   more instructions. */
static inline u64 scrub_step(u64 n, u64 lim, u64 d)
{
	u64 v = n > lim;
	__asm__("" : "+r"(v)); /* kept a value: gcc would make it a branch again */
	return v * d;
}

/* Whether p is a chunk glibc mapped for itself: its free unmaps it, and
   it is never handed out again. Only over glibc's malloc (g_spaced). */
static inline int chunk_mapped(void *p)
{
	return g_spaced && (((wsize *)p)[-1] & 2); /* glibc's IS_MMAPPED */
}

/* The words of p[0, n), n at least 64, zeroed, read 64 bytes at a time
   and written only where not already zero, so that pages the program
   never wrote stay the kernel's zero page (a large buffer mostly unused:
   a memset would make all of it resident). The last 64 bytes are read
   again from the end (overlapping); the bytes past the last whole word
   hold no aligned pointer. */
static inline __attribute__((always_inline)) void scrub_words(void *p, u64 n)
{
	typedef u64 w64 __attribute__((may_alias));
	w64 *w = p, *e = (w64 *)((char *)p + (n & ~(u64)7)) - 8;
	for (;; w += 8) {
		if (w > e)
			w = e;
		if (w[0] | w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7])
			w[0] = w[1] = w[2] = w[3] = w[4] = w[5] = w[6] = w[7] = 0;
		if (w == e)
			return;
	}
}

/* scrub_freed's blocks of more than SCRUB_MAX bytes, up to
   SCRUB_LARGE_MAX: a larger one keeps its bytes (reading a block of
   hundreds of KiB at every free doubled the memory traffic of a program
   that builds a long string by copies: jq's join, 2.2x its time). */
#define SCRUB_LARGE_MAX (64 << 10)
static __attribute__((noinline)) void scrub_large(void *p, u64 n)
{
	if (n <= SCRUB_LARGE_MAX && !chunk_mapped(p))
		scrub_words(p, n);
}

/* scrub_freed's blocks of 65 to SCRUB_MAX bytes (larger: scrub_large).
   16-byte stores from each end, which overlap in the middle (as memset
   does), here and below:
   a loop costs more (or becomes a call to memset). The middle four of
   each end's eight repeat its first four unless the block is over 128
   bytes (scrub_step). */
static inline __attribute__((always_inline)) void scrub_big_inline(void *p, u64 n)
{
	const scrub16 z = {0};
	u64 d;
	if (__builtin_expect(n > SCRUB_MAX, 0)) {
		scrub_large(p, n);
		return;
	}
	d = scrub_step(n, 128, 64);
	scrub16 *a = p, *e = (scrub16 *)((char *)p + n) - 1;
	scrub16 *am = (scrub16 *)((char *)p + d), *em = (scrub16 *)((char *)e - d);
	am[3] = am[2] = am[1] = am[0] = z;
	em[-3] = em[-2] = em[-1] = em[0] = z;
	a[3] = a[2] = a[1] = a[0] = z;
	e[-3] = e[-2] = e[-1] = e[0] = z;
}

static __attribute__((noinline)) void scrub_big(void *p, u64 n)
{
	scrub_big_inline(p, n);
}

/* Whether a freed block of more than 64 bytes goes to scrub_big (its size
   no longer matters here: scrub_large bounds the large ones). */
static inline int scrub_big_due(void)
{
	return __builtin_expect(g_scrub, 1);
}

/* scrub_freed of a block of at most 64 bytes: no call. */
static inline __attribute__((always_inline)) void scrub_small(void *p, u64 n)
{
	const scrub16 z = {0};
	scrub16 *a = p, *e = (scrub16 *)((char *)p + n) - 1;
	if (!__builtin_expect(g_scrub, 1) || n < 8)
		return;
	if (n < 16) {
		*(scrub8 *)p = 0;
		return;
	}
	if (n > 32)
		a[1] = e[-1] = z;
	a[0] = e[0] = z;
}

static inline __attribute__((always_inline)) void scrub_freed(void *p, u64 n)
{
	if (n > 64) {
		if (scrub_big_due())
			scrub_big(p, n);
		return;
	}
	scrub_small(p, n);
}

/* WEAVE_QUARANTINE=MiB: freed blocks held back from the allocator, the
   oldest given back first, as memcheck holds them (--freelist-vol, 20
   MB). A pointer the program kept to a block it freed (a dangling one)
   then points to memory no new block gets while it is held: without it
   glibc hands the address out again at once (its tcache), and the scan
   takes the old pointer for one to the new block, which the program may
   lose (flac's test_libFLAC: 8 blocks memcheck calls definitely lost
   were reachable so). Off by default: held blocks cost their memory, and
   the program loses the reuse of cache-warm blocks glibc gives it. While
   it is on, the advice keeps off its fast paths (ATTN_HELD) and realloc
   always moves a block, as memcheck's does. Held blocks are scrubbed. */
static struct {
	u32 lock, head, n, cap; /* a ring of cap entries, n of them from head */
	u64 bytes, max;         /* the bytes held, and the most to hold */
	struct held_ent {
		void *p;
		u64 n;
	} *q;
} g_held;

/* Reads WEAVE_QUARANTINE (ls_config). */
static void held_config(void)
{
	const char *s = rt_env("WEAVE_QUARANTINE");
	u64 mib = parse_u64(s, 1u << 31);
	if (mib == 1u << 31) {
		if (s && *s)
			rt_warn("WEAVE_QUARANTINE: want a number of MiB; holding no freed block back\n");
		return;
	}
	if (!mib || g_held.q)
		return;
	g_held.cap = mib << 20 >> 4 < 1u << 20 ? (u32)(mib << 20 >> 4) : 1u << 20;
	if (!(g_held.q = rt_map((wsize)g_held.cap * sizeof *g_held.q)))
		return;
	g_held.max = mib << 20;
	__atomic_fetch_or(&g_tp_attn, ATTN_HELD, __ATOMIC_SEQ_CST); /* advice.c's fast paths */
}

/* The words of p from byte a (a multiple of 8) to byte e zeroed. */
static void scrub_span(char *p, u64 a, u64 e)
{
	if (e < a + 8)
		return;
	if (e - a >= 64) {
		scrub_words(p + a, e - a);
		return;
	}
	for (; a + 8 <= e; a += 8)
		*(scrub8 *)(p + a) = 0;
}

/* A held block of n bytes that glibc mapped for itself: scrub_freed left
   it (glibc's free unmaps it), but held it stays mapped, an anonymous
   mapping with no live block that the leak scan reads as a root, its
   pointers making blocks memcheck calls definitely lost reachable
   (testdata/leaks/heldmapped.c). Its bytes before the first page
   boundary are zeroed, its pages after it given back (MADV_DONTNEED:
   zero when read, and no longer resident); the chunk's header stays for
   glibc's free. */
static __attribute__((noinline)) void held_scrub_mapped(void *p, u64 n)
{
	uintptr_t a = (uintptr_t)p, pg = (a + 4095) & ~(uintptr_t)4095;
	uintptr_t end = a - 16 + (((wsize *)p)[-1] & ~(wsize)7);
	int e = errno;
	scrub_span(p, 0, pg - a < n ? pg - a : n);
	if (end > pg)
		madvise((void *)pg, end - pg, MADV_DONTNEED);
	errno = e;
}

/* Gives freed (and scrubbed) block p of n bytes to the allocator, or holds
   it back and gives the oldest held ones, as many as the bound says. Not
   a block unknown (n 0) or past the bound. */
static __attribute__((noinline)) void held_free(void *p, u64 n)
{
	if (!g_held.max || !n || n > g_held.max) {
		lib_free(p);
		return;
	}
	if (chunk_mapped(p))
		held_scrub_mapped(p, n);
	spin_lock(&g_held.lock);
	while (g_held.n == g_held.cap || g_held.bytes + n > g_held.max) {
		struct held_ent *o = &g_held.q[g_held.head];
		lib_free(o->p);
		g_held.bytes -= o->n;
		g_held.head = g_held.head + 1 == g_held.cap ? 0 : g_held.head + 1;
		g_held.n--;
	}
	g_held.q[(g_held.head + g_held.n) % g_held.cap] = (struct held_ent){p, n};
	g_held.n++;
	g_held.bytes += n;
	spin_unlock(&g_held.lock);
}

/* Whether freed block p of n bytes goes to held_free. */
static inline int held_due(u64 n)
{
	return __builtin_expect(g_held.max != 0, 0) && n;
}

/* A realloc of known block p from on bytes down to n: the words past n
   zeroed first, as free's are. glibc splits the tail off as a free chunk
   (n 0: frees it all), unscrubbed, and hands it out again. A shrink never
   fails on glibc's heap, so the program loses no bytes it may read. */
static __attribute__((noinline)) void realloc_shrinks(void *p, u64 n, u64 on)
{
	if (on - n <= SCRUB_LARGE_MAX && !chunk_mapped(p))
		scrub_span(p, (n + 7) & ~(u64)7, on);
}

/* Whether the realloc of known block p (side-table entry o) to n bytes is
   one the C library's would move, of a block of 8 to REALLOC_MOVE_MAX
   bytes: glibc frees the old chunk inside realloc, unscrubbed, and hands
   it out again with the pointers it held (testdata/leaks/reallocmoved.c:
   a moved array of pointers, reused by a block of its size, made blocks
   memcheck calls definitely lost look reachable). Only over glibc's
   malloc, whose usable size tells (n past it: a move, or a grow into the
   next chunk), and where every free is the runtime's. Larger blocks are
   left to glibc, which may grow them in place (a buffer grown a little
   at a time would be copied at every step). A shrink scrubs the tail.
   Under WEAVE_QUARANTINE every realloc to a size moves (held_free). */
#define REALLOC_MOVE_MAX 4096
static inline int realloc_moves(const struct ent *o, void *p, wsize n)
{
	u64 on = o->val >> NODE_BITS;
	if (!__builtin_expect(g_scrub, 1) || !g_spaced || frees_bypass())
		return 0;
	if (__builtin_expect(g_held.max != 0, 0))
		return 1; /* realloc(p, 0) too: realloc_scrubbed holds p */
	if (on < 8)
		return 0;
	if (n < on) {
		realloc_shrinks(p, n, on);
		return 0;
	}
	return on <= REALLOC_MOVE_MAX && n > on && n > malloc_usable_size(p);
}

/* realloc_moves's move, made here so that the old block is scrubbed
   before it goes back: the new block, the bytes of the old it keeps
   copied, the old one zeroed and freed (or held: WEAVE_QUARANTINE).
   NULL (errno ENOMEM) leaves p as it was. n 0 (under WEAVE_QUARANTINE):
   p freed, held, and NULL, as glibc's realloc(p, 0) frees p; given to
   glibc, its address went to the next block of its size at once, and a
   pointer the program kept to p reached that block
   (testdata/leaks/danglingzero.c). */
static __attribute__((noinline)) void *realloc_scrubbed(void *p, u64 on, wsize n)
{
	void *r;
	if (!n) {
		scrub_freed(p, on);
		held_free(p, on);
		return NULL;
	}
	if ((r = lib_malloc(n))) {
		memcpy(r, p, on < n ? on : n);
		scrub_freed(p, on);
		held_free(p, on);
	}
	return r;
}
