/* A block whose only pointer lies in memory that was freed and handed out
   again: memcheck calls it definitely lost (the new block's bytes that its
   program did not write are undefined, never read as pointers), and so
   must the leak scan. An array grown by realloc to 2,048 bytes is held by
   a struct; the struct is freed (the array leaks); a record of the same
   size, which the allocator makes of the struct's memory, leaves the word
   that held the array's address unwritten, and is lost too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vec {
	size_t n, cap;
	char *data;
};

struct rec {
	char name[16];
	struct rec *next; /* where vec's data was: never written */
};

static struct rec *volatile keep;

static __attribute__((noinline)) struct vec *build(int n)
{
	struct vec *v = malloc(sizeof *v); /* site:vec */
	v->n = 0, v->cap = 16, v->data = malloc(16);
	for (int i = 0; i < n; i++) {
		if (v->n == v->cap)
			v->data = realloc(v->data, v->cap *= 2); /* site:grow */
		v->data[v->n++] = (char)i;
	}
	return v;
}

int main(int argc, char **argv)
{
	struct vec *v = build(argc > 1 ? atoi(argv[1]) : 2048);
	struct rec *r;
	printf("%d\n", v->data[v->n - 1]);
	free(v); /* v->data leaks */
	r = malloc(sizeof *r); /* site:rec */
	strcpy(r->name, "lost");
	keep = r;
	keep = NULL;
	return 0;
}
