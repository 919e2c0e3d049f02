/* Eight threads leak a block each from the same line, and a list of
   blocks stays reachable from a global: the summary merges the eight by
   chain ("1,280,000 bytes in 8 blocks definitely lost at threads.c:N work
   <- run"). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 8

void *table[NTHREADS];

static __attribute__((noinline)) void scrub(void)
{
	volatile char buf[16384];
	memset((char *)buf, 0, sizeof buf);
}

static __attribute__((noinline)) void work(long i)
{
	char *lost = malloc(160000); /* site:lost */
	memset(lost, (int)i, 160000);
	table[i] = malloc(100); /* site:kept */
}

static void *run(void *arg)
{
	work((long)arg);
	scrub();
	return NULL;
}

int main(void)
{
	pthread_t t[NTHREADS];
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, run, (void *)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	printf("%d threads\n", NTHREADS);
	return 0;
}
