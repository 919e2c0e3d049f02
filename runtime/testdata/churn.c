/* 2000 short-lived threads, 4 at a time, each allocating 3 blocks and
   freeing 2: every thread gets its own tree, totals stay exact. */
#include "woven.h"
#include <pthread.h>
#include <stdlib.h>

FN(main);
FN(work);

static void *work(void *arg)
{
	ENTER(work);
	void *a = W_MALLOC(work, 8), *b = W_CALLOC(work, 2, 8);
	(void)arg;
	W_FREE(work, a);
	W_FREE(work, b);
	return W_MALLOC(work, 40); /* freed by main */
}

int main(void)
{
	ENTER(main);
	int i, j;
	for (i = 0; i < 500; i++) {
		pthread_t t[4];
		void *r;
		for (j = 0; j < 4; j++)
			if (pthread_create(&t[j], NULL, work, NULL) != 0)
				return 1;
		for (j = 0; j < 4; j++) {
			pthread_join(t[j], &r);
			W_FREE(main, r);
		}
	}
	return 0;
}
