/* sandbox.c: a program that restricts itself, then exits. "seccomp": a
   filter allowing read, write and exit_group only (killing the process
   for anything else), set by the seccomp system call (libseccomp's way),
   and the program exits 5; "tsync": the same filter set on every thread
   of the process, then 0.1-0.3 s of CPU ("tsync-long": 2-8 s, more
   than the control channel's thread sleeps), and the program exits 5;
   "thread": a filter (by prctl) that kills the process for socket, then
   a thread of the program's, and the program exits 5; "fsize": RLIMIT_FSIZE of 100 bytes, set after
   it allocated half a megabyte, and the program exits 6, its stdout
   flushed at exit; "landlock": a landlock ruleset that forbids opening
   any file for reading or writing and making one (xz 5.6's sandbox does
   this much), then a block lost, and the program exits 7 ("no landlock"
   and 0 where the kernel has none). The woven program must exit as the
   plain one. */
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *keep[1000];

static int only_read_write(unsigned flags)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_read, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof f / sizeof f[0], f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog)) {
		perror("seccomp");
		return -1;
	}
	return 0;
}

static void *worker(void *arg)
{
	free(malloc(10));
	return arg;
}

static int no_sockets(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof f / sizeof f[0], f};
	pthread_t t;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("seccomp");
		return -1;
	}
	return pthread_create(&t, NULL, worker, NULL) || pthread_join(t, NULL);
}

/* Forbids opening files for reading or writing, and making them. */
static int landlocked(void)
{
	struct landlock_ruleset_attr a = {.handled_access_fs = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE |
							       LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_READ_DIR};
	int fd = (int)syscall(SYS_landlock_create_ruleset, &a, sizeof a, 0);
	if (fd < 0)
		return 1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_landlock_restrict_self, fd, 0) != 0) {
		perror("landlock");
		exit(2);
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct rlimit small = {100, 100};
	char *msg = malloc(32);
	int i;
	for (i = 0; i < 1000; i++)
		keep[i] = malloc((size_t)i + 1);
	if (argc > 1 && strcmp(argv[1], "thread") == 0) {
		if (no_sockets())
			return 2;
		printf("sandboxed\n");
		return 5;
	}
	if (argc > 1 && (strcmp(argv[1], "seccomp") == 0 || strncmp(argv[1], "tsync", 5) == 0)) {
		volatile unsigned long x = 0;
		int all = strncmp(argv[1], "tsync", 5) == 0;
		unsigned long n = strcmp(argv[1], "tsync-long") == 0 ? 4000000000ul : 100000000ul;
		strcpy(msg, "sandboxed\n");
		if (only_read_write(all ? SECCOMP_FILTER_FLAG_TSYNC : 0))
			return 2;
		for (unsigned long k = 0; all && k < n; k++)
			x += k;
		write(1, msg, strlen(msg));
		return 5;
	}
	if (argc > 1 && strcmp(argv[1], "landlock") == 0) {
		if (landlocked()) {
			printf("no landlock\n");
			return 0;
		}
		msg = NULL; /* lost */
		printf("landlocked: %s\n", fopen("/etc/passwd", "r") ? "no" : "yes");
		return 7;
	}
	if (argc > 1 && strcmp(argv[1], "fsize") == 0) {
		setrlimit(RLIMIT_FSIZE, &small);
		printf("limited to %d bytes\n", (int)small.rlim_cur);
		return 6;
	}
	return 1;
}
