/* Every allocation function, the corner cases of realloc, and failures.
   Its totals must equal valgrind's. No stdio: it would allocate behind the
   runtime's back. pvalloc is left out: valgrind does not see it. */
#define _GNU_SOURCE
#include "woven.h"
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

FN(main);
FN(helper);

static volatile size_t huge = SIZE_MAX / 2;

static void *helper(size_t n)
{
	ENTER(helper);
	return W_CALLOC(helper, n, 4);
}

int main(void)
{
	ENTER(main);
	void *p, *q, *keep[1000];
	char *s;
	int i;

	p = W_MALLOC(main, 0);
	W_FREE(main, p);
	p = W_MALLOC(main, 100);
	p = W_REALLOC(main, p, 5000);
	p = W_REALLOC(main, p, 10);
	W_FREE(main, p);
	p = W_REALLOC(main, NULL, 33); /* leaked */
	(void)p;
	q = W_MALLOC(main, 77);
	q = W_REALLOC(main, q, 0); /* frees q */
	p = W_REALLOCARRAY(main, NULL, 10, 10);
	p = W_REALLOCARRAY(main, p, 20, 10);
	W_FREE(main, p);
	p = W_REALLOCARRAY(main, NULL, huge, 4); /* overflow: NULL */
	p = W_CALLOC(main, huge, 4);             /* overflow: NULL */
	p = helper(25);                          /* leaked */
	s = W_STRDUP(main, "hello, world");
	W_FREE(main, s);
	s = W_STRNDUP(main, "hello, world", 5); /* leaked */
	(void)s;
	p = W_ALIGNED_ALLOC(main, 64, 256);
	W_FREE(main, p);
	if (W_POSIX_MEMALIGN(main, &p, 128, 1000) == 0)
		W_FREE(main, p);
	p = W_MEMALIGN(main, 32, 3000); /* leaked */
	p = W_VALLOC(main, 50);
	W_FREE(main, p);
	W_FREE(main, NULL);
	p = W_MALLOC(main, 1 << 20);
	W_FREE(main, p);
	for (i = 0; i < 1000; i++)
		keep[i] = W_MALLOC(main, (size_t)(i * 7 % 1500));
	for (i = 0; i < 1000; i += 2)
		W_FREE(main, keep[i]);
	for (i = 1; i < 1000; i += 4)
		keep[i] = W_REALLOC(main, keep[i], (size_t)i * 3);
	return 0;
}
