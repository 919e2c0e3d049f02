/* seccomp.c: a program that forbids itself new threads with a seccomp
   filter that kills the process on clone (as sandboxes do), then exits
   with 24 MiB of leaked blocks: enough for the leak scan to want helper
   threads. The woven program must still exit as the plain one does. */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#ifndef SYS_clone3
#define SYS_clone3 435
#endif

static void forbid_clone(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = {sizeof f / sizeof f[0], f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("seccomp");
		exit(2);
	}
}

static void **keep;

int main(void)
{
	int i;
	keep = malloc(sizeof *keep); /* site:kept */
	forbid_clone();
	for (i = 0; i < 6144; i++)
		malloc(4096); /* site:lost */
	*keep = malloc(16); /* site:kept */
	printf("leaked %d blocks\n", i);
	return keep == NULL;
}
