/* WEAVE_QUARANTINE and blocks glibc mmaps for itself (128 KiB and over):
   arrays of pointers freed without their elements, one freed, one moved
   by realloc first (its old copy held as well). memcheck calls every
   element definitely lost. A held block stays mapped, a mapping with no
   live block in it that the leak scan reads as a root: its pointers, in
   its first page and past it, must be gone when it is held. Prints
   whether the freed block's address is still mapped (held), so that a
   test knows the case is made. */
#include <stdio.h>
#include <stdlib.h>

#define BIG (256 * 1024)
#define N 32

/* An array of BIG bytes holding N pointers to 1-byte blocks at its start
   and N more 100 KiB in. */
static void **fill(void)
{
	void **a = malloc(BIG);
	int i;
	for (i = 0; i < N; i++) {
		a[i] = malloc(1);
		a[100 * 1024 / sizeof *a + i] = malloc(1);
	}
	return a;
}

/* Whether address p lies in a mapping of /proc/self/maps. */
static int mapped(void *p)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo, hi, a = (unsigned long)p;
	char line[512];
	int in = 0;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && a >= lo && a < hi)
			in = 1;
	if (f)
		fclose(f);
	return in;
}

int main(void)
{
	void **a = fill(), **b = fill();
	free(a);
	b = realloc(b, 2 * BIG);
	free(b);
	printf("held %d\n", mapped(a));
	return 0;
}
