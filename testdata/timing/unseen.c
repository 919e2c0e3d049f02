/* Threads weave never sees: three burn CPU in a start routine that has
   no frame (--frames auto: it allocates nothing and calls no framed
   function), so they are never set up and their time is in no table;
   main's own work is. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

static void *burn(void *arg)
{
	(void)arg;
	for (long i = 0; i < 100000000; i++)
		sink += (unsigned long)i;
	return NULL;
}

static char *work(int n)
{
	char *p = malloc((size_t)n);
	for (long i = 0; i < 20000000; i++)
		sink += (unsigned long)i;
	return p;
}

int main(void)
{
	pthread_t t[3];
	int i;
	for (i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, burn, NULL);
	free(work(10));
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("%d\n", sink > 0);
	return 0;
}
