/* Stack use per level of recursion: build() makes a list of argv[1] nodes
   (default 100000) recursively, as a program without a loop would, and
   prints how many bytes of stack one level took (the distance between a
   local of the first level and one of the deepest, over the levels), then
   the list's sum. The list is freed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct node {
	struct node *next;
	long v;
};

static uintptr_t top, bottom;

static struct node *build(long n)
{
	struct node *x;
	uintptr_t here = (uintptr_t)&x;
	if (!top)
		top = here;
	if (n == 0) {
		bottom = here;
		return NULL;
	}
	x = malloc(sizeof *x);
	x->v = n;
	x->next = build(n - 1);
	return x;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000, sum = 0;
	struct node *l = build(n), *x, *next;
	for (x = l; x; x = x->next)
		sum += x->v;
	printf("%ld bytes a level\n", (long)(top - bottom) / n);
	for (x = l; x; x = next) {
		next = x->next;
		free(x);
	}
	printf("sum %ld\n", sum);
	return 0;
}
