/* fnptrs.c: calls through function pointers, to functions that allocate
   and to functions that cannot. Under --frames auto the functions that
   may be on an allocation chain only through such calls (via, alloc_via,
   chain, rec, apply, ...) have no frame at their entry: their frame is
   pushed around those calls, unless the target is known not to allocate.
   The chains must be those of --frames=all. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ops {
	int (*op)(int);
	void *(*mk)(size_t);
	void (*note)(const char *);
};

struct pair {
	int a, b;
};

static int total;
static void *keep[64];
static int nkeep;

static int twice(int x) { return x * 2 + 1; }
static int square(int x) { return x * x; }
static void *mk_plain(size_t n) { return malloc(n); }
static void *mk_zero(size_t n)
{
	void *p = mk_plain(n);
	memset(p, 0, n);
	return p;
}
static void note(const char *s) { total += (int)strlen(s); }
static void note_keep(const char *s)
{
	char *c = malloc(strlen(s) + 1);
	strcpy(c, s);
	keep[nkeep++] = c;
}
static struct pair make_pair(int x)
{
	struct pair r = {x, x + 1};
	return r;
}
static struct pair (*pair_fn)(int) = make_pair;
static int (*pick(int k))(int) { return k ? square : twice; }
static int by_value(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* Framed at their calls: only calls through pointers may allocate. */
static int via(const struct ops *o, int x) { return o->op(o->op(x)) + (int)sizeof(o->op(1)); }
static void *alloc_via(const struct ops *o, size_t n) { return (*o->mk)(n); }
static void *chain(const struct ops *o, size_t n) { return n > 100 ? 0 : alloc_via(o, n); }
static int rec(const struct ops *o, int d)
{
	if (d == 0) {
		keep[nkeep++] = o->mk(16);
		return 1;
	}
	o->note("r"), (void)0;
	return rec(o, d - 1) + pick(d & 1)(d) + pair_fn(d).b;
}
static void apply(void (*f)(const char *), const char *s) { f(s); }

/* Framed at entry: it calls malloc itself. */
static void *alloc_twice(const struct ops *o, size_t n)
{
	free(alloc_via(o, n));
	keep[nkeep++] = malloc(n);
	return alloc_via(o, n + 1);
}

int main(int argc, char **argv)
{
	struct ops a = {twice, mk_plain, note}, b = {square, mk_zero, note_keep};
	static char outbuf[256];
	int v[] = {5, 3, 9, 1};
	int i, s = 0;
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	for (i = 0; i < 1000; i++)
		s += via(i & 1 ? &a : &b, i) & 0xff;
	keep[nkeep++] = alloc_via(&a, 10);
	keep[nkeep++] = alloc_via(&b, 20);
	keep[nkeep++] = chain(argc > 5 ? &a : &b, 30);
	keep[nkeep++] = alloc_twice(&a, 40);
	s += rec(argc > 1 ? &a : &b, 3) + rec(&a, 2);
	apply(note, "abc");
	apply(note_keep, "kept");
	qsort(v, 4, sizeof v[0], by_value);
	for (i = 0; i < nkeep; i += 2)
		free(keep[i]);
	printf("%d %d %d%d%d%d\n", s, total, v[0], v[1], v[2], v[3]);
	(void)argv;
	return 0;
}
