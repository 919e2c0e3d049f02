/* fork without exec. The parent allocates 100 bytes (kept) and 150 (freed
   after the children), and forks twice. The first child frees the 150 it
   inherited, allocates 200 (kept) and ends with _exit, the usual way; the
   second strdups 300 bytes (kept) and returns from main. Each process
   writes its own profile, and no allocation is counted in two of them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *kept, *shared;

static void first_child(void)
{
	free(shared); /* inherited: not the child's */
	kept = malloc(200);
	_exit(0);
}

static int second_child(void)
{
	char s[300];
	memset(s, 'x', sizeof s - 1);
	s[sizeof s - 1] = 0;
	kept = strdup(s);
	return 0;
}

int main(void)
{
	int st;
	pid_t a, b;
	kept = malloc(100);
	shared = malloc(150);
	fflush(stdout);
	if ((a = fork()) == 0)
		first_child();
	if ((b = fork()) == 0)
		return second_child();
	if (a < 0 || b < 0 || waitpid(a, &st, 0) != a || st || waitpid(b, &st, 0) != b || st)
		return 1;
	free(shared);
	printf("parent done\n");
	return 0;
}
