/* lib.c: allocating functions of another translation unit (see lib.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib.h"

jmp_buf lib_recover;
static char *errors[64];
static int nerrors;

void lib_push(struct list *l, int v)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 4;
		l->v = realloc(l->v, l->cap * sizeof *l->v);
	}
	l->v[l->n++] = v;
}

struct big lib_big(int n)
{
	struct big b = {n, n + 1, n + 2, n + 3, n + 4, malloc(16)};
	snprintf(b.tag, 16, "big%d", n);
	return b;
}

struct pair lib_pair(int x)
{
	struct pair p = {x, strdup("pair")};
	return p;
}

double lib_mean(const int a[], int n)
{
	int *t = malloc((n + 1) * sizeof *t);
	double s = 0;
	memcpy(t, a, n * sizeof *t);
	for (int i = 0; i < n; i++)
		s += t[i];
	free(t);
	return n ? s / n : 0;
}

char lib_first(const char *s)
{
	char *c = strdup(s);
	char r = c[0];
	free(c);
	return r;
}

char *lib_name(int i, mapper f)
{
	char *s = malloc(24);
	snprintf(s, 24, "name%d", f(i));
	return s;
}

int lib_id(int x)
{
	free(malloc(8));
	return x;
}

void lib_fail(const char *what, int x)
{
	char *m = malloc(strlen(what) + 16);
	sprintf(m, "%s %d", what, x);
	free(errors[nerrors % 64]);
	errors[nerrors++ % 64] = m;
	longjmp(lib_recover, 1);
}

void lib_failf(const char *fmt, ...)
{
	char *m = malloc(64);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, 64, fmt, ap);
	va_end(ap);
	free(errors[nerrors % 64]);
	errors[nerrors++ % 64] = m;
	longjmp(lib_recover, 2);
}
