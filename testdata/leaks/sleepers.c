/* Threads that sleep in a loop, poll(NULL, 0, 1000) then nanosleep(50
   ms), and print any error, while the process exits: the leak scan stops
   them for its scan and resumes them while the profile is written, and no
   call of theirs may end early (EINTR). argv[1]:
     plain - main exits after 100 ms;
     churn - one more thread creates and joins short-lived threads all the
             while: threads are created and end during the stop;
     pexit - main ends with pthread_exit (a zombie in /proc/self/task),
             a thread of its calls exit;
     fork  - the process forks first, the child exits (its scan has no
             other thread to stop), the parent waits for it. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *worker(void *a)
{
	(void)a;
	for (;;) {
		struct timespec ts = {0, 50000000};
		if (poll(NULL, 0, 1000) < 0)
			fprintf(stderr, "poll: %s\n", strerror(errno));
		if (nanosleep(&ts, NULL) < 0)
			fprintf(stderr, "nanosleep: %s\n", strerror(errno));
	}
	return NULL;
}

static void *brief(void *a)
{
	free(malloc(32));
	return a;
}

static void *churn(void *a)
{
	for (;;) {
		pthread_t t;
		if (pthread_create(&t, NULL, brief, a) == 0)
			pthread_join(t, NULL);
	}
	return NULL;
}

static void *leave(void *a)
{
	(void)a;
	usleep(100000);
	exit(0);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "plain";
	char *keep = malloc(100);
	pthread_t t;
	for (int i = 0; i < 4; i++)
		pthread_create(&t, NULL, worker, NULL);
	if (!strcmp(mode, "churn"))
		pthread_create(&t, NULL, churn, NULL);
	if (!strcmp(mode, "fork")) {
		pid_t p = fork();
		if (p == 0)
			exit(0);
		if (p < 0 || waitpid(p, NULL, 0) != p)
			return 2;
	}
	if (!strcmp(mode, "pexit")) {
		puts(keep ? "bye" : "no");
		fflush(stdout);
		pthread_create(&t, NULL, leave, NULL);
		pthread_exit(NULL);
	}
	usleep(100000);
	puts(keep ? "bye" : "no");
	exit(0);
}
