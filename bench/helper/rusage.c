/* rusage: runs a command and reports its wall time, CPU time and peak RSS.

   Usage: rusage REPORT PROGRAM ARGS...: writes "wall_ns user_us sys_us
   maxrss_kb" to the file REPORT and exits with the command's status
   (128 + signal number if a signal ended it).

   The harness cannot take the peak RSS from the wait4 of a child it starts
   itself: Go starts children with vfork semantics (CLONE_VM), so the kernel
   records the Go process's own high-water RSS as the child's at exec. This
   small process forks the command instead, so the command starts from this
   one's footprint, about a megabyte, like under /usr/bin/time. ru_maxrss is
   the larger of the command's and its waited-for children's. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	int status;
	pid_t pid;
	FILE *f;
	if (argc < 3) {
		fprintf(stderr, "usage: rusage REPORT PROGRAM ARGS...\n");
		return 127;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		perror("rusage: fork");
		return 127;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "rusage: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("rusage: wait4");
			return 127;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	f = fopen(argv[1], "w");
	if (!f) {
		perror(argv[1]);
		return 127;
	}
	fprintf(f, "%lld %lld %lld %ld\n",
		(long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec),
		(long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
		(long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec, ru.ru_maxrss);
	if (fclose(f) != 0) {
		perror(argv[1]);
		return 127;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
