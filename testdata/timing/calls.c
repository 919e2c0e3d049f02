/* calls: the cost per call of a small non-inlined function. Prints
   "ns_per_call X" for the loop of N calls (default 100M), timed inside the
   program so that start-up and exit (profile writing) are left out.
   Built with -DREF (x86-64), small() does what exact timing cannot do with
   less: two inline rdtsc and a push and a pop on a thread-local array.
   Usage: calls [n]. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef REF
static __thread struct {
	long node;
	unsigned long long t0;
} stack[64];
static __thread unsigned depth;
static unsigned long long ticks;
#endif

__attribute__((noinline)) static long small(long x)
{
#ifdef REF
	unsigned d = ++depth;
	stack[d].node = 1;
	stack[d].t0 = __builtin_ia32_rdtsc();
	x = x * 3 + 1;
	__asm__ volatile("" : "+r"(x));
	ticks += __builtin_ia32_rdtsc() - stack[d].t0;
	depth = d - 1;
	return x;
#else
	return x * 3 + 1;
#endif
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000000, s = 0;
	double t = now();
	for (long i = 0; i < n; i++)
		s = small(s);
	t = now() - t;
	printf("ns_per_call %.2f\n", t * 1e9 / (double)n);
	return s == 42;
}
