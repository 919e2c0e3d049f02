/* pexit.c: main ends by pthread_exit; four threads blocked in poll keep
   N blocks each in their live frames (still reachable, as memcheck
   says); a fifth thread calls exit once they block. main dropped 4
   blocks (definitely lost). A zombie main has no /proc/self/maps: the
   scan that read it read no thread's stack and no global, and called
   every block definitely lost. */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N 16

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready;

static __attribute__((noinline)) void fill(void *volatile *a, int n, int size)
{
	for (int i = 0; i < n; i++)
		a[i] = malloc((size_t)size + (size_t)i); /* site:fill */
}

static void *worker(void *arg)
{
	void *volatile keep[N];
	fill(keep, N, 200 + 8 * (int)(long)arg);
	pthread_mutex_lock(&mu);
	ready++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (;;)
		poll(NULL, 0, 3600 * 1000);
	__asm__ volatile("" : : "r"(keep) : "memory");
	return NULL;
}

static void *finish(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	while (ready < 4)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	usleep(50000); /* into their calls */
	puts("done");
	exit(0);
}

int main(void)
{
	pthread_t t;
	void *volatile dropped;
	for (int i = 0; i < 4; i++) {
		dropped = malloc(40); /* site:dropped */
		*(char *)dropped = 1;
	}
	dropped = NULL;
	for (long k = 0; k < 4; k++)
		if (pthread_create(&t, NULL, worker, (void *)k))
			return 2;
	if (pthread_create(&t, NULL, finish, NULL))
		return 2;
	pthread_exit(NULL);
}
