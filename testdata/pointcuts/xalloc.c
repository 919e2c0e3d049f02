#include <stdio.h>
#include <stdlib.h>
#include "xalloc.h"

static void *check(void *p)
{
	if (!p) {
		fputs("out of memory\n", stderr);
		exit(1);
	}
	return p;
}

void *xmalloc(size_t n) { return check(malloc(n)); }
void *xcalloc(size_t count, size_t size) { return check(calloc(count, size)); }
void *xrealloc(void *p, size_t n) { return check(realloc(p, n)); }
void xfree(void *p) { free(p); }
void *gmalloc(size_t n) { return check(malloc(n)); }
void *gmalloc_n(size_t count, size_t size) { return check(calloc(count, size)); }

void *l_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	(void)ud;
	(void)osize;
	if (nsize == 0) {
		free(ptr);
		return NULL;
	}
	return realloc(ptr, nsize);
}
