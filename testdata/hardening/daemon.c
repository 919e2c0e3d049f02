/* daemon(3): the parent keeps 77 bytes and frees 50 before it becomes a
   daemon; the daemon (the C library's fork child, the parent ended by the
   C library's _exit) keeps 88 and ends. Each leaves its own profile. */
#include <stdlib.h>
#include <unistd.h>

static void *keep[2];

int main(void)
{
	keep[0] = malloc(77);
	free(malloc(50));
	if (daemon(1, 0) != 0)
		return 2;
	keep[1] = malloc(88);
	return 0;
}
