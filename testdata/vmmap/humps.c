/* Grows the heap to 100 MB, frees down to 10 MB, grows to 50 MB, frees
   all: two humps. Prints its own high-water mark of bytes in use. Blocks
   of 1 MB from grow(), a few small ones from setup(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MB 1000000
static char *blocks[200];
static long in_use, high;

static void note(long n)
{
	in_use += n;
	if (in_use > high)
		high = in_use;
}

static void grow(int from, int to)
{
	int i;
	for (i = from; i < to; i++) {
		blocks[i] = malloc(MB);
		memset(blocks[i], i, MB);
		note(MB);
	}
}

static void shrink(int from, int to)
{
	int i;
	for (i = from; i < to; i++) {
		free(blocks[i]);
		blocks[i] = NULL;
		note(-MB);
	}
}

static char *setup(void)
{
	char *s = malloc(100);
	note(100);
	strcpy(s, "humps");
	return s;
}

int main(void)
{
	char *name = setup();
	long sum = 0;
	int i;
	grow(0, 100);   /* 100 MB */
	shrink(10, 100); /* 10 MB */
	grow(10, 50);   /* 50 MB */
	for (i = 0; i < 50; i++)
		sum += blocks[i][i];
	shrink(0, 50);
	printf("%s high %ld sum %ld\n", name, high, sum);
	free(name);
	note(-100);
	return 0;
}
