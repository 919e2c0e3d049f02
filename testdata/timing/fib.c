/* fib: recursion for call counts and recursive totals. fib is directly
   recursive; is_even and is_odd are mutually recursive; leaf is called from
   several contexts. Usage: fib [n [m]]. */
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;

__attribute__((noinline)) static void leaf(long x)
{
	sink += x;
}

__attribute__((noinline)) static long fib(int n)
{
	if (n < 2) {
		leaf(n);
		return n;
	}
	return fib(n - 1) + fib(n - 2);
}

static int is_odd(unsigned n);

__attribute__((noinline)) static int is_even(unsigned n)
{
	if (n == 0) {
		leaf(1);
		return 1;
	}
	return is_odd(n - 1);
}

__attribute__((noinline)) static int is_odd(unsigned n)
{
	if (n == 0)
		return 0;
	return is_even(n - 1);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;
	unsigned m = argc > 2 ? (unsigned)atoi(argv[2]) : 1001;
	long f = fib(n);
	int even = 0;
	for (unsigned i = 0; i < 10; i++)
		even += is_even(m + i);
	leaf(f);
	printf("fib(%d) = %ld, %d even\n", n, f, even);
	return 0;
}
