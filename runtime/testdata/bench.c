/* Cost of the runtime: ns per malloc+free pair, plain and through the
   runtime, back to back and with a working set of live blocks replaced at
   random. Leaves the woven working set allocated, so that WEAVE_STATS=1
   shows the side table's bytes per live block. Prints "name ns" lines.
   Usage: bench [pairs [live]]. */
#include "woven.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

FN(main);
FN(pair);

#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static unsigned long long rng = 88172645463325252ull;

static unsigned long long next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void pair(void)
{
	ENTER(pair);
	void *p = W_MALLOC(pair, 32);
	KEEP(p);
	W_FREE(pair, p);
}

int main(int argc, char **argv)
{
	ENTER(main);
	long n = argc > 1 ? atol(argv[1]) : 10000000, live = argc > 2 ? atol(argv[2]) : 1000000, i;
	void **set = calloc((size_t)live, sizeof *set);
	double t;

	t = now();
	for (i = 0; i < n; i++) {
		void *p = malloc(32);
		KEEP(p);
		free(p);
	}
	printf("plain_pair %.1f\n", (now() - t) * 1e9 / (double)n);
	t = now();
	for (i = 0; i < n; i++) {
		void *p = W_MALLOC(main, 32);
		KEEP(p);
		W_FREE(main, p);
	}
	printf("woven_pair %.1f\n", (now() - t) * 1e9 / (double)n);
	t = now();
	for (i = 0; i < n; i++)
		pair();
	printf("woven_call_pair %.1f\n", (now() - t) * 1e9 / (double)n);

	for (i = 0; i < live; i++)
		set[i] = malloc(16 + next() % 240);
	t = now();
	for (i = 0; i < n; i++) {
		unsigned long long r = next();
		long j = (long)(r % (unsigned long long)live);
		free(set[j]);
		set[j] = malloc(16 + (r >> 32) % 240);
	}
	printf("plain_workingset %.1f\n", (now() - t) * 1e9 / (double)n);
	for (i = 0; i < live; i++)
		free(set[i]);

	for (i = 0; i < live; i++)
		set[i] = W_MALLOC(main, 16 + next() % 240);
	t = now();
	for (i = 0; i < n; i++) {
		unsigned long long r = next();
		long j = (long)(r % (unsigned long long)live);
		W_FREE(main, set[j]);
		set[j] = W_MALLOC(main, 16 + (r >> 32) % 240);
	}
	printf("woven_workingset %.1f\n", (now() - t) * 1e9 / (double)n);
	fflush(stdout);
	return 0;
}
