/* Non-local jumps: longjmp out of nested calls, siglongjmp out of a
   signal handler and __builtin_longjmp (the compilers' own, to a
   __builtin_setjmp), raised deep in the call stack. After each jump the
   allocations must be charged to the frame that called setjmp, and the
   chains of the calls made after it must be right. Each allocation site
   has its own size, so the profile tells them apart. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static jmp_buf jb;
static sigjmp_buf sjb;
static void *bjb[5]; /* __builtin_setjmp's buffer */
static void *keep[64];
static int nkeep;

static void *hold(size_t n)
{
	return keep[nkeep++] = malloc(n);
}

static void thrower(int depth)
{
	free(malloc(7));
	if (depth == 0)
		longjmp(jb, 1);
	thrower(depth - 1);
}

static void raiser(int depth)
{
	if (depth == 0)
		raise(SIGUSR1);
	raiser(depth - 1);
}

__attribute__((noinline)) static void bthrower(int depth)
{
	free(malloc(9));
	if (depth == 0)
		__builtin_longjmp(bjb, 1);
	bthrower(depth - 1);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

static void on_usr1(int sig)
{
	(void)sig;
	siglongjmp(sjb, 1);
}

static void after_long(void) { hold(101); }
static void after_sig(void) { hold(103); }
static void after_builtin(void) { hold(107); }

static int guard_long(int depth)
{
	if (setjmp(jb) == 0) {
		thrower(depth);
		return 0;
	}
	hold(102); /* guard_long <- main */
	after_long(); /* after_long <- guard_long <- main */
	return 1;
}

static int guard_sig(int depth)
{
	if (sigsetjmp(sjb, 1) == 0) {
		raiser(depth);
		return 0;
	}
	hold(104); /* guard_sig <- main */
	after_sig();
	return 1;
}

static int guard_builtin(int depth)
{
	if (__builtin_setjmp(bjb) == 0) {
		bthrower(depth);
		return 0;
	}
	hold(106); /* guard_builtin <- main */
	after_builtin();
	return 1;
}

int main(void)
{
	struct sigaction sa;
	int n = 0;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	for (int i = 0; i < 4; i++) {
		n += guard_long(i * 10);
		n += guard_sig(i * 10);
		n += guard_builtin(i * 10);
	}
	hold(105); /* main */
	printf("%d jumps\n", n);
	return 0;
}
