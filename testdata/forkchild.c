/* forkchild P C: the parent calls parent_only P times (each allocates
   and frees, and calls shared), then forks; the child calls child_work C times (each
   allocates 16 bytes and frees them), leaks one 40-byte block from
   child_leak and exits; the parent waits, then calls shared once. Both
   call shared: the parent before the fork, the child C times. A fork
   child's profile carries what the child did: parent_only is not in it. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile g_sink;

__attribute__((noinline)) static void shared(int n)
{
	g_sink = malloc((size_t)n + 1);
	free(g_sink);
}

__attribute__((noinline)) static void parent_only(int i)
{
	char *p = malloc((size_t)i + 100);
	p[0] = (char)i;
	g_sink = p;
	shared(i);
	free(p);
}

__attribute__((noinline)) static void child_work(int i)
{
	char *p = malloc(16);
	p[0] = (char)i;
	g_sink = p;
	shared(i);
	free(p);
}

__attribute__((noinline)) static void *child_leak(void)
{
	return malloc(40);
}

int main(int argc, char **argv)
{
	int np = argc > 2 ? atoi(argv[1]) : 5, nc = argc > 2 ? atoi(argv[2]) : 3, i, st;
	pid_t pid;
	for (i = 0; i < np; i++)
		parent_only(i);
	shared(0);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		for (i = 0; i < nc; i++)
			child_work(i);
		g_sink = child_leak();
		g_sink = NULL; /* definitely lost */
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	shared(1);
	printf("parent %d child %d\n", np, nc);
	return 0;
}
