/* Allocates through the wrappers of xalloc.c: every block has a site in
   this file once the wrappers are declared allocators. */
#include <stdio.h>
#include <string.h>
#include "xalloc.h"

struct node {
	struct node *next;
	int v[6];
};

typedef void *(*alloc_fn)(void *, void *, size_t, size_t);

static struct node *push(struct node *h, int i)
{
	struct node *n = xmalloc(sizeof(struct node));
	n->next = h;
	n->v[0] = i;
	return n;
}

static char *grow(char *s, size_t n)
{
	return xrealloc(s, n);
}

/* Calls l_alloc through a pointer, as Lua does. */
static double *vec(alloc_fn f, double *old, size_t n)
{
	return f(NULL, old, 0, n * sizeof(double));
}

int main(void)
{
	struct node *h = NULL, *n;
	alloc_fn f = l_alloc;
	char *s = NULL;
	double *d, *v = NULL;
	int *arr, i;
	long sum = 0;
	for (i = 0; i < 100; i++)
		h = push(h, i);
	arr = xcalloc(10, sizeof(int));
	for (i = 1; i <= 20; i++) {
		s = grow(s, (size_t)i * 16);
		s[0] = 'a';
	}
	d = gmalloc(3 * sizeof(double));
	d[0] = 1.5;
	v = gmalloc_n(4, sizeof(long)) ? NULL : NULL;
	for (i = 1; i <= 8; i++)
		v = vec(f, v, (size_t)i);
	v[0] = 2;
	for (i = 0; i < 90; i++) {
		n = h->next;
		sum += h->v[0];
		xfree(h);
		h = n;
	}
	xfree(arr);
	xfree(s);
	f(NULL, v, 0, 0);
	printf("sum %ld d %.1f\n", sum, d[0]);
	return 0;
}
