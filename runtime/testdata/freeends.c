/* The ends of the advice's fast paths under the C library's malloc:
   blocks at the edge of the two trees (requests of 128-136 bytes in
   chunks under 160, and, without the tcache, a request of 125 given a
   whole free chunk of 160: the chunk header named the wrong tree when a
   free read it to choose one), frees that take the
   heap timeline's slow path (the heap falls from its peak), blocks
   scrubbed whole (65-256 bytes) or in part, and the real free after the
   record is gone. The program keeps its own tally of its woven calls
   and prints it in the runtime's summary format: the test compares the
   two, and valgrind's. It also checks the scrub: a block of 17-256 bytes
   filled, freed and handed out again at once (the tcache) reads 0 past
   the C library's first 16 bytes; it prints how many it saw. */
#include "woven.h"
#include <stdio.h>
#include <stdlib.h>

FN(main);
FN(ring);

static unsigned long allocs, frees, bytes, live_bytes, live_blocks, reused, dirty;

static void *got(void *p, unsigned long n)
{
	if (!p)
		abort();
	allocs++;
	bytes += n;
	live_bytes += n;
	live_blocks++;
	return p;
}

static void gone(unsigned long n)
{
	frees++;
	live_bytes -= n;
	live_blocks--;
}

/* Sizes 0..399 in a ring of 64 blocks, each replaced block freed: the
   heap climbs to a peak and falls back at the end, so frees cross the
   timeline's thresholds. */
static void ring(int rounds)
{
	ENTER(ring);
	enum { R = 64 };
	void *b[R] = {0};
	unsigned long s[R] = {0};
	int i;
	for (i = 0; i < rounds; i++) {
		int k = i % R;
		if (b[k]) {
			W_FREE(ring, b[k]);
			gone(s[k]);
		}
		s[k] = (unsigned long)(i * 7 % 400);
		b[k] = got(W_MALLOC(ring, s[k]), s[k]);
		memset(b[k], i, s[k]);
	}
	for (i = 0; i < R; i++)
		if (b[i]) {
			W_FREE(ring, b[i]);
			gone(s[i]);
		}
}

int main(void)
{
	ENTER(main);
	static char outbuf[BUFSIZ];
	unsigned long n;
	void *p, *q, *pin;
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	ring(20000);
	/* Requests of 128-136 bytes: the coarse tree, chunks of 144. */
	for (n = 128; n <= 136; n++) {
		p = got(W_MALLOC(main, n), n);
		W_FREE(main, p);
		gone(n);
	}
	/* A chunk of 160 free, then a request of 125 (a chunk of 144): the
	   C library hands out the whole 160 when the tcache does not take
	   it (GLIBC_TUNABLES=glibc.malloc.tcache_count=0). */
	p = got(W_MALLOC(main, 150), 150);
	pin = got(W_MALLOC(main, 16), 16);
	W_FREE(main, p);
	gone(150);
	q = got(W_MALLOC(main, 125), 125);
	W_FREE(main, q);
	gone(125);
	W_FREE(main, pin);
	gone(16);
	/* The scrub, seen through the tcache's reuse. */
	for (n = 17; n <= 256; n++) {
		unsigned long i;
		p = got(W_MALLOC(main, n), n);
		memset(p, 0xab, n);
		W_FREE(main, p);
		gone(n);
		q = got(W_MALLOC(main, n), n);
		if (q == p) {
			reused++;
			for (i = 16; i < n; i++)
				dirty += ((unsigned char *)q)[i] != 0;
		}
		W_FREE(main, q);
		gone(n);
	}
	printf("in use at exit: %lu bytes in %lu blocks\n", live_bytes, live_blocks);
	printf("total heap usage: %lu allocs, %lu frees, %lu bytes allocated\n", allocs, frees, bytes);
	printf("reused %lu, dirty bytes %lu\n", reused, dirty);
	return 0;
}
