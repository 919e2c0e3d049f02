/* Non-local exits: errors raised deep in the call stack with longjmp, as
   Lua does; after each, allocation chains must be right again. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

static jmp_buf env;

static void raise_error(void) { longjmp(env, 1); }

static int fail(int depth)
{
	if (depth <= 0) {
		raise_error();
		return 0;
	}
	return fail(depth - 1) + 1;
}

static void *alloc_after(int n) { return malloc((size_t)n); }

static int protected_call(int depth)
{
	if (setjmp(env) == 0) {
		fail(depth);
		return 0;
	}
	return 1;
}

int main(void)
{
	static char outbuf[BUFSIZ]; /* stdio allocates nothing: every heap block is the program's */
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	int caught = 0;
	void *keep[8];
	for (int i = 0; i < 8; i++) {
		caught += protected_call(i * 3);
		keep[i] = alloc_after(100 + i);
	}
	printf("caught %d\n", caught);
	for (int i = 0; i < 7; i++)
		free(keep[i]);
	return 0;
}
