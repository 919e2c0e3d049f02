/* A program that changes directory before it ends, as a daemon does
   (chdir("/")) or a test that works in a directory of its own: argv[1]
   is where it goes. It loses 10 bytes, so that its summary is printed. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char *p = malloc(10);
	if (argc < 2 || chdir(argv[1]) != 0)
		return 2;
	printf("%d\n", p != NULL);
	p = NULL;
	return 0;
}
