/* pthread_cancel: threads cancelled at once, while deep in nested calls
   (a read of a pipe that is never written: a cancellation point); each
   thread's cleanup handler, pushed by pthread_cleanup_push, runs after
   the cancellation's unwinding jumps back into the function that pushed
   it (glibc's __sigsetjmp_cancel), and allocates there: its blocks must
   be charged to handler <- work, as memcheck says, not under the frames
   of the calls the cancellation ended. A handler popped with
   pthread_cleanup_pop(1) runs as a plain call. The runtime must reach no
   cancellation point of its own in a thread before the program's first
   (the handler would not run). Each site has its own size. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NT 4

static int fds[2];
static void *keep[64];
static int nkeep;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void hold(size_t n)
{
	pthread_mutex_lock(&mu);
	keep[nkeep++] = malloc(n);
	pthread_mutex_unlock(&mu);
}

static void handler(void *arg)
{
	hold(101 + (size_t)(long)arg % 2);
}

static int deep2(int i)
{
	char c;
	free(malloc(7));
	return (int)read(fds[0], &c, 1) + i; /* never returns: cancelled */
}

static int deep1(int i)
{
	hold(11);
	return deep2(i) * 3;
}

static void *work(void *arg)
{
	int r;
	pthread_cleanup_push(handler, arg);
	r = deep1((int)(long)arg);
	pthread_cleanup_pop(0);
	return (void *)(long)r;
}

static void popped(void *arg)
{
	(void)arg;
	hold(103);
}

static void *normal(void *arg)
{
	pthread_cleanup_push(popped, arg);
	hold(13);
	pthread_cleanup_pop(1);
	hold(104);
	return NULL;
}

int main(void)
{
	pthread_t t[NT], n;
	int canceled = 0;
	if (pipe(fds) != 0)
		return 2;
	for (long i = 0; i < NT; i++) {
		if (pthread_create(&t[i], NULL, work, (void *)i) != 0)
			return 2;
		pthread_cancel(t[i]);
	}
	for (int i = 0; i < NT; i++) {
		void *res;
		pthread_join(t[i], &res);
		canceled += res == PTHREAD_CANCELED;
	}
	if (pthread_create(&n, NULL, normal, NULL) != 0)
		return 2;
	pthread_join(n, NULL);
	hold(105);
	printf("%d of %d canceled, %d blocks kept\n", canceled, NT, nkeep);
	return 0;
}
