/* Blocks of every leak kind, each from its own allocation site (the
   "site:" comments name them for the test): a list whose head is dropped
   (1 definitely lost, n-1 indirectly lost), a two-block cycle (1 + 1), a
   block pointed to only from its middle (possibly lost), one kept by a
   global and one kept only by a local of a thread still running at exit
   (still reachable). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct node {
	struct node *next;
	char pad[24];
};

void *kept;   /* not static: the compiler must keep the stores */
char *inside;

static struct node *make_list(int n)
{
	struct node *h = NULL;
	for (int i = 0; i < n; i++) {
		struct node *x = malloc(sizeof *x); /* site:list */
		memset(x, 0, sizeof *x);
		x->next = h;
		h = x;
	}
	return h;
}

static __attribute__((noinline)) int lose_list(int n)
{
	return make_list(n) != NULL;
}

static __attribute__((noinline)) void lose_cycle(void)
{
	struct node *a = calloc(1, sizeof *a); /* site:cycle */
	struct node *b = calloc(1, sizeof *b); /* site:cycle2 */
	a->next = b;
	b->next = a;
}

static __attribute__((noinline)) void keep_interior(void)
{
	inside = (char *)malloc(100) + 40; /* site:interior */
}

static __attribute__((noinline)) void keep_global(void)
{
	kept = malloc(50); /* site:global */
}

/* Overwrites the dead stack frames below, so that no stale copy of a lost
   pointer is left where a conservative scan would see it. */
static __attribute__((noinline)) void scrub(void)
{
	volatile char buf[16384];
	memset((char *)buf, 0, sizeof buf);
}

static pthread_barrier_t ready;

static void *holder(void *arg)
{
	char *volatile local = malloc(70); /* site:local */
	(void)arg;
	pthread_barrier_wait(&ready);
	for (;;)
		pause();
	return local;
}

int main(int argc, char **argv)
{
	pthread_t t;
	int n = argc > 1 ? atoi(argv[1]) : 10;
	printf("list %d\n", lose_list(n));
	lose_cycle();
	scrub();
	keep_interior();
	keep_global();
	pthread_barrier_init(&ready, NULL, 2);
	pthread_create(&t, NULL, holder, NULL);
	pthread_barrier_wait(&ready);
	free(malloc(10));
	scrub();
	puts("done");
	return 0;
}
