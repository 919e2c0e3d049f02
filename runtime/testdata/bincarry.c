/* A thread's bins count in 16 bits: counts past 65535 carry into the
   shared table. main makes and frees 200,000 blocks of 40 bytes (its
   bins read live at exit); a thread makes and frees 70,000 of 300 bytes
   and 70,000 of 5000 (the last bin, its bytes counted) and exits (its
   bins folded into the shared table), and 100 of 40 bytes stay live. */
#include "woven.h"
#include <pthread.h>
#include <stdlib.h>

FN(main);
FN(worker);

static void *worker(void *arg)
{
	ENTER(worker);
	long i;
	for (i = 0; i < 70000; i++) {
		W_FREE(worker, W_MALLOC(worker, 300));
		W_FREE(worker, W_MALLOC(worker, 5000));
	}
	return arg;
}

int main(void)
{
	ENTER(main);
	static void *keep[100];
	pthread_t th;
	long i;
	if (pthread_create(&th, NULL, worker, NULL) || pthread_join(th, NULL))
		return 1;
	for (i = 0; i < 200000; i++)
		W_FREE(main, W_MALLOC(main, 40));
	for (i = 0; i < 100; i++)
		keep[i] = W_MALLOC(main, 40);
	return keep[99] == NULL;
}
