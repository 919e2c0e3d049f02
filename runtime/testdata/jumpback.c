/* longjmp from c (main > a > b > c) back to a: after the jump, allocations
   in a and in functions a calls must be charged below a, not below c. */
#include "woven.h"
#include <setjmp.h>
#include <stdlib.h>

FN(main);
FN(a);
FN(b);
FN(c);
FN(after);

static jmp_buf jb;

static void c(void)
{
	ENTER(c);
	W_MALLOC(c, 11); /* leaked: main > a > b > c */
	longjmp(jb, 1);
}

static void b(void)
{
	ENTER(b);
	c();
}

static void after(void)
{
	ENTER(after);
	W_MALLOC(after, 13); /* leaked: main > a > after */
}

static void a(void)
{
	ENTER(a);
	if (__weave_setjmp_return(&__weave_f, setjmp(jb)) == 0) {
		b();
	} else {
		after();
		W_MALLOC(a, 17); /* leaked: main > a */
	}
}

int main(void)
{
	ENTER(main);
	a();
	W_MALLOC(main, 19); /* leaked: main */
	return 0;
}
