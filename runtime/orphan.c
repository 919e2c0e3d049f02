//go:build ignore

/* orphan.c: a process whose program threads have all ended ends.

   Without weave, a process ends with its last thread: the C library
   calls exit(0) when its last thread returns or calls pthread_exit
   (main's included), and the kernel ends it when its last thread makes
   the exit system call itself (a program under seccomp's strict mode
   may make no other). The runtime's own threads (the sampler, the
   control channel's, the checkpoint writer) would outlive them: the
   process would go on forever, a zombie main thread with weave's threads
   waiting, every signal blocked in them, so not even SIGTERM ends it.

   So each of them looks, once a second (every 20 ms once main is gone),
   whether any thread of the program is left (rt_orphaned), and ends if
   none is. The main thread's exit (pthread_exit) wakes the sampler and
   the control thread at once (rt_main_exit), so the process ends within
   20 ms of its last thread, as it does without weave; when main made the
   exit system call itself, within a second. The last of them
   to end ends the process as the program's last thread would have: the
   C library still counts the pthreads among them, and calls exit(0) in
   the last one when the program's last thread went through it (its
   atexit handlers, the final profile); a thread that made the exit
   system call itself was never uncounted, and the sampler, last, ends
   the process with the main thread's status, with no handler run, as
   without weave (when another thread ended last by the exit system
   call, its status is lost: the kernel keeps no zombie of it). Without
   a sampler (WEAVE_TIME=exact, seccomp) the process then ends with 0. */

#include "internal.h"

#include <sys/prctl.h>
#include <sys/resource.h>

/* For code the sampler, a raw clone, runs (here and sampler.c): no stack
   protector, whose canary is read through the TLS pointer it shares with
   the thread that made it. */
#if defined(__has_attribute)
#if __has_attribute(no_stack_protector)
#define RT_NO_SSP __attribute__((no_stack_protector))
#endif
#endif
#ifndef RT_NO_SSP
#if defined(__GNUC__) && !defined(__clang__)
#define RT_NO_SSP __attribute__((optimize("no-stack-protector")))
#else
#define RT_NO_SSP
#endif
#endif

enum { RT_MAIN, RT_OTHERS, RT_ORPHANED }; /* rt_orphaned */

static int g_orphaned;  /* atomic: the sampler saw no thread of the program left */
static int g_main_gone; /* atomic: the main thread went through pthread_exit */
static volatile int *g_main_tidp; /* main's clear_child_tid: the kernel zeroes it when main exits */
static int g_task_fd = -1;        /* /proc/self/task, opened once main is gone (atomic) */
static u64 g_task_id;             /* its fd_ident */
static void ctl_wake(void);

/* In the main thread at start-up, and in a fork child's: where the kernel
   says the main thread ended (PR_GET_TID_ADDRESS: the C library's
   set_tid_address, zeroed at its exit), so that looking costs no system
   call and no descriptor while main lives. */
static void rt_orphan_init(void)
{
	int *p = NULL, e = errno, fd = __atomic_exchange_n(&g_task_fd, -1, __ATOMIC_ACQ_REL);
	if (fd >= 0 && fd_ident(fd) == g_task_id)
		close(fd); /* a fork child's: the parent's tasks */
	g_main_tidp = prctl(PR_GET_TID_ADDRESS, &p, 0, 0, 0) == 0 && p && *p == (int)getpid() ? p : NULL;
	__atomic_store_n(&g_main_gone, 0, __ATOMIC_RELEASE);
	errno = e;
}

/* Opens the task directory for rt_orphaned once main is gone, at a high
   number (as fd_high), in raw system calls: the sampler may call no C
   library function. The program's threads may be opening descriptors
   then: its number is the lowest free one only for that instant. */
