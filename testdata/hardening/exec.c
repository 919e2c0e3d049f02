/* exec without losing the profile of what ran before it. Image 1 keeps 111
   bytes, frees 50, tries to exec a program that does not exist (the exec
   fails: it goes on), keeps 122 more and execs itself as image 2 (execv).
   Image 2 keeps 222 bytes and execs "true" through PATH (execlp), which is
   not woven. Images 1 and 2 each leave a profile: the same pid, two files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *keep[3];

static int image2(void)
{
	keep[0] = malloc(222);
	execlp("true", "true", (char *)0);
	perror("execlp");
	return 1;
}

int main(int argc, char **argv)
{
	char *args[] = {argv[0], "image2", NULL};
	if (argc > 1 && strcmp(argv[1], "image2") == 0)
		return image2();
	keep[0] = malloc(111);
	free(malloc(50));
	if (execl("/nonexistent/weave-test", "x", (char *)0) == 0)
		return 2;
	keep[1] = malloc(122);
	execv(argv[0], args);
	perror("execv");
	return 1;
}
