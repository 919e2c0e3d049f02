/* ratio: three functions doing fixed amounts of work in ratio 1:2:3
   (a dependency chain the compiler cannot shorten; no sleeps), called by
   run() from main; and an empty function called many times from empties(),
   whose self time must come out as ~0 once the runtime's own cost is
   subtracted (exact mode).
   Usage: ratio [msteps [rounds [empties]]]: msteps million steps in all,
   in rounds rounds of work1, work2, work3. */
#include <stdio.h>
#include <stdlib.h>

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
	SPIN(1 * unit);
}

__attribute__((noinline)) static void work2(long unit)
{
	SPIN(2 * unit);
}

__attribute__((noinline)) static void work3(long unit)
{
	SPIN(3 * unit);
}

__attribute__((noinline)) static void empty(void)
{
	__asm__ volatile("");
}

__attribute__((noinline)) static void run(long unit, int rounds)
{
	for (int r = 0; r < rounds; r++) {
		work1(unit);
		work2(unit);
		work3(unit);
	}
}

__attribute__((noinline)) static void empties(long n)
{
	for (long i = 0; i < n; i++)
		empty();
}

int main(int argc, char **argv)
{
	long steps = (argc > 1 ? atol(argv[1]) : 300) * 1000000;
	int rounds = argc > 2 ? atoi(argv[2]) : 10;
	long n = argc > 3 ? atol(argv[3]) : 1000000;
	run(steps / 6 / rounds, rounds);
	empties(n);
	printf("%llu\n", sink & 1);
	return 0;
}
