/* TestFramesInlining: woven, the same functions stay out of line as in the
   plain build (gcc -O2 inlines label, sq, mk and file_read; sum is
   noinline). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
	struct node *next;
	int v;
};

char *ext_name(int i); /* defined in another unit: may allocate */

/* Framed (it calls ext_name), small: inlined by gcc -O2. */
static char *label(int i)
{
	return ext_name(i * 2 + 1);
}

struct file;
struct methods {
	int (*read)(struct file *, int);
};
struct file {
	const struct methods *m;
};

/* Framed at its call (through a pointer, as sqlite's sqlite3OsRead),
   small: inlined by gcc -O2. */
static int file_read(struct file *f, int n)
{
	return f->m->read(f, n);
}

/* Frameless leaf. */
static int sq(int x)
{
	return x * x + 1;
}

/* An allocation leaf. */
static struct node *mk(int v, struct node *next)
{
	struct node *n = malloc(sizeof *n);
	if (!n)
		abort();
	n->v = v;
	n->next = next;
	return n;
}

/* Kept out of line in every build. */
static __attribute__((noinline)) int sum(const struct node *n)
{
	int s = 0;
	for (; n; n = n->next)
		s += n->v;
	return s;
}

int run(int k)
{
	struct node *l = 0;
	int i, s;
	for (i = 0; i < k; i++)
		l = mk(sq(i), l);
	s = sum(l);
	puts(label(s));
	puts(label(k));
	while (l) {
		struct node *n = l->next;
		free(l);
		l = n;
	}
	return s;
}

int read3(struct file *f)
{
	return file_read(f, 1) + file_read(f, 2) * file_read(f, 3);
}

/* Lua's lessthanothers (lvm.c): framed at its one call that may
   allocate, order_tm (another unit's), outside loops. gcc -O2 inlines it
   into less and count_less at its limit (growth 14 of 15): the frame's
   two asm statements around the call, in it, stopped it. */
struct val {
	unsigned char tt;
	union {
		long i;
		const char *s;
	} v;
};
int order_tm(void *L, const struct val *a, const struct val *b, int ev);

static int less_others(void *L, const struct val *a, const struct val *b)
{
	if ((a->tt & 15) == 4 && (b->tt & 15) == 4)
		return strcoll(a->v.s, b->v.s) < 0;
	return order_tm(L, a, b, 20);
}

int less(void *L, const struct val *a, const struct val *b)
{
	if (a->tt == 3 && b->tt == 3)
		return a->v.i < b->v.i;
	return less_others(L, a, b);
}

int count_less(void *L, const struct val *a, const struct val *b, int n)
{
	int k = 0;
	for (int i = 0; i < n; i++)
		k += a[i].tt == 3 && b[i].tt == 3 ? a[i].v.i < b[i].v.i : less_others(L, a + i, b + i);
	return k;
}

/* Framed at its cold call (fail_at does not return, and may allocate):
   inlined by gcc -O2. */
void fail_at(const char *what, int i) __attribute__((noreturn));

static int checked_get(const int *a, int n, int i)
{
	if (i < 0 || i >= n)
		fail_at("index", i);
	return a[i];
}

int sum3(const int *a, int n)
{
	return checked_get(a, n, 0) + checked_get(a, n, n / 2) + checked_get(a, n, n - 1);
}
