/* threads: memory per thread. T threads each make 100 messages of 16-271
   bytes two calls down (as server.c does), wait until every thread has
   made its own, then free them and exit: all T are alive at once, with
   their stacks, their malloc arenas and the profiler's per-thread state.
   Usage: threads T (default 4). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MSGS 100

static pthread_barrier_t all_made;

__attribute__((noinline)) static void *make_msg(unsigned size)
{
	void *m = malloc(size);
	if (!m)
		abort();
	memset(m, 1, size);
	return m;
}

__attribute__((noinline)) static void *handle(unsigned *rng)
{
	*rng = *rng * 1103515245u + 12345u;
	return make_msg(16 + (*rng >> 16) % 256);
}

static void *work(void *arg)
{
	void *m[MSGS];
	unsigned rng = (unsigned)(long)arg;
	int i;
	for (i = 0; i < MSGS; i++)
		m[i] = handle(&rng);
	pthread_barrier_wait(&all_made);
	for (i = 0; i < MSGS; i++)
		free(m[i]);
	return arg;
}

int main(int argc, char **argv)
{
	int t, n = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t *th;
	if (n < 1 || !(th = malloc(sizeof *th * (size_t)n)))
		return 2;
	pthread_barrier_init(&all_made, NULL, (unsigned)n);
	for (t = 0; t < n; t++)
		if (pthread_create(&th[t], NULL, work, (void *)(long)t) != 0)
			abort();
	for (t = 0; t < n; t++)
		pthread_join(th[t], NULL);
	free(th);
	return 0;
}
