/* coldpaths.c: functions whose only calls that may allocate are on cold
   paths: calls of noreturn and cold functions, and branches that
   __builtin_expect marks unlikely. Under --frames auto they have no frame
   at their entry (their hot paths stay as the compiler sees them in the
   plain build), their frame pushed around those calls alone; the cold
   paths run here now and then, and allocate, so the chains must be those
   of --frames=all. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

static jmp_buf recover;
static char *errors[256];
static int nerrors;
static long sum;

/* Allocates its message and jumps back to main: never returns. */
static void fail(const char *what, int x) __attribute__((noreturn));
static void fail(const char *what, int x)
{
	char *m = malloc(strlen(what) + 16);
	sprintf(m, "%s %d", what, x);
	errors[nerrors++ % 256] = m;
	longjmp(recover, 1);
}

/* Not noreturn, but declared cold: a rare report. */
static void __attribute__((cold)) note(const char *what, int x)
{
	char *m = malloc(strlen(what) + 16);
	sprintf(m, "%s %d", what, x);
	free(errors[nerrors % 256]);
	errors[nerrors++ % 256] = m;
}

static char *copy(const char *s) { return strdup(s); }

/* A noreturn call on its error path. */
static int checked(int x)
{
	if (x % 997 == 996) /* an argument that allocates: framed inside the call's frame */
		fail(x % 2 ? "checked" : copy("checked, even"), x);
	return x * 3;
}

/* An unlikely branch with an allocation below it. */
static int grow(int x)
{
	if (unlikely(x % 101 == 100)) {
		char *c = copy("grown");
		sum += (long)strlen(c);
		errors[nerrors++ % 256] = c;
	}
	return x + 1;
}

/* The else of a likely branch, and a cold function. */
static int steady(int x)
{
	if (likely(x % 53 != 52))
		return x - 1;
	else
		note("steady", x);
	return x;
}

/* likely(c) || report(), unlikely(c) && report(), and a ternary. */
static int guarded(int x)
{
	(void)(likely(x % 71 != 70) || (note("or", x), 0));
	(void)(unlikely(x % 89 == 88) && (note("and", x), 1));
	return unlikely(x % 61 == 60) ? (int)strlen(copy("ternary")) : x;
}

/* A hot caller of the functions above: each may allocate below it. */
static volatile int pos;
static long work(int lo, int hi)
{
	long s = 0;
	for (int i = lo; i < hi; i++) {
		pos = i;
		s += checked(i) + grow(i) + steady(i) + guarded(i);
	}
	return s;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	volatile int lo = 0;
	volatile long total = 0;
	if (setjmp(recover))
		lo = pos + 1; /* fail() ended that block's work */
	while (lo < n) {
		int hi = lo + 1000 < n ? lo + 1000 : n;
		total += work(lo, hi);
		lo = hi;
	}
	/* Not printf: valgrind sees stdout's buffer allocated, weave's
	   interposed malloc does not under valgrind (the oracle). */
	char out[64];
	int len = snprintf(out, sizeof out, "%ld %ld %d\n", total, sum, nerrors);
	if (write(1, out, (size_t)len) != len)
		return 1;
	for (int i = 0; i < 128 && i < nerrors; i++)
		free(errors[i]); /* the others leak */
	return 0;
}
