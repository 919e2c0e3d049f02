/* Blocks the runtime never saw, freed or reallocated through it, and a
   tracked block freed behind its back. Prints "reused" when malloc handed
   the freed address out again (glibc's tcache does). */
#include "woven.h"
#include <stdlib.h>
#include <unistd.h>

FN(main);

int main(void)
{
	ENTER(main);
	void *u, *t, *t2;

	u = malloc(64); /* untracked */
	W_FREE(main, u); /* passes through, counts nothing */
	u = malloc(32);
	u = W_REALLOC(main, u, 128); /* recorded: 1 alloc of 128 */
	W_FREE(main, u);             /* 1 free */
	u = malloc(16);
	u = W_REALLOC(main, u, 0); /* unknown block freed: nothing */
	t = W_MALLOC(main, 48);
	free(t); /* freed behind the runtime's back */
	t2 = W_MALLOC(main, 48);
	if (t2 == t && write(1, "reused\n", 7) < 0)
		return 2;
	W_FREE(main, t2);
	return 0;
}
