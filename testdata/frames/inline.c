/* TestFramesInlining: woven, the same functions stay out of line as in the
   plain build (gcc -O2 inlines label, sq and mk; sum is noinline). */
#include <stdio.h>
#include <stdlib.h>

struct node {
	struct node *next;
	int v;
};

char *ext_name(int i); /* defined in another unit: may allocate */

/* Framed (it calls ext_name), small: inlined by gcc -O2. */
static char *label(int i)
{
	return ext_name(i * 2 + 1);
}

/* Frameless leaf. */
static int sq(int x)
{
	return x * x + 1;
}

/* An allocation leaf. */
static struct node *mk(int v, struct node *next)
{
	struct node *n = malloc(sizeof *n);
	if (!n)
		abort();
	n->v = v;
	n->next = next;
	return n;
}

/* Kept out of line in every build. */
static __attribute__((noinline)) int sum(const struct node *n)
{
	int s = 0;
	for (; n; n = n->next)
		s += n->v;
	return s;
}

int run(int k)
{
	struct node *l = 0;
	int i, s;
	for (i = 0; i < k; i++)
		l = mk(sq(i), l);
	s = sum(l);
	puts(label(s));
	puts(label(k));
	while (l) {
		struct node *n = l->next;
		free(l);
		l = n;
	}
	return s;
}
