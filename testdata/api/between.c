/* weave report --between A B: the blocks allocated after mark A and live
   at mark B. Under valgrind (the oracle), the leak checks at A and at B
   list every live block by stack; nothing allocated before A is freed
   before B, so B's blocks less A's are the blocks between. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/memcheck.h>
#include "weave_api.h"

struct node {
	struct node *next;
	char pad[40];
};

static void *kept[8]; /* reachable: allocated before A, live at B */
static void *later[8];

static void *early(int n)
{
	return calloc(1, n);
}

static char *leak_after(int n)
{
	char *p = malloc(n);
	memset(p, 0, n);
	return p;
}

/* A list whose head is dropped: 1 block definitely lost, n-1 indirectly. */
static void list(int n)
{
	struct node *h = NULL;
	int i;
	for (i = 0; i < n; i++) {
		struct node *x = calloc(1, sizeof *x);
		x->next = h;
		h = x;
	}
}

static void *worker(void *arg)
{
	later[(long)arg] = leak_after(300);
	free(leak_after(20));
	return NULL;
}

int main(void)
{
	pthread_t th;
	int i;
	printf("start\n"); /* stdout's buffer: before A */
	for (i = 0; i < 4; i++)
		kept[i] = early(10 + i);
	free(early(5));
	VALGRIND_DO_LEAK_CHECK;
	WEAVE_MARK("A");
	for (i = 0; i < 3; i++) {
		WEAVE_MARK("iter");
		leak_after(100 + i);
		free(leak_after(50));
	}
	list(5);
	later[0] = leak_after(1000); /* reachable, but allocated after A */
	later[1] = realloc(leak_after(8), 64); /* a new block after A */
	pthread_create(&th, NULL, worker, (void *)2L);
	pthread_join(th, NULL);
	VALGRIND_DO_LEAK_CHECK;
	WEAVE_MARK("B");
	for (i = 0; i < 8; i++)
		free(later[i]);
	leak_after(7);
	WEAVE_MARK("C");
	printf("done %d\n", kept[1] != NULL);
	return 0;
}
