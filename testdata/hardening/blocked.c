/* blocked.c: blocks in one call while weave trace, weave snapshot and
   weave mark are sent to it, and says whether the call was cut short.

   blocked CALL MS THREADS [own]
     CALL: sleep, nanosleep, poll, select, epoll_wait, condwait (a
     pthread_cond_timedwait), read (one byte from stdin, a pipe).
     Each of THREADS threads (the main one included) makes the call,
     asking for MS ms (read: until its byte comes), checks its result and
     that the time asked for passed, and prints what it saw. "own" first
     installs a handler of the program's for every signal it may catch,
     checks at the end that none ran while it was blocked, then raises
     each and checks that its own handler ran.
   It first prints the number its next open gets and whether the
   runtime counts one thread ("ready: next descriptor 3, one thread 1").
   blocked fork MS
     The child prints "child PID" and sleeps MS ms; the parent waits for
     it. Prints "ready" (after the child's line) when the calls start.
   blocked exec MS
     A failed exec (the channel is bound again), a byte read from stdin,
     then an exec of itself as "blocked sleep MS 1" (the new image opens
     its own).
   blocked rawexec MS
     An exec of itself as "blocked sleep MS 1" by the system call, past
     the runtime's exec wrappers: the new image finds the socket the old
     one left and replaces it.
   blocked closefrom MS
     Closes every descriptor from 3 up (as daemons do), opens a socket of
     its own and prints its number, then sleeps MS ms.
   Exit status 0 if every call behaved, else 3. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern unsigned char __weave_solo __attribute__((weak));

static const char *call;
static int ms;
static volatile sig_atomic_t caught[65];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Makes the call; returns its result as a string of what it returned. */
static int block(char *what, size_t n)
{
	double t0 = now_ms();
	long r = 0;
	int e = 0, want_full = 1, asked = ms;
	if (!strcmp(call, "sleep")) {
		asked = ms / 1000 * 1000;
		r = sleep((unsigned)(ms / 1000));
	} else if (!strcmp(call, "nanosleep")) {
		struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
		r = nanosleep(&ts, NULL);
	} else if (!strcmp(call, "poll")) {
		r = poll(NULL, 0, ms);
	} else if (!strcmp(call, "select")) {
		struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
		r = select(0, NULL, NULL, NULL, &tv);
	} else if (!strcmp(call, "epoll_wait")) {
		struct epoll_event ev;
		int ep = epoll_create1(EPOLL_CLOEXEC);
		r = epoll_wait(ep, &ev, 1, ms);
		close(ep);
	} else if (!strcmp(call, "condwait")) {
		pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += ms / 1000;
		ts.tv_nsec += (ms % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&mu);
		do
			r = pthread_cond_timedwait(&cv, &mu, &ts);
		while (r == 0); /* a spurious wakeup is allowed; EINTR is not */
		pthread_mutex_unlock(&mu);
		r = r == ETIMEDOUT ? 0 : r;
	} else if (!strcmp(call, "read")) {
		char c;
		r = read(0, &c, 1);
		r = r == 1 ? 0 : -1;
		want_full = 0;
	} else {
		fprintf(stderr, "unknown call %s\n", call);
		exit(2);
	}
	e = r < 0 ? errno : 0;
	if (r != 0) {
		snprintf(what, n, "%s returned %ld (%s)", call, r, e ? strerror(e) : "not 0");
		return 0;
	}
	if (want_full && now_ms() - t0 < asked) {
		snprintf(what, n, "%s returned 0 early", call);
		return 0;
	}
	snprintf(what, n, "%s returned 0%s", call, want_full ? " after the time asked for" : "");
	return 1;
}

static int all_ok = 1;
static char what[16][200];
static int ok[16];

static void *thread_main(void *arg)
{
	long i = (long)(intptr_t)arg;
	ok[i] = block(what[i], sizeof what[i]);
	return NULL;
}

static void on_signal(int sig)
{
	caught[sig]++;
}

/* The signals a program may catch (glibc keeps 32 and 33). */
static int catchable(int s)
{
	return s != SIGKILL && s != SIGSTOP && (s < 32 || s >= SIGRTMIN);
}

