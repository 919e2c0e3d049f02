/* More than 2^20 calling contexts, so that the last ones' nodes do not fit
   a slot of the side table's fine tree (4 bytes: nodes under 2^20) and
   their small blocks go to the spill table. Ten functions call each other
   along every path without a repeat (no recursion folding: each path is
   a node); the first 1,100,000 contexts allocate nothing, the next
   CONTEXTS each allocate small blocks (fine tree sizes), reallocate and
   free some, and keep some live; a few early contexts do the same, in the
   fine tree. The program keeps its own tally and prints it in the
   runtime's summary format: the test compares the two. stdout has a
   static buffer, so the C library allocates nothing. */
#include "woven.h"
#include <stdio.h>

FN(main);
FN(f0);
FN(f1);
FN(f2);
FN(f3);
FN(f4);
FN(f5);
FN(f6);
FN(f7);
FN(f8);
FN(f9);

enum { QUIET = 1100000, CONTEXTS = 3000, KEEP = 512 };
static unsigned long visits;
static void *kept[KEEP];
static unsigned long kept_size[KEEP], nkept;
static unsigned long allocs, frees, bytes, live_bytes, live_blocks;

static void got(unsigned long n)
{
	allocs++;
	bytes += n;
	live_bytes += n;
	live_blocks++;
}

static void gone(unsigned long n)
{
	frees++;
	live_bytes -= n;
	live_blocks--;
}

static void step(int k, unsigned used, int depth);

/* The work of a context: nothing while quiet, else blocks of 8 to 120
   bytes (one kept, one reallocated and freed, one freed). */
#define BODY(k)                                                                  \
	ENTER(f##k);                                                             \
	unsigned long v = visits++, n = 8 + v % 113;                             \
	if (v < 64 || (v >= QUIET && v < QUIET + CONTEXTS)) {                    \
		char *a = W_MALLOC(f##k, n), *b = W_MALLOC(f##k, n + 1), *c;     \
		if (!a || !b)                                                    \
			return;                                                  \
		got(n), got(n + 1);                                              \
		if (!(c = W_REALLOC(f##k, b, n / 2 + 1)))                        \
			return;                                                  \
		gone(n + 1), got(n / 2 + 1);                                     \
		W_FREE(f##k, c);                                                 \
		gone(n / 2 + 1);                                                 \
		if (nkept < KEEP && v % 3 == 0) {                                \
			kept[nkept] = a;                                         \
			kept_size[nkept++] = n;                                  \
		} else {                                                         \
			W_FREE(f##k, a);                                         \
			gone(n);                                                 \
		}                                                                \
	}                                                                        \
	if (v < QUIET + CONTEXTS)                                                \
		step(k, used, depth)

static void f0(unsigned used, int depth) { BODY(0); }
static void f1(unsigned used, int depth) { BODY(1); }
static void f2(unsigned used, int depth) { BODY(2); }
static void f3(unsigned used, int depth) { BODY(3); }
static void f4(unsigned used, int depth) { BODY(4); }
static void f5(unsigned used, int depth) { BODY(5); }
static void f6(unsigned used, int depth) { BODY(6); }
static void f7(unsigned used, int depth) { BODY(7); }
static void f8(unsigned used, int depth) { BODY(8); }
static void f9(unsigned used, int depth) { BODY(9); }

static void (*const fns[10])(unsigned, int) = {f0, f1, f2, f3, f4, f5, f6, f7, f8, f9};

/* Calls every function not yet on the path from k's context. */
static void step(int k, unsigned used, int depth)
{
	int j;
	used |= 1u << k;
	for (j = 0; j < 10 && visits < QUIET + CONTEXTS; j++)
		if (!(used & 1u << j))
			fns[j](used, depth + 1);
}

int main(void)
{
	ENTER(main);
	static char outbuf[BUFSIZ];
	unsigned long i;
	int j;
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	for (j = 0; j < 10 && visits < QUIET + CONTEXTS; j++)
		fns[j](0, 0);
	if (visits < QUIET + CONTEXTS)
		return 2;
	/* Half the kept blocks freed from main, the rest leaked. */
	for (i = 0; i < nkept; i += 2) {
		W_FREE(main, kept[i]);
		gone(kept_size[i]);
	}
	printf("in use at exit: %lu bytes in %lu blocks\n", live_bytes, live_blocks);
	printf("total heap usage: %lu allocs, %lu frees, %lu bytes allocated\n", allocs, frees, bytes);
	return 0;
}
