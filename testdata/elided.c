/* A malloc/free pair whose block is never used, which gcc -O2 deletes,
   beside allocations that are used: weave counts the source's calls
   (README, "The counts are the source's"; TestElidedPair). */
#include <stdio.h>
#include <stdlib.h>

int *volatile sink; /* the used blocks escape: the compiler keeps them */

static void probe(void)
{
	free(malloc(32)); /* never used: gone from the plain -O2 build */
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000, sum = 0;
	for (int i = 0; i < n; i++) {
		int *p = malloc(sizeof *p);
		*p = i;
		sink = p;
		sum += *sink;
		free(p);
		if (i % 10 == 0)
			probe();
	}
	printf("%d\n", sum);
	return 0;
}
