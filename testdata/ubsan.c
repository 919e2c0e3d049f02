/* Blocks of sizes that are no multiple of 8, freed (the runtime zeroes a
   freed block from both ends), one leaked; with an argument, abort(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static char *make(size_t n)
{
	char *p = malloc(n);
	memset(p, 'x', n);
	return p;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = {13, 45, 67, 99, 131, 201, 255};
	unsigned long sum = 0;
	char *kept = make(21);
	(void)argv;
	for (int r = 0; r < 100; r++)
		for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
			char *p = make(sizes[i]);
			sum += (unsigned char)p[sizes[i] - 1];
			free(p);
		}
	printf("%lu %c\n", sum, kept[0]);
	kept = 0;
	if (argc > 1) {
		fflush(stdout);
		abort();
	}
	return 0;
}
