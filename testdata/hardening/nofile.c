/* A program that leaves no descriptor free: it opens /dev/null until it
   has descriptors up to 40, then sets its soft RLIMIT_NOFILE to them, as
   libevent 2.1's listener/error_unlock test does to make accept fail
   (EMFILE), and exits so. The runtime's exit writer needs descriptors of
   its own (the profile, /proc for the leak scan): before, the profile was
   lost ("cannot write profile ...: Too many open files") and the leak
   scan had no kinds. A thread's block (24 bytes) is kept. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

static void *volatile kept;

static void *work(void *arg)
{
	kept = malloc(24);
	return arg;
}

int main(void)
{
	pthread_t t;
	struct rlimit rl;
	int fd, last = -1;
	if (pthread_create(&t, NULL, work, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 2;
	while ((fd = open("/dev/null", O_RDONLY)) >= 0 && fd < 40)
		last = fd;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 2;
	rl.rlim_cur = (rlim_t)last + 1;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 2;
	printf("open at the limit: %d\n", open("/dev/null", O_RDONLY));
	return 0;
}
