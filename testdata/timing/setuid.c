/* A daemon's privilege drop: started as root, it gives up its groups,
   gid and uid for nobody's (as after initgroups, setgid, setuid), then
   looks at every thread of the process in /proc/self/task: none may
   keep a uid, gid or group of root's or a capability. With "thread", a
   thread of the program's own is running meanwhile (the C library's
   round reaches it). With "vfork", a vfork child first drops to nobody
   and exits: the parent's threads, which share its memory, keep root's
   credentials. Then it spins, so that samples taken after the drop
   show in the profile. Not root: it says so and does nothing. */
#define _GNU_SOURCE
#include <dirent.h>
#include <grp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static volatile int done;

/* Spins for s seconds of the thread's CPU time. */
__attribute__((noinline)) static void after(double s)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < s);
}

static void *idle(void *arg)
{
	(void)arg;
	while (!done)
		usleep(1000);
	return NULL;
}

/* Whether a status line of a thread still holds a privilege. */
static int privileged(const char *l)
{
	if (!strncmp(l, "Uid:", 4) || !strncmp(l, "Gid:", 4))
		return strcmp(l + 4, "\t65534\t65534\t65534\t65534\n") != 0;
	if (!strncmp(l, "Groups:", 7))
		return strcmp(l + 7, "\t65534 \n") != 0;
	if (!strncmp(l, "CapPrm:", 7) || !strncmp(l, "CapEff:", 7))
		return strcmp(l + 7, "\t0000000000000000\n") != 0;
	return 0;
}

/* Whether a thread of the process has a uid of nobody's. */
static int nobody_uid(const char *l)
{
	return !strncmp(l, "Uid:", 4) && strstr(l, "65534");
}

static int threads_with(int (*has)(const char *))
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d))) {
		char p[300], l[512];
		FILE *f;
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof p, "/proc/self/task/%s/status", e->d_name);
		if (!(f = fopen(p, "r")))
			continue;
		while (fgets(l, sizeof l, f))
			if (has(l)) {
				fprintf(stderr, "thread %s: %s", e->d_name, l);
				n++;
			}
		fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	gid_t nobody = 65534;
	pthread_t th;
	int thread = argc > 1 && !strcmp(argv[1], "thread"), st;
	pid_t child;
	if (geteuid() != 0) {
		puts("not root");
		return 0;
	}
	if (thread && pthread_create(&th, NULL, idle, NULL) != 0)
		return 2;
	if (argc > 1 && !strcmp(argv[1], "vfork")) {
		if ((child = vfork()) == 0)
			_exit(setuid(65534) != 0);
		if (child < 0 || waitpid(child, &st, 0) != child || st != 0)
			return 4;
		puts(threads_with(nobody_uid) ? "a thread of the parent took the child's uid" : "the parent kept its credentials");
	}
	if (setgroups(1, &nobody) != 0 || setgid(65534) != 0 || setuid(65534) != 0) {
		perror("drop");
		return 3;
	}
	puts(threads_with(privileged) ? "a thread kept a privilege" : "every thread dropped its privileges");
	fflush(stdout);
	after(0.2);
	if (thread) {
		done = 1;
		pthread_join(th, NULL);
	}
	return 0;
}
