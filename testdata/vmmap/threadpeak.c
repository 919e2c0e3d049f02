/* NT threads (4) allocate and free blocks of 16-4111 bytes, each keeping a
   ring of 256, every allocation and free with the count of bytes in use
   under one mutex, so that the program's own high-water mark is that of
   the order the mutex gives. The main thread holds a 1 MiB block while it
   waits for them. The heap climbs to about 2.3 MB in a first phase, then
   churns below its peak. Prints the high-water mark and the
   bytes and blocks allocated. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef NT
#define NT 4 /* threads: -DNT=N */
#endif
#define RING 256
#define ROUNDS 200000

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long in_use, high, allocated, blocks;

static void *get(size_t n)
{
	void *p;
	pthread_mutex_lock(&mu);
	p = malloc(n);
	in_use += (long)n;
	allocated += (long)n;
	blocks++;
	if (in_use > high)
		high = in_use;
	pthread_mutex_unlock(&mu);
	memset(p, 1, n < 64 ? n : 64);
	return p;
}

static void put(void *p, size_t n)
{
	pthread_mutex_lock(&mu);
	free(p);
	in_use -= (long)n;
	pthread_mutex_unlock(&mu);
}

static void *work(void *arg)
{
	void *ring[RING] = {0};
	size_t size[RING] = {0};
	unsigned r = 7u + 31u * (unsigned)(long)arg;
	int i;
	for (i = 0; i < ROUNDS; i++) {
		int k = i % RING;
		r = r * 1103515245u + 12345u;
		if (ring[k])
			put(ring[k], size[k]);
		/* Larger blocks while the ring first fills: the peak. */
		size[k] = 16 + (r >> 16) % (i < RING ? 4096 : 2048);
		ring[k] = get(size[k]);
	}
	for (i = 0; i < RING; i++)
		put(ring[i], size[i]);
	return NULL;
}

int main(void)
{
	pthread_t th[NT];
	long t;
	/* The main thread's own block, live while it waits in pthread_join. */
	void *table = get(1 << 20);
	for (t = 0; t < NT; t++)
		pthread_create(&th[t], NULL, work, (void *)t);
	for (t = 0; t < NT; t++)
		pthread_join(th[t], NULL);
	put(table, 1 << 20);
	printf("high %ld allocated %ld blocks %ld\n", high, allocated, blocks);
	return 0;
}
