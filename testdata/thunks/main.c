/* main.c: functions framed at their one call of another unit's function
   that allocates (outside loops), or at their cold calls, which weave
   --frames auto takes through thunks (weave/thunks.go) where it can:
   returning void, a struct in memory, a struct in registers, a double, a
   char, a pointer; a noreturn call that longjmps out of its frame; a
   variadic one and one whose arguments call (no thunk: the frame is
   pushed before the arguments are evaluated). The chains must
   be those of --frames=all, the output the plain build's. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "lib.h"

#define unlikely(x) __builtin_expect(!!(x), 0)

static int twice(int x) { return 2 * x; }

static void add(struct list *l, int v)
{
	if (v % 3 == 0)
		return;
	lib_push(l, v);
}

static long big_sum(int n)
{
	struct big b = lib_big(n);
	long s = b.a + b.b + b.c + b.d + b.e + b.tag[3];
	free(b.tag);
	return s;
}

static int pair_x(int n)
{
	struct pair p = lib_pair(n);
	free(p.p);
	return p.x;
}

static double mean_of(const struct list *l) { return l->n ? lib_mean(l->v, l->n) : 0; }

static int first_of(const char *s) { return s[0] ? lib_first(s) : 0; }

static char *name_of(int i) { return i < 0 ? NULL : lib_name(i, twice); }

static int checked(int x)
{
	if (unlikely(x % 97 == 96))
		lib_fail("checked", x);
	return x + 1;
}

static int checkedf(int x)
{
	if (unlikely(x % 89 == 88))
		lib_failf("checkedf %d", x);
	return x - 1;
}

static int checked_id(int x)
{
	if (unlikely(x % 83 == 82))
		lib_fail("checked_id", lib_id(x));
	return x + 2;
}

int main(int argc, char **argv)
{
	struct list l = {0, 0, 0};
	volatile long s = 0;
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	volatile int failures = 0;
	for (volatile int i = 0; i < n; i++) {
		if (setjmp(lib_recover)) {
			failures++;
			continue;
		}
		add(&l, i);
		s += big_sum(i) + pair_x(i) + first_of("xyz") + checked_id(i);
		char *name = name_of(i);
		s += name[4];
		free(name);
		s += checked(i) + checkedf(i);
	}
	char out[96];
	int k = snprintf(out, sizeof out, "%ld %d %.3f %d\n", s, l.n, mean_of(&l), failures);
	if (write(1, out, k) != k) /* no stdio buffer: valgrind would count it */
		return 1;
	free(l.v);
	return 0;
}
