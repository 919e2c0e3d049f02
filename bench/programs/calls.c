/* calls: the cost of function entry and exit, nothing else. Naive
   recursive fib plus a loop of two small non-inlined calls; no allocation.
   Usage: calls FIB LOOP (calls made: fib's 2*fib(FIB+1)-1, plus 2*LOOP).
   fib(35) + 10,000,000 iterations is about 50 million calls. */
#include <stdio.h>
#include <stdlib.h>

/* The & keeps gcc from turning one of the two recursive calls into a loop
   (tail recursion with an accumulator), so every build makes every call. */
__attribute__((noinline)) static long fib(int n)
{
	if (n < 2)
		return n;
	return (fib(n - 1) + fib(n - 2)) & 0x7fffffffffffL;
}

__attribute__((noinline)) static unsigned step(unsigned x)
{
	return x * 1103515245u + 12345u;
}

__attribute__((noinline)) static unsigned mix(unsigned x, unsigned y)
{
	return (x ^ (y >> 3)) + 7u;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 30;
	long loop = argc > 2 ? atol(argv[2]) : 1000000;
	long f = fib(n);
	unsigned x = 1;
	for (long i = 0; i < loop; i++)
		x = mix(step(x), (unsigned)i);
	printf("fib(%d) = %ld, x = %u\n", n, f, x);
	return 0;
}
