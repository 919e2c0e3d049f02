/* errno: kept across successful calls, set as by the library on failure.
   Exits 1 (with a message) when a check fails. */
#include "woven.h"
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

FN(main);

static int failures;
static volatile size_t huge = SIZE_MAX - 4096, half = SIZE_MAX / 2;

static void fail(int line)
{
	char b[64] = "errno check failed at line ";
	int n = (int)strlen(b), d = 1;
	while (d * 10 <= line)
		d *= 10;
	for (; d; d /= 10)
		b[n++] = (char)('0' + line / d % 10);
	b[n++] = '\n';
	if (write(2, b, (size_t)n) < 0)
		_exit(3);
	failures++;
}

#define CHECK(c)                    \
	do {                        \
		if (!(c))           \
			fail(__LINE__); \
	} while (0)

int main(void)
{
	ENTER(main);
	void *p, *q;
	char *s;
	int rc;

	errno = 4242;
	p = W_MALLOC(main, 10);
	CHECK(p && errno == 4242);
	p = W_REALLOC(main, p, 100000);
	CHECK(p && errno == 4242);
	W_FREE(main, p);
	CHECK(errno == 4242);
	p = W_CALLOC(main, 3, 3);
	CHECK(p && errno == 4242);
	W_FREE(main, p);
	s = W_STRDUP(main, "abc");
	CHECK(s && errno == 4242);
	W_FREE(main, s);
	s = W_STRNDUP(main, "abc", 2);
	CHECK(s && errno == 4242 && strlen(s) == 2);
	W_FREE(main, s);
	p = W_MEMALIGN(main, 64, 10);
	CHECK(p && errno == 4242);
	W_FREE(main, p);
	p = W_VALLOC(main, 10);
	CHECK(p && errno == 4242);
	W_FREE(main, p);
	p = W_PVALLOC(main, 10);
	CHECK(p && errno == 4242);
	W_FREE(main, p);
	p = W_ALIGNED_ALLOC(main, 64, 128);
	CHECK(p && errno == 4242);
	W_FREE(main, p);
	rc = W_POSIX_MEMALIGN(main, &p, 64, 10);
	CHECK(rc == 0 && errno == 4242);
	W_FREE(main, p);
	W_FREE(main, NULL);
	CHECK(errno == 4242);

	/* Failures. */
	errno = 0;
	p = W_MALLOC(main, huge);
	CHECK(!p && errno == ENOMEM);
	errno = 0;
	p = W_CALLOC(main, half, 4);
	CHECK(!p && errno == ENOMEM);
	errno = 0;
	p = W_REALLOCARRAY(main, NULL, half, 4);
	CHECK(!p && errno == ENOMEM);
	q = W_MALLOC(main, 10);
	errno = 0;
	p = W_REALLOC(main, q, huge);
	CHECK(!p && errno == ENOMEM);
	errno = 0;
	p = W_REALLOCARRAY(main, q, half, 4);
	CHECK(!p && errno == ENOMEM);
	W_FREE(main, q); /* still recorded after the failed reallocs */
	errno = 4242;
	rc = W_POSIX_MEMALIGN(main, &p, 3, 10);
	CHECK(rc == EINVAL && errno == 4242);
	errno = 0;
	p = W_MEMALIGN(main, 64, huge);
	CHECK(!p && errno == ENOMEM);
	return failures ? 1 : 0;
}
