/* Threads (main and THREADS more) that each call FNS functions in turn
   from one node, ROUNDS times (argv[1]), while a SIGPROF handler runs
   woven code in whichever thread the timer interrupts: more (node,
   function) pairs than a thread's first child cache holds, so every
   thread replaces it by the larger one (its slow path's enter, or the
   handler's), and the handler's enters land between the guard's reads.
   Every f<k> node under a thread's loop must count exactly ROUNDS calls.
   Prints "rounds R handled H" (H: handler runs). */
#include "woven.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 2
#define FNS 256
#define HFNS 64

FN(loop);
FN(handler);
static __thread volatile unsigned sink;
static int handled;

/* f0 ... f255 and h0 ... h63: a woven function each. */
#define F(k)                                   \
	FN(f##k);                              \
	static __attribute__((noinline)) void f##k(void) \
	{                                      \
		ENTER(f##k);                   \
		sink += k;                     \
	}
#define F4(k) F(k##0) F(k##1) F(k##2) F(k##3)
#define F16(k) F4(k##0) F4(k##1) F4(k##2) F4(k##3)
#define R(k) f##k,
#define R4(k) R(k##0) R(k##1) R(k##2) R(k##3)
#define R16(k) R4(k##0) R4(k##1) R4(k##2) R4(k##3)
/* Names in base 4: f0000 ... f3333. */
F16(00) F16(01) F16(02) F16(03) F16(10) F16(11) F16(12) F16(13)
F16(20) F16(21) F16(22) F16(23) F16(30) F16(31) F16(32) F16(33)
static void (*const fns[FNS])(void) = {R16(00) R16(01) R16(02) R16(03) R16(10) R16(11) R16(12) R16(13)
					R16(20) R16(21) R16(22) R16(23) R16(30) R16(31) R16(32) R16(33)};
_Static_assert(sizeof fns / sizeof fns[0] == FNS, "FNS functions");

static void handler(int sig)
{
	ENTER(handler);
	int k;
	(void)sig;
	int n = __atomic_fetch_add(&handled, 1, __ATOMIC_RELAXED);
	for (k = 0; k < HFNS; k++)
		fns[(n * 7 + k * 5) % FNS]();
}

static void *loop(void *arg)
{
	ENTER(loop);
	long r, rounds = (long)arg;
	int k;
	for (r = 0; r < rounds; r++)
		for (k = 0; k < FNS; k++)
			fns[(k * 37 + r) % FNS]();
	return NULL;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 2000;
	pthread_t th[THREADS];
	int i;
	sigprof_every(handler, 200);
	for (i = 0; i < THREADS; i++)
		if (pthread_create(&th[i], NULL, loop, (void *)rounds) != 0)
			return 2;
	loop((void *)rounds);
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	sigprof_every(handler, 0);
	printf("rounds %ld handled %d\n", rounds, __atomic_load_n(&handled, __ATOMIC_RELAXED));
	return 0;
}
