/* Freed memory of every size glibc hands out again holds no stale
   pointers for the leak scan: arrays of pointers freed without their
   elements (a classic leak), in a tcache size (512 bytes, over the 256
   the fast path scrubs) and an unsorted-bin size (8,000 bytes); the tail
   realloc splits off a shrunk array; the block realloc(p, 0) frees. Each
   chunk is reused, unwritten but for its first bytes, by a live block:
   memcheck (which reads only defined words) calls every dropped block
   definitely lost, and so must the scan of the native heap. Prints
   whether each reuse happened, so that a test knows the case is made. */
#include <stdio.h>
#include <stdlib.h>

void *g_keep[8];

/* An array of n pointers to 1-byte blocks. */
static char **fill(size_t n)
{
	char **a = malloc(n * sizeof *a);
	size_t i;
	for (i = 0; i < n; i++)
		a[i] = malloc(1);
	return a;
}

/* A live block of n bytes, its first byte written, where p was. */
static int reuse(int k, void *p, size_t n)
{
	char *q = malloc(n);
	q[0] = 1;
	g_keep[k] = q;
	return q == p;
}

int main(void)
{
	char **a = fill(64), **b = fill(1000), **c, **d;
	void *hold = malloc(16), *pa = a, *pb = b, *pc, *pd; /* b is not next to the top */
	int ra, rb, rc, rd;
	free(a); /* 64 lost */
	ra = reuse(0, pa, 64 * sizeof *a);
	free(b); /* 1,000 lost */
	rb = reuse(1, pb, 1000 * sizeof *b);
	c = fill(64);
	g_keep[2] = c = realloc(c, 4 * sizeof *c); /* 60 lost in the tail */
	pc = (char *)c + 48;                       /* where glibc's split-off chunk's block starts */
	rc = reuse(3, pc, 60 * sizeof *c - 16);
	d = fill(40);
	pd = d;
	d = realloc(d, 0); /* glibc frees: 40 lost */
	rd = reuse(4, pd, 40 * sizeof(char *));
	free(hold);
	printf("reused %d %d %d %d\n", ra, rb, rc, rd);
	return d != NULL;
}
