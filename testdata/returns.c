/* Early returns, void fall-through, return f(x), struct returns, goto and
   a return value computed after the frame's own allocations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pair { long a, b; char tag[24]; };

static int early(int x)
{
	if (x < 0)
		return -1;
	if (x == 0)
		return 0;
	for (int i = 0; i < x; i++)
		if (i * i > x)
			return i;
	return x;
}

static void fallthrough(int *acc, int x)
{
	*acc += x;
}

static int twice(int x) { return 2 * x; }
static int tail(int x) { return twice(x + 1); }

static struct pair make_pair(long a, long b)
{
	struct pair p;
	p.a = a;
	p.b = b;
	snprintf(p.tag, sizeof p.tag, "%ld:%ld", a, b);
	return p;
}

static char *joined(const char *a, const char *b)
{
	char *s = malloc(strlen(a) + strlen(b) + 1);
	if (!s)
		goto fail;
	strcpy(s, a);
	strcat(s, b);
	return s;
fail:
	return NULL;
}

static int with_goto(int n)
{
	int i = 0, sum = 0;
again:
	sum += i;
	if (++i < n)
		goto again;
	return sum;
}

int main(void)
{
	static char outbuf[BUFSIZ]; /* stdio allocates nothing: every heap block is the program's */
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	int acc = 0;
	for (int i = -2; i < 40; i++)
		acc += early(i);
	fallthrough(&acc, 7);
	acc += tail(20);
	struct pair p = make_pair(3, 4);
	char *s = joined("hello, ", "world");
	printf("acc=%d pair=%ld,%ld,%s s=%s goto=%d\n", acc, p.a, p.b, p.tag, s, with_goto(10));
	free(s);
	return acc % 7;
}
