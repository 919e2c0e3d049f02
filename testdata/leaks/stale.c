/* Blocks whose only pointers lie in stack frames that are gone by the time
   the program exits: memcheck calls every one definitely lost, and so must
   the leak scan, which reads only the live part of each stack (stale
   words in dead frames, and in the unwritten slots of the exit path's
   frames laid over them, are not roots). The pointers are kept in
   volatile arrays, so that the verdict does not depend on register
   allocation. argv[1]:
     main    - main's own array; main returns;
     callee  - a callee's array; it returns, then main returns;
     deep    - a callee's array (buried); it returns, then exit() from
               four calls down, a leaf of the stack that is then live;
     thread  - a thread's array; the thread ends, main joins it and returns;
     running - a callee's array in a thread that then waits, stopped for
               the scan while main returns;
     quick   - as deep, with quick_exit();
     handler - as deep, the exit() made by a signal handler (SIGUSR1);
     live    - a live frame's array (deep's callers' frames hold it): still
               reachable, as memcheck says;
     register- as callee, then exit() from a callee while main keeps a
               block in a callee-saved register (gcc and clang at -O2):
               still reachable, as memcheck says, which finds it where the
               exit path saved the register. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 64

static __attribute__((noinline)) void fill(void *volatile *a, int n, int size)
{
	for (int i = 0; i < n; i++)
		a[i] = malloc((size_t)size + (size_t)i); /* site:fill */
}

static __attribute__((noinline)) int callee(void)
{
	void *volatile a[N];
	fill(a, N, 24);
	return a[0] != 0;
}

/* callee, 16 KiB below: its dead frame lies under every frame that the
   exit path keeps live (leave, raise, a signal frame), none of whose
   slots the program never wrote can then hold one of its stale pointers
   (memcheck calls such slots undefined; the leak scan cannot tell). */
static __attribute__((noinline)) int buried(void)
{
	volatile char pad[16384];
	pad[0] = 1;
	__asm__ volatile("" : : "r"(pad) : "memory"); /* all of it: clang -O2 kept only pad[0] */
	return callee() + pad[0];
}

static void *thread_main(void *arg)
{
	void *volatile a[N];
	(void)arg;
	fill(a, N, 40);
	return a[1] ? arg : NULL;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int filled;

static void *waiter(void *arg)
{
	(void)arg;
	buried();
	pthread_mutex_lock(&mu);
	filled = 1;
	pthread_cond_broadcast(&cv);
	while (filled)
		pthread_cond_wait(&cv, &mu); /* until the process ends */
	pthread_mutex_unlock(&mu);
	return NULL;
}

static int mode_quick, mode_handler;

static void on_usr1(int sig)
{
	(void)sig;
	exit(0);
}

static __attribute__((noinline)) void leave(void)
{
	if (mode_quick)
		quick_exit(0);
	if (mode_handler) {
		signal(SIGUSR1, on_usr1);
		raise(SIGUSR1);
	}
	exit(0);
}

static __attribute__((noinline)) void leave_if(int c)
{
	if (c > 0)
		exit(0);
}

/* Each level keeps its own frame (its volatile local) above the next. */
static __attribute__((noinline)) void deep(int n)
{
	volatile int here = n;
	if (n == 0) {
		buried();
		leave();
	}
	deep(here - 1);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void live(int n)
{
	void *volatile a[N];
	fill(a, N, 56);
	deep(n);
	__asm__ volatile("" : : "r"(a) : "memory");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "main";
	if (!strcmp(mode, "main")) {
		void *volatile a[N];
		fill(a, N, 16);
		return a[2] == 0;
	}
	if (!strcmp(mode, "callee"))
		return !callee();
	if (!strcmp(mode, "thread")) {
		pthread_t t;
		void *r;
		if (pthread_create(&t, NULL, thread_main, (void *)mode) || pthread_join(t, &r))
			return 2;
		return r == NULL;
	}
	if (!strcmp(mode, "running")) {
		pthread_t t;
		if (pthread_create(&t, NULL, waiter, NULL))
			return 2;
		pthread_mutex_lock(&mu);
		while (!filled)
			pthread_cond_wait(&cv, &mu);
		pthread_mutex_unlock(&mu);
		return 0;
	}
	if (!strcmp(mode, "register")) {
		char *p = malloc(100); /* site:register */
		snprintf(p, 100, "%d", argc);
		buried();
		leave_if(argc);
		puts(p);
		return 0;
	}
	mode_quick = !strcmp(mode, "quick");
	mode_handler = !strcmp(mode, "handler");
	if (!strcmp(mode, "live"))
		live(4);
	deep(4);
	return 3;
}
