/* Frees of other threads' blocks in both trees. T threads (argument 1,
   default 4) make N blocks each (argument 2, default 20000) of 1-400
   bytes (the side table's fine and coarse trees), keep them in a ring of
   64 and free the one a new block replaces; every 4th block goes to the
   next thread's mailbox instead, which frees it. The C library's tcache
   then hands that thread its next block of the size from the other
   thread's arena, so each thread allocates and frees in its own arena's
   side-table leaves and in the others' (advice.c's leaf caches and
   free_miss). Each thread leaks its last block. The program tallies its
   woven calls and prints them in the runtime's summary format. */
#include "woven.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define TMAX 64
#define RING 64

FN(main);
FN(worker);
FN(drain);

struct box {
	pthread_mutex_t lock;
	void *head;
} __attribute__((aligned(64)));

static struct box boxes[TMAX];
static int nthreads;
static long nblocks;
static unsigned long allocs, frees, bytes, live_bytes, live_blocks, lost_bytes;

static void got(unsigned long n)
{
	__atomic_fetch_add(&allocs, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&bytes, n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&live_bytes, n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&live_blocks, 1, __ATOMIC_RELAXED);
}

static void gone(unsigned long n)
{
	__atomic_fetch_add(&frees, 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&live_bytes, n, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&live_blocks, 1, __ATOMIC_RELAXED);
}

/* A block: its size in its first word (each is 8 bytes or more), the
   mailbox's link in its second (16 or more). */
static void drain(struct box *b)
{
	ENTER(drain);
	void *m, *next;
	pthread_mutex_lock(&b->lock);
	m = b->head;
	b->head = NULL;
	pthread_mutex_unlock(&b->lock);
	for (; m; m = next) {
		next = ((void **)m)[1];
		gone(*(unsigned long *)m);
		W_FREE(drain, m);
	}
}

static void *worker(void *arg)
{
	ENTER(worker);
	int t = (int)(long)arg;
	struct box *next = &boxes[(t + 1) % nthreads];
	void *ring[RING] = {0};
	unsigned long n = 0;
	long i;
	for (i = 0; i < nblocks; i++) {
		void *p;
		n = 16 + (unsigned long)(i * 37 + t * 11) % 385;
		p = W_MALLOC(worker, n);
		if (!p)
			abort();
		got(n);
		*(unsigned long *)p = n;
		if (i % 4 == 3 && i + 1 < nblocks) {
			pthread_mutex_lock(&next->lock);
			((void **)p)[1] = next->head;
			next->head = p;
			pthread_mutex_unlock(&next->lock);
			drain(&boxes[t]);
			continue;
		}
		if (ring[i % RING]) {
			gone(*(unsigned long *)ring[i % RING]);
			W_FREE(worker, ring[i % RING]);
		}
		ring[i % RING] = p;
		if (i + 1 == nblocks) { /* the last block leaks */
			ring[i % RING] = NULL;
			__atomic_fetch_add(&lost_bytes, n, __ATOMIC_RELAXED);
		}
	}
	for (i = 0; i < RING; i++)
		if (ring[i]) {
			gone(*(unsigned long *)ring[i]);
			W_FREE(worker, ring[i]);
		}
	return NULL;
}

int main(int argc, char **argv)
{
	ENTER(main);
	pthread_t th[TMAX];
	int t;
	nthreads = argc > 1 ? atoi(argv[1]) : 4;
	nblocks = argc > 2 ? atol(argv[2]) : 20000;
	if (nthreads < 1 || nthreads > TMAX || nblocks < 1)
		return 2;
	for (t = 0; t < nthreads; t++)
		pthread_mutex_init(&boxes[t].lock, NULL);
	for (t = 0; t < nthreads; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)(long)t))
			return 1;
	for (t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	for (t = 0; t < nthreads; t++)
		drain(&boxes[t]);
	printf("in use at exit: %lu bytes in %lu blocks\n", live_bytes, live_blocks);
	printf("total heap usage: %lu allocs, %lu frees, %lu bytes allocated\n", allocs, frees, bytes);
	printf("definitely lost: %lu bytes in %d blocks\n", lost_bytes, nthreads);
	return 0;
}
