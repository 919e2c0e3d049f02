/* Recursion deeper than the timed frames' stack's maximum depth (in a
   thread with a large stack): untimed frames take no slot, so every
   level is pushed and counted; nothing breaks, and cur is right again
   once the recursion unwinds. */
#include "woven.h"
#include <pthread.h>
#include <stdlib.h>

FN(main);
FN(run);
FN(deep);

static long depth = (1L << 20) + 1000;

static void deep(long n)
{
	ENTER(deep);
	if (n)
		deep(n - 1);
	else
		W_MALLOC(deep, 1); /* leaked, charged to the deepest pushed node */
}

static void *run(void *arg)
{
	ENTER(run);
	(void)arg;
	deep(depth);
	return W_MALLOC(run, 2); /* leaked, main thread's run > (thread) */
}

int main(int argc, char **argv)
{
	ENTER(main);
	pthread_attr_t at;
	pthread_t th;
	void *r;
	if (argc > 1)
		depth = atol(argv[1]);
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, (size_t)512 << 20);
	if (pthread_create(&th, &at, run, NULL) != 0)
		return 1;
	pthread_join(th, &r);
	W_MALLOC(main, 3); /* leaked: main */
	return 0;
}
