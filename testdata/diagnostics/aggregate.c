/* -Waggregate-return: the program's own calls that return a structure
   draw the warning in the woven build as in the plain one; the runtime's
   (a frame's out-of-line entry, a declared allocator's wrapper) draw none.
   The lines begin with tabs: gcc counts their columns in display columns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct big {
	long a, b, c;
};

static struct big make(int x)
{
	struct big b = {x, x * 2, x * 3};
	return b;
}

__attribute__((malloc, alloc_size(1))) void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p)
		abort();
	return p;
}

static int work(int x)
{
	char *p = xmalloc((size_t)x);
	memset(p, 1, (size_t)x);
	int r = p[0];
	free(p);
	return r;
}

__attribute__((noinline)) struct big twice(struct big b)
{
	b.a *= 2;
	return b;
}

int main(int argc, char **argv)
{
	(void)argv;
	struct big b = make(argc);
	struct big c = twice(b);
	printf("%ld %ld %d\n", b.b, c.a, work(argc + 10));
	return 0;
}
