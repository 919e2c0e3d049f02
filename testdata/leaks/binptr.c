/* A lost block whose only pointer is one glibc's allocator left in the
   unwritten bytes of a live block: a free chunk's link to the next free
   chunk, which points to that chunk's header, 48 bytes into the lost
   block of 50 bytes before it (a chunk's last 8 bytes are the next one's
   first). The program never wrote that word; memcheck's allocator keeps
   no such links, and it calls the block definitely lost: so must the
   leak scan, whichever way it marks: with the graph of every block's
   edges (a heap of few blocks: "graph"), or without it (a heap of 16-byte
   blocks, whose graph would cost too much: "small"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
	struct node *next;
	long v;
};

static void *volatile keep[5];

int main(int argc, char **argv)
{
	size_t big = 2000; /* past the tcache's sizes: freed into the unsorted bin */
	char *x, *y, *lost;
	struct node *list = NULL;
	for (int i = 0; argc > 1 && strcmp(argv[1], "small") == 0 && i < 20000; i++) {
		struct node *n = malloc(sizeof *n);
		n->next = list, n->v = i, list = n;
	}
	keep[4] = list;
	x = malloc(big);
	keep[0] = malloc(64); /* x merges with no free neighbour */
	lost = malloc(50);    /* site:lost */
	y = malloc(big);      /* right after lost: its header is lost's last 8 bytes */
	keep[1] = malloc(64); /* y merges with no free neighbour, nor the top */
	free(x);
	free(y); /* in the unsorted bin after x: x's back link is y's header */
	keep[2] = malloc(big); /* x again, its unwritten link kept */
	keep[3] = lost;
	keep[3] = NULL;
	printf("%zu\n", big);
	return 0;
}
