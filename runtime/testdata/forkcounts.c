/* The parent allocates 10 bytes (leaked) and 15, and forks. The child
   frees the 15 it inherited, allocates 20 (leaked) and exits; the parent
   frees its 15. Each writes its own profile, and the child's counts only
   what the child did: nothing is counted twice. */
#include "woven.h"
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

FN(main);
FN(child);

static void child(void *inherited)
{
	ENTER(child);
	W_FREE(child, inherited);
	W_MALLOC(child, 20);
	exit(0);
}

int main(void)
{
	ENTER(main);
	int st;
	pid_t pid;
	void *p;
	W_MALLOC(main, 10);
	p = W_MALLOC(main, 15);
	pid = fork();
	if (pid == 0)
		child(p);
	W_FREE(main, p);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	return 0;
}
