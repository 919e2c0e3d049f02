/* T threads (argument, default 8), all alive at once, each with its own
   C library arena: each allocates 40 blocks of 24 bytes and 40 of 200
   (the side table's fine and coarse trees), waits for the others, then
   frees half of them and keeps the others reachable (even threads) or
   drops them (odd threads: leaked). Prints where each thread's first
   block is, for the side table's mids those addresses span. */
#include "woven.h"
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NB 40
#define TMAX 64

FN(main);
FN(worker);

static void *kept[TMAX][2 * NB];
static uintptr_t first[TMAX];
static pthread_barrier_t bar;

static void *worker(void *arg)
{
	ENTER(worker);
	int t = (int)(long)arg, i;
	void **b = kept[t];
	for (i = 0; i < NB; i++) {
		b[2 * i] = W_MALLOC(worker, 24);
		b[2 * i + 1] = W_MALLOC(worker, 200);
	}
	first[t] = (uintptr_t)b[0];
	pthread_barrier_wait(&bar);
	for (i = 0; i < 2 * NB; i++)
		if (i % 4 > 1) {
			W_FREE(worker, b[i]);
			b[i] = NULL;
		} else if (t % 2)
			b[i] = NULL;
	return NULL;
}

int main(int argc, char **argv)
{
	ENTER(main);
	int n = argc > 1 ? atoi(argv[1]) : 8, t;
	pthread_t th[TMAX];
	if (n < 1 || n > TMAX)
		return 2;
	pthread_barrier_init(&bar, NULL, (unsigned)n);
	for (t = 0; t < n; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)(long)t))
			return 1;
	for (t = 0; t < n; t++)
		pthread_join(th[t], NULL);
	for (t = 0; t < n; t++)
		printf("block %#lx\n", (unsigned long)first[t]);
	return 0;
}
