/* forktrace.c: a program for the tracepoint tests: work() allocates and
   frees; main calls it argv[1] times, forks, and the child and the parent
   each call it argv[1] times more. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int work(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++) {
		char *p = malloc(16);
		s += i + (p != NULL);
		free(p);
	}
	return s;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 100, s = 0;
	for (int i = 0; i < rounds; i++)
		s += work(10);
	pid_t c = fork();
	if (c < 0)
		return 1;
	for (int i = 0; i < rounds; i++)
		s += work(10);
	if (c == 0) {
		printf("child %d\n", s);
		return 0;
	}
	waitpid(c, NULL, 0);
	printf("parent %d\n", s);
	return 0;
}
