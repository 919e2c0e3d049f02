/* frames: frames that do not return. "exit": main -> outer -> inner, which
   works and calls exit(0) with both frames open. "longjmp": main -> jumper
   -> deep, which works and longjmps back to main, dropping both frames;
   main then works in after(). In exact mode the open or dropped frames must
   be charged their time up to the exit or the longjmp.
   Usage: frames exit|longjmp [msteps]. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile unsigned long long sink;
static jmp_buf env;
static long steps;

__attribute__((noinline)) static void spin(long n)
{
	unsigned long long x = sink;
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

__attribute__((noinline)) static void inner(void)
{
	spin(steps);
	exit(0);
}

__attribute__((noinline)) static void outer(void)
{
	inner();
}

__attribute__((noinline)) static void deep(void)
{
	spin(steps);
	longjmp(env, 1);
}

__attribute__((noinline)) static void jumper(void)
{
	deep();
}

__attribute__((noinline)) static void after(void)
{
	spin(steps);
}

int main(int argc, char **argv)
{
	steps = (argc > 2 ? atol(argv[2]) : 50) * 1000000;
	if (argc > 1 && strcmp(argv[1], "exit") == 0) {
		outer();
		return 1;
	}
	if (setjmp(env) == 0)
		jumper();
	else
		after();
	return 0;
}
