/* tail: main only calls work, which churns and prints, and returns what it
   returns, so main is the current function for a few instructions only.
   In sampled mode the CPU time since the last sample, charged as the
   process exits after main returned, must not become main's self time.
   Usage: tail [msteps]. */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long long state = 88172645463325252ull;

/* n steps of xorshift64: a chain the compiler cannot shorten. */
__attribute__((noinline)) static void churn(long n)
{
	unsigned long long x = state;
	while (n-- > 0) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	state = x;
}

__attribute__((noinline)) static int work(int argc, char **argv)
{
	churn((argc > 1 ? atol(argv[1]) : 50) * 1000000);
	printf("%llu\n", state & 1);
	return 0;
}

int main(int argc, char **argv)
{
	return work(argc, argv);
}
