/* threads: four threads each run worker(k), which spends k units of work in
   its own spin calls (k = 1..4), while main waits in pthread_join. Times
   are per thread; the report sums them.
   Usage: threads [msteps per unit]. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long unit;

__attribute__((noinline)) static unsigned long long spin(unsigned long long x, long n)
{
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

static void *worker(void *arg)
{
	long k = (long)arg;
	unsigned long long x = (unsigned long long)k;
	for (long i = 0; i < k; i++)
		x = spin(x, unit);
	return (void *)(x & 1);
}

int main(int argc, char **argv)
{
	pthread_t t[4];
	long sum = 0;
	unit = (argc > 1 ? atol(argv[1]) : 20) * 1000000;
	for (long k = 0; k < 4; k++)
		pthread_create(&t[k], NULL, worker, (void *)(k + 1));
	for (int k = 0; k < 4; k++) {
		void *r;
		pthread_join(t[k], &r);
		sum += (long)r;
	}
	printf("%d\n", sum >= 0);
	return 0;
}
