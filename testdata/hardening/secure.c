/* secure.c: a program for the security tests: it says who it runs as
   (and with "secure ARG threads", how many threads it has), leaks a block
   and exits with a status of its own. */
#include <dirent.h>
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
	if (argc > 2 && !strcmp(argv[2], "threads")) {
		DIR *d = opendir("/proc/self/task");
		int n = 0;
		while (d && readdir(d))
			n++;
		printf("threads=%d\n", n - 2);
		if (d)
			closedir(d);
	}
	return 3;
}
