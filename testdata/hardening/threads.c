/* Threads under the runtime: 4 POSIX threads and 4 C11 threads (thrd_create)
   each allocate N blocks (argv[1], default 20000), some of them through the
   C library (asprintf: hidden allocations), free a quarter themselves, then
   free a quarter of their neighbour's: blocks allocated in one thread and
   freed in another. Every worker exits before the process (the C11 ones
   through thrd_exit, from a nested call); main frees another quarter and
   leaves the rest in use at exit. -DPOSIX_ONLY makes all 8 POSIX threads:
   ThreadSanitizer (gcc 12, clang 14) does not know thrd_create's threads. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <threads.h>

#define NT 8

static long N = 20000;
static void **slots[NT];
static pthread_barrier_t bar;

static void *make(long i)
{
	char *s;
	if (i % 8 == 7)
		return asprintf(&s, "block %ld", i) < 0 ? NULL : s;
	return malloc((size_t)(i % 61 + 1));
}

static void fill(int t)
{
	for (long i = 0; i < N; i++) {
		slots[t][i] = make(i);
		if (i % 4 == 0) {
			free(slots[t][i]);
			slots[t][i] = NULL;
		}
	}
}

static void steal(int t)
{
	int o = (t + 1) % NT;
	for (long i = 1; i < N; i += 4) {
		free(slots[o][i]);
		slots[o][i] = NULL;
	}
}

static void *posix_worker(void *arg)
{
	int t = (int)(long)arg;
	fill(t);
	pthread_barrier_wait(&bar);
	steal(t);
	return NULL;
}

#ifndef POSIX_ONLY
static void leave(void)
{
	thrd_exit(0);
}

static int c11_worker(void *arg)
{
	int t = (int)(long)arg;
	fill(t);
	pthread_barrier_wait(&bar);
	steal(t);
	leave();
	return 1;
}
#endif

int main(int argc, char **argv)
{
	pthread_t pt[NT / 2];
#ifdef POSIX_ONLY
	pthread_t ct[NT / 2];
#else
	thrd_t ct[NT / 2];
#endif
	long kept = 0;
	if (argc > 1)
		N = atol(argv[1]);
	for (int t = 0; t < NT; t++)
		slots[t] = calloc((size_t)N, sizeof(void *));
	pthread_barrier_init(&bar, NULL, NT);
	for (int t = 0; t < NT / 2; t++) {
		pthread_create(&pt[t], NULL, posix_worker, (void *)(long)t);
#ifdef POSIX_ONLY
		pthread_create(&ct[t], NULL, posix_worker, (void *)(long)(t + NT / 2));
#else
		thrd_create(&ct[t], c11_worker, (void *)(long)(t + NT / 2));
#endif
	}
	for (int t = 0; t < NT / 2; t++) {
		pthread_join(pt[t], NULL);
#ifdef POSIX_ONLY
		pthread_join(ct[t], NULL);
#else
		int r;
		thrd_join(ct[t], &r);
#endif
	}
	pthread_barrier_destroy(&bar);
	for (int t = 0; t < NT; t++) {
		for (long i = 2; i < N; i += 4) {
			free(slots[t][i]);
			slots[t][i] = NULL;
		}
		for (long i = 0; i < N; i++)
			kept += slots[t][i] != NULL;
	}
	printf("%ld blocks kept\n", kept);
	return 0;
}
