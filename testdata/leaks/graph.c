/* A random graph of 128-byte blocks, for the leak kinds where cliques meet:
   cycles of lost blocks, cycles pointed into from lost blocks above and
   below them (which of them memcheck calls definitely lost depends on
   the blocks' address order), chains of indirectly lost blocks, lost
   blocks pointing into reachable ones, blocks reached only through
   interior pointers and what they lead to. The graph is laid out by
   address rank (the blocks are sorted by address before they are linked),
   so it is the same graph under any allocator: under valgrind too.
   Usage: graph SEED [dense|small]. dense adds a reachable chain of arrays
   of 1.2 million pointers in all: more edges than the leak scan's graph
   of every block holds, so it lists the lost blocks' edges only. small
   adds 48,000 blocks of 16 bytes in two lists, one kept, one lost: too
   small for the graph of every block or the blocks' nodes, which the scan
   then finds again by walking the side table. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 3000
#define WORDS 16 /* a block's words */
#define SMALL 48000
#define DENSE 1200000

void **keep;   /* start pointers: still reachable */
char **inner;  /* interior pointers: possibly lost */
void *densep;  /* the arrays of pointers (dense) */
void *smallp;  /* the kept list of small blocks (small) */

static unsigned long long seed;

static unsigned rnd(unsigned n)
{
	seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)(seed >> 33) % n;
}

/* Sorts by address in place (qsort would leave copies of the pointers in
   a freed buffer of its own, which a later block may take over). */
static void by_address(uintptr_t *b, int n)
{
	for (int i = 1; i < n; i++) {
		uintptr_t x = b[i];
		int j = i;
		for (; j > 0 && b[j - 1] > x; j--)
			b[j] = b[j - 1];
		b[j] = x;
	}
}

static __attribute__((noinline)) void build(int dense)
{
	uintptr_t *b = calloc(N, sizeof *b);
	int nk = 0, ni = 0;
	keep = calloc(N, sizeof *keep);
	inner = calloc(N, sizeof *inner);
	for (int i = 0; i < N; i++)
		b[i] = (uintptr_t)calloc(1, WORDS * sizeof(void *)); /* site:node */
	by_address(b, N);
	for (int i = 0; i < N; i++) {
		void **x = (void **)b[i];
		unsigned d = rnd(10), out = d < 4 ? 0 : d < 8 ? 1 : 2;
		for (unsigned k = 0; k < out; k++) {
			/* Mostly near neighbours (small cycles, chains), some far. */
			int j = rnd(3) ? i + (int)rnd(17) - 8 : (int)rnd(N);
			if (j < 0 || j >= N)
				j = (int)rnd(N);
			x[rnd(WORDS)] = (char *)b[j] + (rnd(5) ? 0 : 8 * (1 + rnd(WORDS - 1)));
		}
		d = rnd(100);
		if (d < 8)
			keep[nk++] = x;
		else if (d < 11)
			inner[ni++] = (char *)x + 16;
	}
	for (int k = 0; dense && k < DENSE / 4096; k++) {
		/* A chain of arrays of pointers, kept. */
		void **p = malloc(4096 * sizeof *p); /* site:dense */
		p[0] = densep;
		for (int i = 1; i < 4096; i++)
			p[i] = keep[i % nk];
		densep = p;
	}
	memset(b, 0, N * sizeof *b);
	free(b);
}

static __attribute__((noinline)) void lose_small(void)
{
	void **lost = NULL;
	for (int i = 0; i < SMALL; i++) {
		void **x = malloc(2 * sizeof *x); /* site:small */
		if (i % 2) {
			x[0] = smallp, x[1] = NULL;
			smallp = x;
		} else {
			x[0] = lost, x[1] = NULL;
			lost = x;
		}
	}
}

/* Overwrites the dead stack frames below, so that no stale copy of a lost
   pointer is left where a conservative scan would see it. */
static __attribute__((noinline)) void scrub(void)
{
	volatile char buf[16384];
	memset((char *)buf, 0, sizeof buf);
}

int main(int argc, char **argv)
{
	seed = argc > 1 ? strtoull(argv[1], 0, 10) : 1;
	build(argc > 2 && strcmp(argv[2], "dense") == 0);
	if (argc > 2 && strcmp(argv[2], "small") == 0)
		lose_small();
	/* Blocks allocated and freed last: no copy of a lost block's address
	   left where the last allocations were noted. */
	for (int i = 0; i < 16; i++)
		free(malloc(16 + 16 * (i % 4)));
	scrub();
	printf("graph %llu\n", seed);
	return 0;
}
