/* secure.c: a program for the security tests: it says who it runs as,
   leaks a block and exits with a status of its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char *p = malloc(64);
	if (!p)
		return 1;
	strcpy(p, argc > 1 ? argv[1] : "none");
	printf("euid=%d arg=%s\n", (int)geteuid(), p);
	return 3;
}
