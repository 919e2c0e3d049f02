/* Allocation and return hidden in macros, variadic functions, __label__,
   a local variable named malloc and the program's own allocator named like
   a library function's wrapper. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEW(T) ((T *)malloc(sizeof(T)))
#define NEW_ARRAY(T, n) ((T *)calloc((n), sizeof(T)))
#define CHECK(p) do { if (!(p)) return -1; } while (0)
#define RETURN_SUM(a, b) return (a) + (b)

typedef struct point { double x, y; } point;

static int make_points(int n, point **out)
{
	point *p = NEW_ARRAY(point, n);
	CHECK(p);
	for (int i = 0; i < n; i++)
		p[i].x = p[i].y = i;
	*out = p;
	RETURN_SUM(n, 0);
}

static int sum_ints(int count, ...)
{
	va_list ap;
	int s = 0;
	va_start(ap, count);
	for (int i = 0; i < count; i++)
		s += va_arg(ap, int);
	va_end(ap);
	return s;
}

static char *format(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = malloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

static int labels(int n)
{
	__label__ out;
	int i = 0;
	for (;;) {
		if (i >= n)
			goto out;
		i++;
	}
out:
	return i;
}

static int shadow(void)
{
	int malloc = 41; /* not the library function */
	return malloc + 1;
}

int main(void)
{
	static char outbuf[BUFSIZ]; /* stdio allocates nothing: every heap block is the program's */
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	point *pts = NULL;
	int n = make_points(16, &pts);
	point *one = NEW(point);
	one->x = 1.5;
	char *s = format("%d-%s-%d", sum_ints(3, 1, 2, 3), "x", labels(5));
	char *d = strdup(s);
	printf("%d %.1f %.1f %s %s %d\n", n, pts[15].x, one->x, s, d, shadow());
	free(pts);
	free(one);
	free(s);
	/* d is leaked on purpose */
	return 3;
}
