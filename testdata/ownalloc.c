/* The program's own static function named malloc (a bump allocator): calls
   to it are not the C library's and must not be advised. */
#include <stdio.h>

static char arena[4096];
static unsigned long used;

static void *malloc(unsigned long n)
{
	void *p = arena + used;
	used += (n + 15) & ~15UL;
	return p;
}

int main(void)
{
	static char outbuf[BUFSIZ]; /* stdio allocates nothing: every heap block is the program's */
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	int *a = malloc(10 * sizeof(int));
	for (int i = 0; i < 10; i++)
		a[i] = i * i;
	printf("%d %lu\n", a[9], used);
	return 0;
}
