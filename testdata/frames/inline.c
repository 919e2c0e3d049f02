/* TestFramesInlining: woven, the same functions stay out of line as in the
   plain build (gcc -O2 inlines label, sq, mk and file_read; sum is
   noinline). */
#include <stdio.h>
#include <stdlib.h>

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
