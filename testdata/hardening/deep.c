/* Deep recursion: down() nests argv[1] calls (default 1000000), ping() and
   pong() as many, in a thread with a 1 GiB stack; the deepest level of each
   allocates a block that is kept. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long depth = 1000000;
static void *keep[3];
static volatile long sink; /* keeps the calls real calls, not a loop */

static long down(long n)
{
	if (n == 0) {
		keep[0] = malloc(31);
		return 0;
	}
	sink = down(n - 1);
	return sink + 1;
}

static long pong(long n);

static long ping(long n)
{
	if (n == 0) {
		keep[1] = malloc(32);
		return 0;
	}
	sink = pong(n - 1);
	return sink + 1;
}

static long pong(long n)
{
	if (n == 0) {
		keep[2] = malloc(33);
		return 0;
	}
	sink = ping(n - 1);
	return sink + 1;
}

static void *run(void *arg)
{
	long *r = arg;
	r[0] = down(depth);
	r[1] = ping(depth);
	return NULL;
}

int main(int argc, char **argv)
{
	static long r[2];
	pthread_attr_t at;
	pthread_t th;
	if (argc > 1)
		depth = atol(argv[1]);
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, (size_t)1 << 30);
	if (pthread_create(&th, &at, run, r) != 0)
		return 1;
	pthread_join(th, NULL);
	printf("%ld %ld\n", r[0], r[1]);
	return 0;
}
