/* Threads blocked at exit, one in each call the kernel restarts after a
   ptrace stop: poll, nanosleep, read (of a pipe nobody writes) and
   pthread_cond_wait. Each keeps N blocks in its live frame (still
   reachable, as memcheck says) and dropped N more, whose pointers lie in
   a dead frame 16 KiB below its blocking call's (definitely lost). The
   leak scan stops them without a signal: no call ends early, nothing is
   printed but "done". argv[1]: "all", or "all-nodump": the process is
   made not dumpable first (PR_SET_DUMPABLE 0), so ptrace is refused and
   the scan falls back to stopping the threads with a signal, which cuts
   their calls short (each prints its error) but must still give
   memcheck's kinds; "masked": as "all", each thread blocking every
   signal (no signal could stop it: it would be scanned whole, dead
   frames and all; ptrace stops it). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define N 16

static const char *const calls[] = {"poll", "nanosleep", "read", "pthread_cond_wait"};
static int fds[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER, never = PTHREAD_COND_INITIALIZER;
static int ready, masked;

static __attribute__((noinline)) void fill(void *volatile *a, int n, int size)
{
	for (int i = 0; i < n; i++)
		a[i] = malloc((size_t)size + (size_t)i); /* site:fill */
}

static __attribute__((noinline)) int dropped(int size)
{
	void *volatile a[N];
	fill(a, N, size);
	return a[0] != 0;
}

/* dropped, 16 KiB below: its dead frame lies under the blocking call's
   frames, whose slots the call never wrote (memcheck calls them undefined
   and skips them; the scan cannot tell). The pad's address goes to an asm
   statement, or clang -O2 keeps only the byte written (its dead frame
   then lay right under the blocking call's: redzone.c). */
static __attribute__((noinline)) int buried(int size)
{
	volatile char pad[16384];
	pad[0] = 1;
	__asm__ volatile("" : : "r"(pad) : "memory");
	return dropped(size) + pad[0];
}

static __attribute__((noinline)) void block(int k)
{
	struct timespec ts = {3600, 0};
	char c;
	int r = 0;
	for (;;) {
		switch (k) {
		case 0:
			r = poll(NULL, 0, 3600 * 1000);
			break;
		case 1:
			r = nanosleep(&ts, NULL);
			break;
		case 2:
			r = (int)read(fds[0], &c, 1);
			break;
		default:
			pthread_mutex_lock(&mu);
			r = pthread_cond_wait(&never, &mu); /* returns an error number */
			pthread_mutex_unlock(&mu);
			errno = r;
			r = r ? -1 : 0;
		}
		if (r < 0)
			fprintf(stderr, "%s: %s\n", calls[k], strerror(errno));
	}
}

static void *worker(void *arg)
{
	int k = (int)(long)arg;
	void *volatile keep[N];
	sigset_t all;
	sigfillset(&all);
	if (masked)
		pthread_sigmask(SIG_BLOCK, &all, NULL);
	buried(24 + 8 * k);
	fill(keep, N, 200 + 8 * k);
	pthread_mutex_lock(&mu);
	ready++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	block(k);
	__asm__ volatile("" : : "r"(keep) : "memory");
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "all";
	pthread_t t;
	if (strcmp(mode, "all") && strcmp(mode, "all-nodump") && strcmp(mode, "masked"))
		return 2;
	masked = !strcmp(mode, "masked");
	if (!strcmp(mode, "all-nodump"))
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (pipe(fds))
		return 2;
	for (long k = 0; k < 4; k++)
		if (pthread_create(&t, NULL, worker, (void *)k))
			return 2;
	pthread_mutex_lock(&mu);
	while (ready < 4)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	usleep(50000); /* into their calls */
	puts("done");
	return 0;
}
