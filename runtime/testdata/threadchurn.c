/* 8 threads allocate N blocks each (size i % M), free a quarter
   themselves, then another quarter of their neighbour's while the
   neighbour churns through N/2 malloc/free pairs. The rest leaks.
   Arguments: N (default 100000), M (default 3000). */
#include "woven.h"
#include <pthread.h>
#include <stdlib.h>

#define NT 8

FN(main);
FN(worker);
FN(alloc_phase);
FN(free_phase);
FN(churn);

static void **blocks[NT];
static long N = 100000, M = 3000;
static pthread_barrier_t bar;

static void alloc_phase(int t)
{
	ENTER(alloc_phase);
	long i;
	for (i = 0; i < N; i++) {
		blocks[t][i] = W_MALLOC(alloc_phase, (size_t)(i % M));
		if (i % 4 == 0)
			W_FREE(alloc_phase, blocks[t][i]);
	}
}

static void free_phase(int t)
{
	ENTER(free_phase);
	long i;
	int o = (t + 1) % NT;
	for (i = 1; i < N; i += 4)
		W_FREE(free_phase, blocks[o][i]);
}

static void churn(void)
{
	ENTER(churn);
	long i;
	for (i = 0; i < N / 2; i++) {
		void *p = W_MALLOC(churn, (size_t)(24 + i % 8));
		W_FREE(churn, p);
	}
}

static void *worker(void *arg)
{
	ENTER(worker);
	int t = (int)(long)arg;
	alloc_phase(t);
	pthread_barrier_wait(&bar);
	free_phase(t);
	churn();
	return NULL;
}

int main(int argc, char **argv)
{
	ENTER(main);
	pthread_t th[NT];
	long t;
	if (argc > 1)
		N = atol(argv[1]);
	if (argc > 2)
		M = atol(argv[2]);
	for (t = 0; t < NT; t++)
		blocks[t] = W_CALLOC(main, (size_t)N, sizeof(void *));
	pthread_barrier_init(&bar, NULL, NT);
	for (t = 0; t < NT; t++)
		pthread_create(&th[t], NULL, worker, (void *)t);
	for (t = 0; t < NT; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&bar);
	for (t = 0; t < NT; t++)
		W_FREE(main, blocks[t]);
	return 0;
}
