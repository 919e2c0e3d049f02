/* A free of another thread's block handed back to the thread that
   allocated it (scrub.c's remote_give). Thread A allocates a block of
   100 bytes, thread B frees it and allocates one of that size: not A's
   block, which glibc's tcache would give B had B's free been the C
   library's at once; A then frees a block of that size and allocates two,
   and gets its block back. Then A allocates N more (argument 1, default
   200) and waits while B frees them all: A keeps at most 64 of them, so
   B's next allocations of the size take some of the others. Prints
   "back ok", "bounded ok" or what went wrong, and the program's tally of
   its woven calls in the runtime's summary format. */
#include "woven.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define SIZE 100
#define NMAX 1000

FN(main);
FN(thread_a);
FN(thread_b);

static pthread_barrier_t bar;
static void *blocks[NMAX];
static void *shared;
static long nmore = 200;
static unsigned long allocs, frees, bytes;
static int bad;

static void *get(int which)
{
	void *p = which ? W_MALLOC(thread_b, SIZE) : W_MALLOC(thread_a, SIZE);
	if (!p)
		abort();
	__atomic_fetch_add(&allocs, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&bytes, SIZE, __ATOMIC_RELAXED);
	return p;
}

static void put(int which, void *p)
{
	if (which)
		W_FREE(thread_b, p);
	else
		W_FREE(thread_a, p);
	__atomic_fetch_add(&frees, 1, __ATOMIC_RELAXED);
}

static void *thread_a(void *arg)
{
	ENTER(thread_a);
	void *q, *r1, *r2;
	long i;
	(void)arg;
	q = get(0);
	shared = get(0);
	pthread_barrier_wait(&bar); /* 1: B frees shared, allocates */
	pthread_barrier_wait(&bar); /* 2 */
	put(0, q);                  /* takes shared back first */
	r1 = get(0);
	r2 = get(0);
	if (r1 != shared && r2 != shared) {
		printf("A did not get its block back\n");
		bad = 1;
	}
	for (i = 0; i < nmore; i++)
		blocks[i] = get(0);
	pthread_barrier_wait(&bar); /* 3: B frees them */
	pthread_barrier_wait(&bar); /* 4 */
	put(0, r1);
	put(0, r2);
	return NULL;
}

static void *thread_b(void *arg)
{
	ENTER(thread_b);
	void *mine[8], *p;
	int i, k, found = 0;
	(void)arg;
	p = get(1); /* B's first block: set up in its own arena */
	put(1, p);
	pthread_barrier_wait(&bar); /* 1 */
	put(1, shared);
	p = get(1);
	if (p == shared) {
		printf("B got A's block\n");
		bad = 1;
	}
	put(1, p);
	pthread_barrier_wait(&bar); /* 2 */
	pthread_barrier_wait(&bar); /* 3 */
	for (i = 0; i < nmore; i++)
		put(1, blocks[i]);
	for (k = 0; k < 8; k++) {
		mine[k] = get(1);
		for (i = 0; i < nmore; i++)
			found += mine[k] == blocks[i];
	}
	for (k = 0; k < 8; k++)
		put(1, mine[k]);
	if (!found) {
		printf("A kept all %ld of its blocks B freed\n", nmore);
		bad = 1;
	}
	pthread_barrier_wait(&bar); /* 4 */
	return NULL;
}

int main(int argc, char **argv)
{
	ENTER(main);
	pthread_t a, b;
	if (argc > 1)
		nmore = atol(argv[1]);
	if (nmore < 80 || nmore > NMAX)
		return 2;
	pthread_barrier_init(&bar, NULL, 2);
	if (pthread_create(&a, NULL, thread_a, NULL) || pthread_create(&b, NULL, thread_b, NULL))
		return 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	if (!bad)
		printf("back ok\nbounded ok\n");
	printf("in use at exit: 0 bytes in 0 blocks\n");
	printf("total heap usage: %lu allocs, %lu frees, %lu bytes allocated\n", allocs, frees, bytes);
	return bad;
}
