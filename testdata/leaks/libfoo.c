/* libfoo: a library built without weave (TestLeakUnwovenLibrary). Its
   blocks are hidden allocations, called from libfoo.so. */
#include <stdlib.h>
#include <string.h>

struct node {
	struct node *next;
	char pad[232];
};

void *foo_kept; /* a block kept by the library: still reachable */

/* Builds a list of n nodes and drops it: 1 block definitely lost, n - 1
   indirectly. */
void foo_lose_list(int n)
{
	struct node *head = NULL;
	for (int i = 0; i < n; i++) {
		struct node *x = malloc(sizeof *x);
		memset(x->pad, i, sizeof x->pad);
		x->next = head;
		head = x;
	}
	if (!foo_kept)
		foo_kept = malloc(100);
}
