/* ratio: work in ratio 1:2:3 (a dependency chain the compiler cannot
   shorten; no sleeps), in rounds, for the timing tests' self-time shares.
   Usage: ratio [ksteps [rounds]]. */
#include <stdlib.h>

#include "woven.h"

FN(work1);
FN(work2);
FN(work3);
FN(run);
FN(main);

static volatile unsigned long long sink;

#define SPIN(n)                                                                   \
	do {                                                                      \
		unsigned long long x_ = sink;                                     \
		for (long i_ = 0; i_ < (n); i_++)                                 \
			x_ = x_ * 6364136223846793005ull + 1442695040888963407ull; \
		sink = x_;                                                        \
	} while (0)

__attribute__((noinline)) static void work1(long unit)
{
	ENTER(work1);
	SPIN(1 * unit);
}

__attribute__((noinline)) static void work2(long unit)
{
	ENTER(work2);
	SPIN(2 * unit);
}

__attribute__((noinline)) static void work3(long unit)
{
	ENTER(work3);
	SPIN(3 * unit);
}

__attribute__((noinline)) static void run(long unit, int rounds)
{
	ENTER(run);
	for (int r = 0; r < rounds; r++) {
		work1(unit);
		work2(unit);
		work3(unit);
	}
}

int main(int argc, char **argv)
{
	ENTER(main);
	long steps = (argc > 1 ? atol(argv[1]) : 6000) * 1000;
	int rounds = argc > 2 ? atoi(argv[2]) : 10;
	run(steps / 6 / rounds, rounds);
	return (int)(sink & 0);
}
