/* Run under a limit on its address space (coreutils' head-c.sh: ulimit -v
   at the least the program needs, plus 8,000 KiB): "small" allocates a
   few blocks; "big" the same, then a block of 6 MiB, touched, which the
   headroom holds. Prints what it got. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	static char out[BUFSIZ]; /* stdio allocates nothing */
	char *v[16];
	size_t i, sum = 0;
	setvbuf(stdout, out, _IOFBF, sizeof out);
	for (i = 0; i < 16; i++) {
		v[i] = malloc(32 + i);
		if (!v[i])
			return 2;
		memset(v[i], (int)i, 32 + i);
	}
	if (argc > 1 && strcmp(argv[1], "big") == 0) {
		char *b = malloc(6u << 20);
		if (!b) {
			printf("no 6 MiB\n");
			return 1;
		}
		memset(b, 1, 6u << 20);
		sum = (size_t)b[12345];
		free(b);
	}
	for (i = 0; i < 16; i++) {
		sum += (unsigned char)v[i][i];
		free(v[i]);
	}
	printf("%zu\n", sum);
	return 0;
}
