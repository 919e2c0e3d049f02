/* A fork after a checkpoint (WEAVE_CHECKPOINT): the parent keeps 77
   bytes, waits until its checkpoint is at argv[1] (its WEAVE_OUT), forks
   a child that keeps 88 more and exits, then keeps 99 and exits itself.
   Each leaves its own profile. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void *keep[3];

int main(int argc, char **argv)
{
	pid_t c;
	int i;
	keep[0] = malloc(77);
	for (i = 0; argc > 1 && access(argv[1], F_OK) != 0 && i < 6000; i++)
		usleep(10000);
	c = fork();
	if (c == 0) {
		keep[1] = malloc(88);
		exit(0);
	}
	if (c < 0 || waitpid(c, NULL, 0) != c)
		return 2;
	keep[2] = malloc(99);
	return 0;
}
