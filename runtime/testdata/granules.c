/* An allocator that packs blocks 8 bytes apart, so that up to four live
   blocks share one 32-byte granule of the side table's radix part (the
   others go to its spill table), blocks of 1 GiB and more, whose size
   does not fit a radix slot, and a block freed behind the runtime's back
   whose address comes back at a size of the other radix tree. The program keeps its own tally of what it
   allocated and freed and prints it in the runtime's summary format: the
   test compares the two. Its malloc family replaces the C library's (and
   the runtime's interposed one), so only the woven calls are counted. */
#include "woven.h"
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static char arena[1 << 20] __attribute__((aligned(32)));
static unsigned long used;
static void *reuse; /* set: the next malloc returns it */

void *malloc(unsigned long n)
{
	void *p;
	if (reuse) {
		p = reuse;
		reuse = NULL;
		return p;
	}
	if (n >= 1ul << 30) {
		p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	if (used + n + 8 > sizeof arena)
		return NULL;
	p = arena + used;
	used += n ? (n + 7) & ~7ul : 8;
	return p;
}

void free(void *p) { (void)p; }

void *calloc(unsigned long n, unsigned long size)
{
	void *p = malloc(n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

void *realloc(void *p, unsigned long n)
{
	void *q = malloc(n);
	if (q && p)
		memmove(q, p, n < 8 ? n : 8); /* the tests' blocks hold at most 8 bytes */
	return q;
}

FN(main);

enum { N = 1000 };
static void *blk[N];
static unsigned long sz[N];
static unsigned long allocs, frees, bytes, live_bytes, live_blocks;

static void got(void *p, unsigned long n)
{
	allocs++;
	bytes += n;
	live_bytes += n;
	live_blocks++;
	(void)p;
}

static void gone(unsigned long n)
{
	frees++;
	live_bytes -= n;
	live_blocks--;
}

int main(void)
{
	ENTER(main);
	static char outbuf[BUFSIZ];
	void *big, *big2;
	int i;
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	for (i = 0; i < N; i++) {
		sz[i] = (unsigned long)(i % 8) + 1;
		blk[i] = W_MALLOC(main, sz[i]);
		got(blk[i], sz[i]);
	}
	for (i = N - 1; i >= 0; i -= 3) { /* every third, from the end */
		W_FREE(main, blk[i]);
		gone(sz[i]);
		blk[i] = NULL;
	}
	for (i = 0; i < N; i += 2) { /* the even ones left: moved, 5 bytes */
		if (!blk[i])
			continue;
		blk[i] = W_REALLOC(main, blk[i], 5);
		gone(sz[i]);
		got(blk[i], sz[i] = 5);
	}
	for (i = 1; i < N; i += 4) {
		if (!blk[i])
			continue;
		W_FREE(main, blk[i]);
		gone(sz[i]);
		blk[i] = NULL;
	}
	big = W_MALLOC(main, (1ul << 30) + 3);
	big2 = W_MALLOC(main, (3ul << 30) + 5);
	if (!big || !big2)
		return 1;
	got(big, (1ul << 30) + 3);
	got(big2, (3ul << 30) + 5);
	W_FREE(main, big);
	gone((1ul << 30) + 3);
	/* Freed behind the runtime's back (a plain free, not advised), then
	   handed out again at 200 bytes: the runtime counts the stale 16-byte
	   block as freed when it sees its address again. */
	used = (used + 127) & ~127ul; /* a granule of its own in either tree */
	big = W_MALLOC(main, 16);
	got(big, 16);
	free(big);
	gone(16);
	reuse = big;
	big = W_MALLOC(main, 200);
	got(big, 200);
	W_FREE(main, big);
	gone(200);
	printf("in use at exit: %lu bytes in %lu blocks\n", live_bytes, live_blocks);
	printf("total heap usage: %lu allocs, %lu frees, %lu bytes allocated\n", allocs, frees, bytes);
	return 0;
}
