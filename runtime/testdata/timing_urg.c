/* Sampled timing and a program that uses SIGURG itself: main installs a
   SIGURG handler (URG_EARLY=1: a constructor that runs before the
   runtime's does), raises it once and does work. The runtime's sampling
   signals go to its own thread: the handler gets the one raise() only,
   and the program prints 1. */
#include "woven.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

FN(main);
FN(work);

static volatile sig_atomic_t urgs;

static void on_urg(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	urgs++;
}

static void install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_urg;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGURG, &sa, NULL);
}

#pragma GCC diagnostic ignored "-Wprio-ctor-dtor"
__attribute__((constructor(100))) static void early(void)
{
	const char *e = getenv("URG_EARLY");
	if (e && *e == '1')
		install();
}

static volatile unsigned long long sink;

static void work(void)
{
	ENTER(work);
	unsigned long long x = sink;
	for (long i = 0; i < 100000000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

int main(void)
{
	ENTER(main);
	if (!getenv("URG_EARLY"))
		install();
	raise(SIGURG);
	work();
	printf("%d\n", (int)urgs);
	return 0;
}
