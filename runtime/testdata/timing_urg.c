/* Sampled timing and a program that uses SIGURG itself: main installs a
   SIGURG handler (URG_EARLY=1: a constructor that runs before the
   runtime's does), raises it once and does work. The runtime's sampling
   signals go to its own thread: the handler gets the one raise() only,
   and the program prints 1.
   URG_STEAL=1: the program sends itself, process-wide, the signal the
   sampler's timers use (the highest real-time one but one here), blocked
   in its only thread, and takes it with sigtimedwait. The sampler may
   take it first (it waits for that signal): it must send it back, so the
   program gets it all the same, and stop sampling. Prints 1 when the
   program got its signal, from itself. */
#include "woven.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

static int steal(void)
{
	int sig = SIGRTMAX - 1;
	struct timespec ts = {5, 0}, nap = {0, 50000000};
	sigset_t set;
	siginfo_t si;
	int r;
	work();
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_BLOCK, &set, NULL);
	kill(getpid(), sig);
	nanosleep(&nap, NULL); /* the sampler, waiting, most likely takes it first */
	r = sigtimedwait(&set, &si, &ts);
	work();
	printf("%d\n", r == sig && si.si_pid == getpid());
	return 0;
}

int main(void)
{
	ENTER(main);
	if (getenv("URG_STEAL"))
		return steal();
	if (!getenv("URG_EARLY"))
		install();
	raise(SIGURG);
	work();
	printf("%d\n", (int)urgs);
	return 0;
}
