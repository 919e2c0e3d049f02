/* mainwork: main does the work, through leaf functions that cannot
   allocate (frameless under --frames auto) and a printf (a call that may
   allocate: main is framed at its calls only). Usage: mainwork [msteps]. */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long long sink;

__attribute__((noinline)) static void spin(long n)
{
	unsigned long long x = sink;
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

int main(int argc, char **argv)
{
	long steps = (argc > 1 ? atol(argv[1]) : 100) * 1000000;
	for (int i = 0; i < 10; i++)
		spin(steps / 10);
	printf("%llu\n", sink & 1);
	return 0;
}
