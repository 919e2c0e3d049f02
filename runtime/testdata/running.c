/* main returns while other threads are still allocating, creating new
   contexts (ever deeper recursion) and starting short-lived threads: the
   exit writer must neither crash nor write a malformed profile. */
#include "woven.h"
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

FN(main);
FN(spin);
FN(dive);
FN(brief);

static void *brief(void *arg)
{
	ENTER(brief);
	W_FREE(brief, W_MALLOC(brief, 10));
	return arg;
}

static void dive(long n)
{
	ENTER(dive);
	if (n > 0) {
		dive(n - 1);
		return;
	}
	W_FREE(dive, W_MALLOC(dive, 100));
	W_MALLOC(dive, 1); /* leaked */
}

static void *spin(void *arg)
{
	ENTER(spin);
	long i;
	for (i = 0;; i++) {
		dive(i % 5000);
		if (i % 64 == 0) {
			pthread_t t;
			if (pthread_create(&t, NULL, brief, NULL) == 0)
				pthread_detach(t);
		}
	}
	return arg;
}

int main(void)
{
	ENTER(main);
	int i;
	for (i = 0; i < 4; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, spin, NULL) != 0)
			return 1;
		pthread_detach(t);
	}
	usleep(30000);
	return 0;
}
