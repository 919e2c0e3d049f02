/* Parent leaks 10 bytes, forks; the child leaks 20 more and exits; each
   writes its own profile. */
#include "woven.h"
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

FN(main);
FN(child);

static void child(void)
{
	ENTER(child);
	W_MALLOC(child, 20);
	exit(0);
}

int main(void)
{
	ENTER(main);
	int st;
	pid_t pid;
	W_MALLOC(main, 10);
	pid = fork();
	if (pid == 0)
		child();
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	return 0;
}
