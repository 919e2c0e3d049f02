/* The ways out: argv[1] is return, exit, _exit, _Exit, quick_exit, abort,
   atexit (handlers that allocate and free run after main), thread (exit
   called from a thread), race (main and a thread call exit at once) or
   race_exit (main calls exit as a thread calls _exit), race_return (main
   returns as a thread calls exit) or vfork (a vfork
   child whose exec fails calls exit, as old code does). Each keeps blocks of
   sizes unique to it, so that a profile written too early lacks them. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *keep[8];

static void late(void)
{
	free(keep[1]);        /* the block main kept */
	keep[2] = malloc(77); /* kept */
	free(malloc(78));
}

static void later(void)
{
	keep[3] = malloc(79); /* the last handler run: kept */
}

static void quick(void)
{
	keep[4] = malloc(81);
}

static void *thread_exit(void *arg)
{
	(void)arg;
	keep[5] = malloc(82);
	exit(6);
}

static pthread_barrier_t both;

static void *thread_race(void *arg)
{
	keep[7] = malloc(84);
	pthread_barrier_wait(&both);
	if (arg)
		_exit(9);
	exit(9);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "return";
	keep[0] = malloc(10);
	keep[1] = malloc(20);
	free(malloc(30));
	if (!strcmp(how, "exit"))
		exit(3);
	if (!strcmp(how, "_exit"))
		_exit(4);
	if (!strcmp(how, "_Exit"))
		_Exit(5);
	if (!strcmp(how, "quick_exit")) {
		at_quick_exit(quick);
		quick_exit(7);
	}
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "atexit")) {
		atexit(later);
		atexit(late);
		return 8;
	}
	if (!strcmp(how, "thread")) {
		pthread_t t;
		pthread_create(&t, NULL, thread_exit, NULL);
		pthread_join(t, NULL);
	}
	if (!strcmp(how, "vfork")) {
		int st = 0;
		pid_t p = vfork();
		if (p == 0) {
			execlp("/nonexistent/weave-test", "x", (char *)NULL);
			exit(127);
		}
		waitpid(p, &st, 0);
		exit(WEXITSTATUS(st) == 127 ? 3 : 4);
	}
	if (!strncmp(how, "race", 4)) {
		pthread_t t;
		pthread_barrier_init(&both, NULL, 2);
		keep[6] = malloc(83);
		pthread_create(&t, NULL, thread_race, !strcmp(how, "race_exit") ? &both : NULL);
		pthread_barrier_wait(&both);
		if (!strcmp(how, "race_return"))
			return 9;
		exit(9);
	}
	return 0;
}
