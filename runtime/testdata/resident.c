/* Memory for the runtime's own maps: 4 threads keep 2,000 blocks each
   and exit; then main keeps 100,000 blocks of 48 bytes and 20,000 of 200
   (the side table's fine and coarse trees), stops itself (SIGSTOP) when
   its argument is "stop", so that the test reads its smaps, and frees
   them all. */
#include "woven.h"
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

FN(main);
FN(worker);
FN(keep);

#define NT 4

static void **keep(long n, size_t size)
{
	ENTER(keep);
	void **b = W_MALLOC(keep, (size_t)n * sizeof *b);
	long i;
	for (i = 0; i < n; i++)
		b[i] = W_MALLOC(keep, size + (size_t)(i % 8));
	return b;
}

static void *worker(void *arg)
{
	ENTER(worker);
	void **b = keep(2000, 16 + 8 * (size_t)(long)arg);
	long i;
	for (i = 0; i < 2000; i++)
		W_FREE(worker, b[i]);
	W_FREE(worker, b);
	return NULL;
}

int main(int argc, char **argv)
{
	ENTER(main);
	pthread_t th[NT];
	void **small, **big;
	long i;
	for (i = 0; i < NT; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i) != 0)
			return 1;
	for (i = 0; i < NT; i++)
		pthread_join(th[i], NULL);
	small = keep(100000, 48);
	big = keep(20000, 200);
	if (argc > 1 && strcmp(argv[1], "stop") == 0)
		raise(SIGSTOP);
	for (i = 0; i < 100000; i++)
		W_FREE(main, small[i]);
	for (i = 0; i < 20000; i++)
		W_FREE(main, big[i]);
	W_FREE(main, small);
	W_FREE(main, big);
	return 0;
}
