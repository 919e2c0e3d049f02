/* depth: the same allocation loop run at a given call depth, to show
   whether a profiler's per-allocation cost grows with the depth of the
   stack. Usage: depth D N: descend D calls deep, then make N allocations
   (batches of 64 blocks of 16..248 bytes, freed in reverse order). */
#include <stdio.h>
#include <stdlib.h>

enum { BATCH = 64 };

/* Global, so that the compiler cannot elide a malloc/free pair. */
void *blocks[BATCH];
unsigned long touched;

__attribute__((noinline)) static void churn(long n)
{
	for (long i = 0; i < n; i += BATCH) {
		for (int j = 0; j < BATCH; j++) {
			char *p = malloc(16 + (size_t)(j * 24) % 240);
			if (!p)
				abort();
			p[0] = (char)j;
			blocks[j] = p;
		}
		for (int j = BATCH - 1; j >= 0; j--) {
			touched += *(char *)blocks[j];
			free(blocks[j]);
		}
	}
}

/* The volatile read after the call keeps the recursion a real recursion
   (no tail call, no loop). */
__attribute__((noinline)) static long descend(int d, long n)
{
	volatile int here = d;
	if (d <= 1) {
		churn(n);
		return 0;
	}
	return descend(d - 1, n) + here;
}

int main(int argc, char **argv)
{
	int d = argc > 1 ? atoi(argv[1]) : 10;
	long n = argc > 2 ? atol(argv[2]) : 1000000;
	long s = descend(d - 1, n); /* main is level 1 */
	printf("depth %d: %ld allocations, %ld, %lu\n", d, n - n % BATCH, s, touched);
	return 0;
}
