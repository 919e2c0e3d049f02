/* Recursion and mutual recursion: the call graph has cycles, and
   allocations happen deep inside them. */
#include <stdio.h>
#include <stdlib.h>

struct node { struct node *l, *r; int v; };

static struct node *build(int depth)
{
	struct node *n = malloc(sizeof *n);
	n->v = depth;
	n->l = depth > 0 ? build(depth - 1) : NULL;
	n->r = depth > 0 ? build(depth - 1) : NULL;
	return n;
}

static int sum(const struct node *n) { return n ? n->v + sum(n->l) + sum(n->r) : 0; }

static void release(struct node *n)
{
	if (!n)
		return;
	release(n->l);
	release(n->r);
	free(n);
}

static int is_odd(int n);
static int is_even(int n)
{
	if (n == 0)
		return 1;
	if (n % 5 == 0) {
		int *leak = calloc(4, sizeof(int));
		leak[0] = n;
	}
	return is_odd(n - 1);
}
static int is_odd(int n) { return n == 0 ? 0 : is_even(n - 1); }

static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

int main(void)
{
	static char outbuf[BUFSIZ]; /* stdio allocates nothing: every heap block is the program's */
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	struct node *t = build(10);
	printf("sum=%d even(21)=%d fib(20)=%ld\n", sum(t), is_even(21), fib(20));
	release(t);
	return 0;
}
