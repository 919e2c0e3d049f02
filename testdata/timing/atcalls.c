/* atcalls: apply() calls through a pointer 1,000 times a function that
   allocates nothing and 10 times one that allocates. Under --frames auto
   apply is framed at its calls (those of the allocating target): weave
   counts 10 of its 1,010 calls. Prints the sum of the results. */
#include <stdio.h>
#include <stdlib.h>

static void *kept[10];
static int nkept;

__attribute__((noinline)) static long twice(long x)
{
	return 2 * x;
}

__attribute__((noinline)) static long keep(long x)
{
	kept[nkept++ % 10] = malloc(16);
	return x + 1;
}

__attribute__((noinline)) static long apply(long (*f)(long), long x)
{
	return f(x);
}

int main(void)
{
	long s = 0;
	int i;
	for (i = 0; i < 1000; i++)
		s += apply(twice, i);
	for (i = 0; i < 10; i++)
		s += apply(keep, i);
	for (i = 0; i < 10; i++)
		free(kept[i]);
	printf("%ld\n", s);
	return 0;
}
