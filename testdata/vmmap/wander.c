/* A heap that wanders just below its high-water mark and now and then
   passes it by a few bytes: blocks of pseudo-random sizes (8-300 bytes)
   allocated and freed (a random one) in phases that climb (two
   allocations a free), hover (one for one), sink (two frees an
   allocation) and hover again, so that every climb tops out near the
   last; then, back near the top, a block at a time is freed and one a
   byte larger allocated, each a new peak by one byte. Prints its own
   high-water mark of bytes in use and the blocks in use the first time
   it was reached. */
#include <stdio.h>
#include <stdlib.h>

#define MAXB 8192
static char *live[MAXB];
static long sizes[MAXB];
static long in_use, nlive, high, high_blocks;
static unsigned rng = 12345;

static unsigned next(void)
{
	rng = rng * 1103515245u + 12345u;
	return rng >> 16;
}

static void put_n(long n)
{
	live[nlive] = malloc(n);
	live[nlive][0] = (char)n;
	sizes[nlive++] = n;
	in_use += n;
	if (in_use > high) {
		high = in_use;
		high_blocks = nlive;
	}
}

static void put(void)
{
	put_n(8 + next() % 293);
}

/* Frees a random block; its size. */
static long drop(void)
{
	long i = next() % nlive, n = sizes[i];
	free(live[i]);
	in_use -= n;
	live[i] = live[--nlive];
	sizes[i] = sizes[nlive];
	return n;
}

int main(void)
{
	static const unsigned up[4] = {2, 1, 1, 1}, of[4] = {3, 2, 3, 2}; /* allocations in `of` steps */
	long step;
	for (step = 0; step < 120000; step++) {
		int phase = (int)(step / 3000 % 4);
		if (nlive == 0 || (nlive < MAXB && next() % of[phase] < up[phase]))
			put();
		else
			drop();
	}
	while (in_use + 300 < high && nlive < MAXB)
		put();
	for (step = 0; step < 1000; step++)
		put_n(drop() + 1);
	while (nlive)
		drop();
	printf("wander high %ld blocks %ld\n", high, high_blocks);
	return 0;
}