static void own_handlers(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (int s = 1; s <= SIGRTMAX; s++)
		if (catchable(s) && sigaction(s, &sa, NULL) != 0) {
			printf("sigaction %d failed\n", s);
			all_ok = 0;
		}
}

/* None of the program's handlers ran while it was blocked; each runs
   when its signal is raised. */
static void check_handlers(void)
{
	int ran = 0, n = 0;
	for (int s = 1; s <= SIGRTMAX; s++)
		ran += caught[s];
	printf("own handlers run while blocked: %d\n", ran);
	all_ok &= ran == 0;
	for (int s = 1; s <= SIGRTMAX; s++) {
		if (!catchable(s))
			continue;
		raise(s);
		n += caught[s] == 1;
		if (caught[s] != 1)
			printf("own handler of %d: ran %d times\n", s, (int)caught[s]);
	}
	printf("own handlers run when raised: %d\n", n);
	for (int s = 1; s <= SIGRTMAX; s++)
		all_ok &= !catchable(s) || caught[s] == 1;
}

int main(int argc, char **argv)
{
	int threads, own;
	pthread_t th[16];
	if (argc < 3)
		return 2;
	call = argv[1];
	ms = atoi(argv[2]);
	if (!strcmp(call, "fork")) {
		pid_t pid;
		int st = 0;
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			printf("child %d\n", (int)getpid());
			fflush(stdout);
			call = "sleep";
			all_ok = block(what[0], sizeof what[0]);
			printf("child: %s\n", what[0]);
			return all_ok ? 0 : 3;
		}
		waitpid(pid, &st, 0);
		printf("parent: child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 3;
	}
	if (!strcmp(call, "exec")) {
		char *args[] = {argv[0], "sleep", argv[2], "1", NULL};
		int e = execv("/nonexistent/blocked", args) == -1 ? errno : 0;
		char c;
		printf("failed exec: %s\n", strerror(e));
		fflush(stdout);
		if (read(0, &c, 1) != 1)
			return 3;
		execv("/proc/self/exe", args);
		return 3;
	}
	if (!strcmp(call, "rawexec")) {
		char *args[] = {argv[0], "sleep", argv[2], "1", NULL};
		syscall(SYS_execve, "/proc/self/exe", args, environ);
		return 3;
	}
	if (!strcmp(call, "closefrom")) {
		int fd;
		for (fd = 3; fd < 4096; fd++)
			close(fd);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		printf("ready: own socket at %d\n", fd);
		fflush(stdout);
		call = "sleep";
		all_ok = block(what[0], sizeof what[0]);
		printf("%s\n", what[0]);
		return all_ok ? 0 : 3;
	}
	threads = argc > 3 ? atoi(argv[3]) : 1;
	own = argc > 4 && !strcmp(argv[4], "own");
	if (threads < 1 || threads > 16)
		return 2;
	if (own)
		own_handlers();
	{
		/* The runtime's descriptors leave the program's numbering
		   alone, and its thread does not count as a second thread of
		   the program's (woven code's one-thread fast path, 1 while
		   one thread is set up; unwoven, no such flag: 1). */
		int fd = open("/dev/null", O_RDONLY);
		printf("ready: next descriptor %d, one thread %d\n", fd, &__weave_solo ? __weave_solo : 1);
		close(fd);
	}
	fflush(stdout);
	for (long i = 1; i < threads; i++)
		pthread_create(&th[i], NULL, thread_main, (void *)i);
	thread_main((void *)0);
	for (int i = 1; i < threads; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < threads; i++) {
		printf("thread %d: %s\n", i, what[i]);
		all_ok &= ok[i];
	}
	{
		/* The same after the requests (weave trace keeps two open). */
		int fd = open("/dev/null", O_RDONLY), fd2 = open("/dev/null", O_RDONLY);
		printf("next descriptors %d %d\n", fd, fd2);
		close(fd);
		close(fd2);
	}
	if (own)
		check_handlers();
	return all_ok ? 0 : 3;
}
