/* A dangling pointer to a block realloc(p, 0) freed: glibc's realloc
   frees p and returns NULL, and hands p's address to the next block of
   its size at once (its tcache), which the program then loses. memcheck,
   which holds freed memory back, hands out another address and calls
   the new blocks definitely lost; so must weave under WEAVE_QUARANTINE,
   which holds such a block as it holds a freed one. Prints how many new
   blocks got a freed one's address. */
#include <stdio.h>
#include <stdlib.h>

#define N 4
char *g_dangling[N];

int main(void)
{
	int i, j, reused = 0;
	for (i = 0; i < N; i++)
		g_dangling[i] = malloc(24);
	for (i = 0; i < N; i++)
		if (realloc(g_dangling[i], 0)) /* glibc: freed, NULL */
			return 1;
	for (i = 0; i < N; i++) {
		char *p = malloc(24);
		p[0] = 1;
		for (j = 0; j < N; j++)
			reused += p == g_dangling[j];
	}
	printf("reused %d\n", reused);
	return 0;
}
