/* Dangling pointers: the program keeps, in globals, pointers to blocks it
   freed; glibc hands those addresses out again at once (its tcache) to
   blocks the program then loses. memcheck, which holds freed memory back,
   hands out other addresses and calls the new blocks definitely lost;
   the scan of the native heap finds the old pointers to them, reachable,
   unless WEAVE_QUARANTINE holds the freed blocks back as memcheck does
   (flac's test_libFLAC: its test objects' globals). A realloc that
   memcheck moves leaves its old address dangling too. Prints how many
   new blocks got a freed one's address. */
#include <stdio.h>
#include <stdlib.h>

#define N 4
char *g_dangling[N + 1];

static __attribute__((noinline)) int lose(void)
{
	int i, j, reused = 0;
	for (i = 0; i < N; i++) {
		char *p = malloc(1);
		*p = (char)i;
		for (j = 0; j <= N; j++)
			reused += p == g_dangling[j];
	}
	return reused;
}

int main(void)
{
	int i, reused;
	char *r = malloc(24);
	for (i = 0; i < N; i++)
		g_dangling[i] = malloc(1);
	for (i = 0; i < N; i++)
		free(g_dangling[i]);
	g_dangling[N] = r;
	r = realloc(r, 4000); /* moved (memcheck's always does): r's old address dangles */
	reused = lose();
	printf("reused %d\n", reused);
	free(r);
	return 0;
}
