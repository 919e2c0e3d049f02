/* rare.c: a run up to its end, for TestRareNotRun. Four threads allocate
   through every woven allocation call and the C library's own (hidden:
   strdup, a FILE's buffer), keep some blocks for main to free (frees
   across threads), free the rest, and exit; then main frees what they
   kept and calls end_of_run, where the test's callgrind dumps what ran
   before the exit. */
#include "woven.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NT 4
#define NB 64

FN(main);
FN(worker);

static void *kept[NT][NB];

static void *worker(void *arg)
{
	ENTER(worker);
	int t = (int)(long)arg, i;
	void *p = NULL;
	for (i = 0; i < NB; i++) {
		char *s = W_STRDUP(worker, "rare");
		void *q = W_CALLOC(worker, 3, 40), *a = W_ALIGNED_ALLOC(worker, 64, 128), *m = NULL;
		p = W_REALLOC(worker, p, (size_t)(i + 1) * 24);
		kept[t][i] = W_MALLOC(worker, 16 + (size_t)i * 8);
		if (posix_memalign(&m, 32, 96) == 0) /* hidden: the C library's, interposed */
			free(m);
		free(strdup(s)); /* hidden */
		W_FREE(worker, s);
		W_FREE(worker, q);
		W_FREE(worker, a);
	}
	W_FREE(worker, p);
	return NULL;
}

__attribute__((noinline)) void end_of_run(void);
__attribute__((noinline)) void end_of_run(void)
{
	__asm__ volatile("" ::: "memory");
}

int main(void)
{
	ENTER(main);
	pthread_t th[NT];
	int t, i;
	FILE *f = tmpfile();
	if (f) {
		fprintf(f, "%d\n", NT);
		fclose(f);
	}
	for (t = 0; t < NT; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)(long)t))
			return 1;
	for (t = 0; t < NT; t++)
		pthread_join(th[t], NULL);
	for (t = 0; t < NT; t++)
		for (i = 0; i < NB; i++)
			W_FREE(main, kept[t][i]);
	end_of_run();
	return 0;
}
