/* loop.c: a program for the tracepoint tests: three threads call work(),
   which allocates items (the site marked ITEM), frees every other one and
   recurses; argv[1] rounds, argv[2] microseconds of sleep between them. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct item {
	int v;
	char pad[20];
};

static int rounds, nap;

static struct item *make_item(int v)
{
	struct item *it = malloc(sizeof(struct item)); /* ITEM */
	if (it)
		it->v = v;
	return it;
}

static int depth_sum(int n)
{
	return n == 0 ? 0 : n + depth_sum(n - 1);
}

static long work(int n)
{
	long s = depth_sum(3);
	for (int i = 0; i < n; i++) {
		struct item *it = make_item(i);
		s += it->v;
		if (i % 2 == 0)
			free(it);
	}
	return s;
}

static void *run(void *arg)
{
	long s = 0;
	for (int r = 0; r < rounds; r++) {
		s += work(20);
		if (nap)
			usleep(nap);
	}
	*(long *)arg = s;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	long s[3] = {0, 0, 0};
	rounds = argc > 1 ? atoi(argv[1]) : 10;
	nap = argc > 2 ? atoi(argv[2]) : 0;
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, run, &s[i]);
	run(&s[2]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("%ld %ld %ld\n", s[0], s[1], s[2]);
	return 0;
}
