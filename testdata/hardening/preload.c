/* An allocator a user LD_PRELOADs (here: glibc's, counting its calls).
   The runtime's malloc & co., first in lookup order, must pass every call
   on to it, as the program without the runtime would have called it. */
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static long calls;

void *malloc(size_t n)
{
	calls++;
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	calls++;
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	calls++;
	return __libc_realloc(p, n);
}

void free(void *p)
{
	calls += p != NULL;
	__libc_free(p);
}

__attribute__((destructor)) static void report(void)
{
	char b[64];
	int k = snprintf(b, sizeof b, "preload: %ld calls\n", calls);
	if (write(2, b, (size_t)k) < 0)
		return;
}
