/* forkchild: the parent spins 60 ms in parent_work, then forks; the child
   spins 2 ms in child_work and exits, printing to stderr the wall-clock
   ns from the fork's return to its exit ("child_ns N"). The child's
   profile must hold the child's time only. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

__attribute__((noinline)) static long spin(long long ns)
{
	long long end = now() + ns;
	long n = 0;
	while (now() < end)
		n++;
	return n;
}

__attribute__((noinline)) static long parent_work(void)
{
	return spin(60000000);
}

__attribute__((noinline)) static long child_work(void)
{
	return spin(2000000);
}

int main(void)
{
	long long t0;
	int status;
	pid_t pid;
	if (parent_work() < 0)
		return 1;
	pid = fork();
	if (pid == 0) {
		t0 = now();
		child_work();
		fprintf(stderr, "child_ns %lld\n", now() - t0);
		exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0)
		return 2;
	return 0;
}