RT_NO_SSP static void rt_orphan_open(void)
{
	struct rlimit r;
	struct stat st;
	long fd = rt_sys(SYS_openat, AT_FDCWD, (long)"/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0), hi;
	int none = -1;
	if (fd < 0)
		return;
	if (rt_sys(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, (long)&r) == 0 && r.rlim_cur >= 256) { /* aarch64 has no getrlimit */
		hi = rt_sys(SYS_fcntl, fd, F_DUPFD_CLOEXEC, (long)(r.rlim_cur > 1024 ? 1024 : r.rlim_cur) - 64, 0);
		if (hi >= 0) {
			rt_sys(SYS_close, fd, 0, 0, 0);
			fd = hi;
		}
	}
	if (rt_sys(SYS_fstat, fd, (long)&st, 0, 0) == 0) {
		g_task_id = (u64)st.st_ino ^ (u64)st.st_dev << 48;
		if (__atomic_compare_exchange_n(&g_task_fd, &none, (int)fd, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return;
	}
	rt_sys(SYS_close, fd, 0, 0, 0);
}

/* Whether any thread of the program is left: RT_MAIN, the main thread
   lives (or it cannot be told); RT_OTHERS, main is gone but another
   thread of the program lives; RT_ORPHANED, every task left is the
   runtime's (or main's zombie). Never a descriptor of the program's
   numbers while it runs: main's end is a word the kernel zeroes; the
   task directory is opened once main is gone, moved high and kept. Raw system calls after that, errno untouched: the sampler runs
   it. */
RT_RARE RT_NO_SSP static int rt_orphaned(void)
{
	char buf[2048];
	long n, pid = g_pid;
	int fd = __atomic_load_n(&g_task_fd, __ATOMIC_ACQUIRE), alive = 0;
	if (!g_main_tidp || __atomic_load_n(g_main_tidp, __ATOMIC_ACQUIRE) != 0)
		return RT_MAIN;
	if (fd < 0) {
		rt_orphan_open();
		if ((fd = __atomic_load_n(&g_task_fd, __ATOMIC_ACQUIRE)) < 0)
			return RT_OTHERS;
	}
	{
		struct stat st;
		if (rt_sys(SYS_fstat, fd, (long)&st, 0, 0) != 0 || ((u64)st.st_ino ^ (u64)st.st_dev << 48) != g_task_id)
			return RT_MAIN; /* the program closed it (closefrom): no telling */
	}
	rt_sys(SYS_lseek, fd, 0, SEEK_SET, 0);
	while (!alive && (n = rt_sys(SYS_getdents64, fd, (long)buf, sizeof buf, 0)) > 0)
		for (long off = 0; !alive && off < n;) {
			struct ls_dirent *d = (void *)(buf + off);
			int tid = 0;
			const char *c;
			off += d->reclen;
			for (c = d->name; *c >= '0' && *c <= '9'; c++)
				tid = tid * 10 + (*c - '0');
			/* An ended thread other than main leaves the list at once. */
			alive = !*c && tid && tid != pid && !ls_task_skip(tid, 0);
		}
	return alive || n != 0 ? RT_OTHERS : RT_ORPHANED;
}

/* Main's exit status in wait's form (field 52 of its stat), 0 if it
   cannot be read. Raw system calls. */
RT_RARE RT_NO_SSP static int rt_main_status(void)
{
	char b[1024];
	long n, i, f = rt_sys(SYS_openat, AT_FDCWD, (long)"/proc/self/stat", O_RDONLY | O_CLOEXEC, 0);
	int field = 2, st = 0;
	if (f < 0)
		return 0;
	n = rt_sys(SYS_read, f, (long)b, sizeof b, 0);
	rt_sys(SYS_close, f, 0, 0, 0);
	for (i = n - 1; i > 0 && b[i] != ')'; i--)
		;
	for (; i > 0 && i < n && field <= 52; i++)
		if (b[i] == ' ')
			field++;
		else if (field == 52 && b[i] >= '0' && b[i] <= '9')
			st = st * 10 + (b[i] - '0');
	return st;
}

/* The sampler, the last of the runtime's threads (orphan.c): waits for
   the others to end (the C library's exit in one of them ends the
   process, when the program's last thread went through it), then ends
   the process as main ended: with its status, or its signal. */
RT_RARE RT_NO_SSP static void rt_orphan_end(void)
{
	int st;
	for (int i = 0; i < 150; i++) {
		int ctl = __atomic_load_n(&g_ctl_tid, __ATOMIC_ACQUIRE), ckpt = __atomic_load_n(&g_ckpt_tid, __ATOMIC_ACQUIRE);
		struct timespec ts = {0, 20000000};
		if ((!ctl || rt_sys(SYS_tgkill, g_pid, ctl, 0, 0) != 0) && (!ckpt || rt_sys(SYS_tgkill, g_pid, ckpt, 0, 0) != 0))
			break;
		rt_sys(SYS_nanosleep, (long)&ts, 0, 0, 0);
	}
	st = rt_main_status();
	if (st & 0x7f) {
		u64 one = 1ull << ((st & 0x7f) - 1);
		rt_sys(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&one, 0, 8);
		rt_sys(SYS_tgkill, g_pid, rt_sys(SYS_gettid, 0, 0, 0, 0), st & 0x7f, 0);
	}
	rt_sys(SYS_exit, (st >> 8) & 0xff, 0, 0, 0);
}

/* The main thread is exiting (smp_main_gone, in rt_thread_exit, in_rt
   set): the runtime's threads look from now on every 20 ms. */
RT_RARE static void rt_main_exit(void)
{
	__atomic_store_n(&g_main_gone, 1, __ATOMIC_RELEASE);
	ctl_wake();
}

/* How long a thread of the runtime waits before it looks again, given
   what rt_orphaned said: a second while main lives; once main is gone,
   20 ms, so that the process ends soon after its last thread. */
static long rt_orphan_wait_ms(int state)
{
	return state == RT_MAIN && !__atomic_load_n(&g_main_gone, __ATOMIC_ACQUIRE) ? 1000 : 20;
}
