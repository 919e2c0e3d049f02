/* seccomp.c: a program under a seccomp filter that kills the process on
   clone (as sandboxes do) exits with 24 MiB of leaked blocks: enough for
   the leak scan to want helper threads. The woven program must still exit
   as the plain one does. "seccomp inherit": the filter is set before an
   exec, as a container's is, and the profile is written; "seccomp": the
   program sets it itself; "seccomp gettid": its filter kills gettid too,
   as file(1)'s sandbox does; "seccomp sshd": as OpenSSH's sandbox, it
   refuses openat with EACCES (so /proc cannot be read) and kills the
   thread (not the process) for readlink and getrlimit (the program's
   blocks then spread over the address space); "seccomp sshd-syscall": the
   same filter set by the seccomp system call, as libseccomp sets it. */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_clone3
#define SYS_clone3 435
#endif

static int by_syscall;

static void install(struct sock_filter *f, unsigned short n)
{
	struct sock_fprog prog = {n, f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    (by_syscall ? syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) : prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))) {
		perror("seccomp");
		exit(2);
	}
}

static void sshd_sandbox(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 6, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_readlink, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_readlinkat, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prlimit64, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getrlimit, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_THREAD),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 13), /* EACCES */
	};
	install(f, sizeof f / sizeof f[0]);
}

static void forbid_clone(int gettid_too)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, gettid_too ? SYS_gettid : SYS_clone, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	install(f, sizeof f / sizeof f[0]);
}

static void **keep;

int main(int argc, char **argv)
{
	int i;
	if (argc > 1 && strcmp(argv[1], "inherit") == 0) {
		forbid_clone(0);
		execl("/proc/self/exe", argv[0], "inherited", (char *)NULL);
		perror("exec");
		return 2;
	}
	keep = malloc(sizeof *keep); /* site:kept */
	by_syscall = argc > 1 && strcmp(argv[1], "sshd-syscall") == 0;
	if (argc > 1 && strncmp(argv[1], "sshd", 4) == 0)
		sshd_sandbox();
	else if (argc == 1 || strcmp(argv[1], "inherited") != 0)
		forbid_clone(argc > 1 && strcmp(argv[1], "gettid") == 0);
	if (argc > 1 && strncmp(argv[1], "sshd", 4) == 0)
		for (i = 0; i < 256; i++)
			free(malloc((size_t)(i + 1) << 20)); /* site:spread */
	for (i = 0; i < 6144; i++)
		malloc(4096); /* site:lost */
	*keep = malloc(16); /* site:kept */
	printf("leaked %d blocks\n", i);
	return keep == NULL;
}
