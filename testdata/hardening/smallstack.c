/* Small stacks: the runtime's work must fit in whatever stack the program
   gives the thread that does it. argv[1]:
     thread       a thread with a 16 KiB stack (glibc's PTHREAD_STACK_MIN)
                  allocates 41 bytes (kept) and returns; main returns
     thread_fork  the same thread forks; the child allocates 45 bytes
                  (kept) and exits with 5, the thread waits for it
     thread_exit  the same thread allocates 41 bytes and calls exit(43)
     alt_exit     a SIGUSR1 handler on an 8 KiB sigaltstack calls exit(8)
     alt__exit    the same handler calls _exit(7)
     alt_abort    with an 8 KiB sigaltstack in place, abort() (no
                  handler: the default action)
   main keeps 30 bytes first in every case. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *keep[4];
static const char *how;
static char altstack[8192];

static void *worker(void *arg)
{
	(void)arg;
	keep[1] = malloc(41);
	if (!strcmp(how, "thread_exit"))
		exit(43);
	if (!strcmp(how, "thread_fork")) {
		pid_t pid = fork();
		int st;
		if (pid == 0) {
			keep[2] = malloc(45);
			exit(5);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 5)
			return "child";
	}
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
	if (!strcmp(how, "alt__exit"))
		_exit(7);
	exit(8);
}

int main(int argc, char **argv)
{
	how = argc > 1 ? argv[1] : "thread";
	keep[0] = malloc(30);
	if (!strncmp(how, "thread", 6)) {
		pthread_attr_t at;
		pthread_t t;
		void *r = NULL;
		if (pthread_attr_init(&at) || pthread_attr_setstacksize(&at, 16384) ||
		    pthread_create(&t, &at, worker, NULL) || pthread_join(t, &r))
			return 2;
		if (r)
			return 3;
		printf("thread done\n");
		return 0;
	}
	if (!strncmp(how, "alt_", 4)) {
		stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
		struct sigaction sa;
		if (sigaltstack(&ss, NULL))
			return 2;
		if (!strcmp(how, "alt_abort"))
			abort();
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_usr1;
		sa.sa_flags = SA_ONSTACK;
		sigaction(SIGUSR1, &sa, NULL);
		raise(SIGUSR1);
	}
	return 1;
}
