/* A program that needs to be a process of one thread: it enters a mount
   and a time namespace (setns, as nsenter -m -T does), makes a user
   namespace in a fork child and in itself (unshare(CLONE_NEWUSER), as
   unshare -U and bubblewrap do), and prints what each call did; then
   spins, so that samples taken after the calls show in the profile. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static void say(const char *what, int r)
{
	printf("%s: %s\n", what, r == 0 ? "ok" : strerror(errno));
	fflush(stdout);
}

static double cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void after(double s)
{
	double t0 = cpu();
	while (cpu() - t0 < s)
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i;
}

int main(void)
{
	int fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC), st = 0;
	pid_t pid;
	say("setns mnt", fd < 0 ? -1 : setns(fd, CLONE_NEWNS));
	fd = open("/proc/self/ns/time", O_RDONLY | O_CLOEXEC); /* kernels since 5.6 */
	say("setns time", fd < 0 ? -1 : setns(fd, CLONE_NEWTIME));
	pid = fork();
	if (pid == 0) {
		say("child unshare user", unshare(CLONE_NEWUSER));
		_exit(0);
	}
	waitpid(pid, &st, 0);
	say("unshare user", unshare(CLONE_NEWUSER));
	after(0.2);
	return 0;
}
