/* exitwhile.c: a thread calls exit(7) while main waits in pause(), which
   only a signal ends. Argument "nodump": the process is not dumpable, so
   the leak scan stops main by its signal (SIGURG), which a pause() cannot
   restart: released before the profile is written, main went on, returned
   0 from main and ended the process (exit 0, no profile). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/prctl.h>

static void *quit(void *arg)
{
	char *volatile kept = malloc(40); /* site:thread */
	(void)arg;
	(void)kept;
	usleep(50000); /* main is in pause() by then (or soon) */
	printf("thread exits\n");
	exit(7);
}

int main(int argc, char **argv)
{
	pthread_t t;
	if (argc > 1 && strcmp(argv[1], "nodump") == 0)
		prctl(PR_SET_DUMPABLE, 0);
	if (pthread_create(&t, NULL, quit, NULL) != 0)
		return 2;
	pause();
	printf("main returns\n");
	return 0;
}
