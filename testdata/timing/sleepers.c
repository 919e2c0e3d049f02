/* sleepers: threads that do work in ratio 1:2:3 (work1, work2, work3, each
   a few ms of CPU a call) between short sleeps in poll, nanosleep and
   epoll_wait, and report what a profiler could disturb: any sleep cut
   short (EINTR), any signal handler the program did not install, the
   glibc single-thread flag, and the tasks that are not the program's.
   The program handles SIGURG and SIGUSR1 itself and raises each once.
   Usage: sleepers [threads [rounds [unit]]]: threads (1 or more, main
   included) each do rounds rounds of work1(unit), work2, work3, with
   naps around each; unit in million steps. Prints:
     single N      __libc_single_threaded at start (1: glibc's fast paths)
     tasks N: X    the program's threads, and the names of the others
     eintr N       calls cut short by a signal
     urg N usr1 N  the program's own signals, as it raised them
     foreign: ...  signals whose handler is not SIG_DFL nor the program's */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/single_threaded.h>
#include <time.h>
#include <unistd.h>

static __thread volatile unsigned long long sink; /* per thread: no data race */
static volatile sig_atomic_t urgs, usr1s;
static int eintrs, rounds;
static long unit;
static pthread_barrier_t started;

#define SPIN(n)                                                                   \
	do {                                                                      \
		unsigned long long x_ = sink;                                     \
		for (long i_ = 0; i_ < (n); i_++)                                 \
			x_ = x_ * 6364136223846793005ull + 1442695040888963407ull; \
		sink = x_;                                                        \
	} while (0)

__attribute__((noinline)) static void work1(void)
{
	SPIN(1 * unit);
}

__attribute__((noinline)) static void work2(void)
{
	SPIN(2 * unit);
}

__attribute__((noinline)) static void work3(void)
{
	SPIN(3 * unit);
}

/* Three short sleeps, each a different call; counts those cut short. */
__attribute__((noinline)) static void naps(int ep)
{
	struct timespec ts = {0, 200000};
	struct epoll_event ev;
	int n = 0;
	if (poll(NULL, 0, 1) < 0 && errno == EINTR)
		n++;
	if (nanosleep(&ts, NULL) != 0 && errno == EINTR)
		n++;
	if (epoll_wait(ep, &ev, 1, 1) < 0 && errno == EINTR)
		n++;
	__atomic_fetch_add(&eintrs, n, __ATOMIC_RELAXED);
}

static void *worker(void *arg)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0) {
		perror("epoll_create1");
		exit(2);
	}
	if (arg)
		pthread_barrier_wait(&started);
	for (int r = 0; r < rounds; r++) {
		work1();
		naps(ep);
		work2();
		naps(ep);
		work3();
		naps(ep);
	}
	close(ep);
	return NULL;
}

static void on_urg(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	urgs++;
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1s++;
}

/* The names of the tasks whose name is not the main thread's, and how
   many are. */
static void tasks(void)
{
	char self[64] = "", names[1024] = "", path[128], name[64];
	int mine = 0;
	FILE *f = fopen("/proc/self/comm", "r");
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	if (!f || !fgets(self, sizeof self, f) || !d) {
		perror("/proc/self");
		exit(2);
	}
	fclose(f);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(name, sizeof name, f)) {
			if (strcmp(name, self) == 0)
				mine++;
			else {
				name[strcspn(name, "\n")] = 0;
				strcat(strcat(names, " "), name);
			}
		}
		fclose(f);
	}
	closedir(d);
	printf("tasks %d:%s\n", mine, names);
}

/* The signals whose handler is neither SIG_DFL nor the program's. */
static void handlers(void)
{
	printf("foreign:");
	for (int s = 1; s < NSIG; s++) {
		struct sigaction sa;
		void *h;
		if (sigaction(s, NULL, &sa) != 0)
			continue; /* SIGKILL's and SIGSTOP's are SIG_DFL; glibc's own */
		h = (sa.sa_flags & SA_SIGINFO) ? (void *)sa.sa_sigaction : (void *)sa.sa_handler;
		if (h != (void *)SIG_DFL && h != (void *)on_urg && h != (void *)on_usr1)
			printf(" %d", s);
	}
	printf("\n");
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 2;
	struct sigaction sa;
	pthread_t th[16];
	rounds = argc > 2 ? atoi(argv[2]) : 20;
	unit = (long)((argc > 3 ? atof(argv[3]) : 2) * 1e6);
	if (threads < 1 || threads > 16) {
		fprintf(stderr, "sleepers: 1 to 16 threads\n");
		return 2;
	}
	printf("single %d\n", (int)__libc_single_threaded);
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_urg;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGURG, &sa, NULL);
	signal(SIGUSR1, on_usr1);
	raise(SIGURG);
	raise(SIGUSR1);
	pthread_barrier_init(&started, NULL, (unsigned)threads);
	for (int i = 1; i < threads; i++)
		if (pthread_create(&th[i], NULL, worker, &started) != 0) {
			perror("pthread_create");
			return 2;
		}
	if (threads > 1)
		pthread_barrier_wait(&started);
	tasks();
	worker(NULL);
	for (int i = 1; i < threads; i++)
		pthread_join(th[i], NULL);
	printf("eintr %d\nurg %d usr1 %d\n", eintrs, (int)urgs, (int)usr1s);
	handlers();
	return 0;
}
