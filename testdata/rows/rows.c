/* What a report's rows count (TestReportRows): new_node, an allocation
   leaf, is frameless under --frames auto (its calls not counted) and
   called N times; make_list's lists end up of three leak kinds (kept in
   a global: reachable; dropped: the head definitely lost, the rest
   indirectly); the heap stays small beside the resident set. */
#include <stdio.h>
#include <stdlib.h>

struct node {
	struct node *next;
	int v;
};

static struct node *new_node(int v, struct node *next)
{
	struct node *n = malloc(sizeof *n);
	n->v = v;
	n->next = next;
	return n;
}

struct node *make_list(int len)
{
	struct node *h = NULL;
	for (int i = 0; i < len; i++)
		h = new_node(i, h);
	return h;
}

static void drop(struct node *h)
{
	while (h) {
		struct node *n = h->next;
		free(h);
		h = n;
	}
}

struct node *kept[4];

int main(int argc, char **argv)
{
	int lists = argc > 1 ? atoi(argv[1]) : 100, len = 10;
	long sum = 0;
	for (int i = 0; i < lists; i++) {
		struct node *l = make_list(len);
		sum += l->v;
		if (i < 4)
			kept[i] = l; /* still reachable */
		else if (i < 6)
			l = NULL; /* lost */
		else
			drop(l);
	}
	printf("%d new_node calls, sum %ld\n", lists * len, sum);
	return 0;
}
