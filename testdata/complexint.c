/* GNU C's complex integer types, in spellings cc/v4 does not parse
   (_Complex unsigned char, unsigned long _Complex, signed _Complex, ...):
   arrays of them are allocated, written and summed; lose() leaks each of
   its blocks. */
#include <stdio.h>
#include <stdlib.h>

struct pair {
	_Complex unsigned char c;
	unsigned long _Complex l;
};

static long long unsigned _Complex *squares(int n)
{
	long long unsigned _Complex *v = malloc(n * sizeof(long long unsigned _Complex));
	int i;
	for (i = 0; i < n; i++) {
		__real__ v[i] = (unsigned long long)i * i;
		__imag__ v[i] = i;
	}
	return v;
}

/* Keeps the sum of the squares' real parts, not the block. */
static unsigned long long lose(int n)
{
	long long unsigned _Complex *v = squares(n);
	unsigned long long sum = 0;
	int i;
	for (i = 0; i < n; i++)
		sum += __real__ v[i];
	v[0] = 0;
	return sum;
}

int main(int argc, char **argv)
{
	static char outbuf[BUFSIZ]; /* stdio allocates nothing: every heap block is the program's */
	int n = 10 + argc, i;
	_Complex signed int s = 0;
	struct pair *p = calloc(n, sizeof *p);
	unsigned long long _Complex *q = squares(n);
	unsigned long long lost = 0;
	(void)argv;
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	for (i = 0; i < n; i++) {
		__real__ p[i].c = (unsigned char)(i * 3);
		__imag__ p[i].c = (unsigned char)i;
		p[i].l = q[i] * 2;
		s += (_Complex signed int)p[i].c + (signed _Complex)p[i].l;
	}
	for (i = 0; i < 100; i++)
		lost += lose(n + i);
	printf("%d %d %llu %zu %zu\n", __real__ s, __imag__ s, lost, sizeof(_Complex unsigned char), sizeof(struct pair));
	free(p);
	free(q);
	return 0;
}
