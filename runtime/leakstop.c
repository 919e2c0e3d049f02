//go:build ignore

/* leakstop.c: the leak scan's stop of the program's other threads, and
   their resumption after it.

   The threads are stopped as LeakSanitizer's StopTheWorld stops them: by
   a tracer, a raw clone that shares the address space but not the thread
   group (ptrace refuses a tracer of the tracee's own group). It seizes
   each task of /proc/self/task (PTRACE_SEIZE, PTRACE_INTERRUPT: no
   SIGSTOP), waits for its stop, reads its registers (the scan's roots and
   its stack pointer, leakstack.c), lists the tasks again until no new one
   appears (a thread created meanwhile), and once the scan is over detaches
   each, giving back a signal whose delivery its stop caught. No signal is
   sent to the program's threads and no handler runs in them. The kernel
   restarts what a ptrace stop interrupted (poll, nanosleep, select, read,
   futex waits such as pthread_cond_wait), but for the calls Linux ends with
   EINTR after any stop (epoll_wait, sigtimedwait, a socket's wait with
   SO_RCVTIMEO: docs/leaks.md).

   The tracer has no thread-local storage of its own (its TLS register is
   the exiting thread's): it makes its system calls with the instruction
   (rt_sys: no errno), takes no lock, calls nothing of the C library, runs
   with every signal blocked and dies with the exiting thread
   (PR_SET_PDEATHSIG). Its exit signal is 0, so no SIGCHLD reaches the
   program and only a wait with __WALL sees it; the exiting thread reaps
   it. Under Yama's ptrace_scope 1 the process names it as its tracer
   (PR_SET_PTRACER, which replaces any the program named).

   Where ptrace is not to be had the threads are stopped as before, by a
   signal: ptrace refused (ptrace_scope 2 or 3, a process not dumpable or
   AT_SECURE, every task already traced by a debugger or strace: EPERM), a
   seccomp filter (a clone may kill the process), another architecture
   than x86-64 (x32 too). Each other task gets LS_SIGNAL (tgkill); the handler notes
   its stack pointer and context and waits on a futex until the scan is
   over. That signal cuts short a poll or a sleep in the program's
   threads. M leak_stop says which way was taken (ls_write_meta).

   Either way a task that does not stop within LS_WAIT_MS is scanned whole,
   as an unknown mapping, and may change memory under the scan: its blocks
   can only look more reachable. */

#include "internal.h"

#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#if defined(__x86_64__) && !defined(__ILP32__)
#include <sys/ptrace.h>
#include <sys/user.h>
#define LT_PTRACE 1
#else
#define LT_PTRACE 0
#endif

#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER 0x59616d61
#endif
#define LT_STACK (64u << 10) /* the tracer's stack, at the end of g_ls.tasks' map */
#define LT_PASSES 16         /* listings of the tasks, at most */
#define LS_PARK_MS 1000      /* the signal way at the final exit: how long stopped threads stay parked */

/* The tracer's phases (g_lt.phase, a futex). */
enum { LT_START, LT_GO, LT_STOPPED, LT_REFUSED, LT_RELEASE, LT_ABORT };
/* A task's state in the tracer (ls_task.traced). */
enum { LT_NONE, LT_SEIZED, LT_HELD, LT_GONE, LT_DENIED };

static struct {
	int phase; /* futex: LT_* */
	int tid;   /* the tracer's: set by clone, cleared by the kernel at its exit */
	int fd;    /* /proc/self/task, open in both */
	int me;    /* the exiting thread */
	u64 deadline;
} g_lt;

/* ---------------------------------------------------------- listing */

/* Whether tid is to be left running: the exiting thread, the runtime's own
   (checkpoint writer, control channel, sampler). */
RT_RARE static int ls_task_skip(int tid, int me)
{
	return tid == me || tid == __atomic_load_n(&g_ckpt_tid, __ATOMIC_ACQUIRE) ||
	       tid == __atomic_load_n(&g_ctl_tid, __ATOMIC_ACQUIRE) || tid == __atomic_load_n(&g_smp_tid, __ATOMIC_ACQUIRE);
}

/* A directory entry as getdents64 gives it. */
struct ls_dirent {
	u64 ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

#define LT_SYS(n, a, b, c, d) rt_sys(n, (long)(a), (long)(b), (long)(c), (long)(d))

/* Adds the tasks of /proc/self/task (fd) not yet in g_ls.tasks, each
   handed to add (NULL: none); returns how many were added. Plain system
   calls into a stack buffer: the tracer's too. */
RT_RARE static u32 ls_list_tasks(int fd, int me, void (*add)(struct ls_task *))
{
	char buf[4096];
	long n;
	u32 added = 0, known = g_ls.ntasks;
	LT_SYS(SYS_lseek, fd, 0, SEEK_SET, 0);
	while ((n = LT_SYS(SYS_getdents64, fd, buf, sizeof buf, 0)) > 0) {
		long off = 0;
		while (off < n) {
			struct ls_dirent *d = (void *)(buf + off);
			struct ls_task *t;
			int tid = 0;
			const char *c;
			u32 i;
			off += d->reclen;
			for (c = d->name; *c >= '0' && *c <= '9'; c++)
				tid = tid * 10 + (*c - '0');
			if (*c || !tid || ls_task_skip(tid, me) || g_ls.ntasks == LS_MAXTASKS)
				continue;
			for (i = 0; i < known && g_ls.tasks[i].tid != tid; i++)
				;
			if (i < known)
				continue;
			t = &g_ls.tasks[g_ls.ntasks++];
			t->tid = tid;
			t->sp = 0;
			t->answered = 0;
			t->traced = LT_NONE;
			t->sig = 0;
			t->uc = NULL;
			if (add)
				add(t);
			added++;
		}
	}
	return added;
}

/* Whether task tid is a zombie (a main thread that called pthread_exit):
   ptrace refuses it as it refuses a traced one, and it takes no signal.
   fd: /proc/self/task. */
RT_RARE static int ls_task_zombie(int fd, int tid)
{
	static const char tail[] = "/stat";
	char path[32], b[512], *p = path + sizeof path;
	const char *s = NULL;
	long n, i, f;
	*--p = 0;
	for (i = (long)sizeof tail - 1; i-- > 0;)
		*--p = tail[i];
	do
		*--p = (char)('0' + tid % 10);
	while ((tid /= 10) != 0);
	f = LT_SYS(SYS_openat, fd, p, O_RDONLY | O_CLOEXEC, 0);
	if (f < 0)
		return 1; /* gone */
	n = LT_SYS(SYS_read, f, b, sizeof b, 0);
	LT_SYS(SYS_close, f, 0, 0, 0);
	for (i = 0; i < n; i++)
		if (b[i] == ')')
			s = b + i;
	return !s || s + 2 >= b + n || s[2] == 'Z' || s[2] == 'X';
}

/* ------------------------------------------------------------ tracer */

#if LT_PTRACE
RT_RARE static u64 lt_now(void)
{
	struct timespec ts;
	rt_sys(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0, 0);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

/* Reports the stop, unless the exiting thread gave up waiting (LT_ABORT). */
RT_RARE static void lt_report(int phase)
{
	int go = LT_GO;
	if (__atomic_compare_exchange_n(&g_lt.phase, &go, phase, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		rt_sys(SYS_futex, (long)&g_lt.phase, FUTEX_WAKE, 0x7fffffff, 0);
}

/* Seizes a newly listed task and asks it to stop. */
RT_RARE static void lt_seize(struct ls_task *t)
{
	long r = rt_sys(SYS_ptrace, PTRACE_SEIZE, t->tid, 0, 0);
	if (r == 0) {
		t->traced = LT_SEIZED;
		rt_sys(SYS_ptrace, PTRACE_INTERRUPT, t->tid, 0, 0);
	} else {
		t->traced = r == -EPERM && !ls_task_zombie(g_lt.fd, t->tid) ? LT_DENIED : LT_GONE;
	}
}

/* Notes a task's stop: its registers, and the signal whose delivery the
   stop caught (given back at the detach). */
RT_RARE static void lt_stopped(struct ls_task *t, int status)
{
	struct user_regs_struct r;
	t->traced = LT_HELD;
	t->sig = (status >> 16) == 0 ? WSTOPSIG(status) : 0;
	if (rt_sys(SYS_ptrace, PTRACE_GETREGS, t->tid, 0, (long)&r) != 0)
		return; /* held, scanned whole */
	/* The sixteen general registers, as ls_task_regs reads them. */
	t->regs[0] = r.r8, t->regs[1] = r.r9, t->regs[2] = r.r10, t->regs[3] = r.r11;
	t->regs[4] = r.r12, t->regs[5] = r.r13, t->regs[6] = r.r14, t->regs[7] = r.r15;
	t->regs[8] = r.rdi, t->regs[9] = r.rsi, t->regs[10] = r.rbp, t->regs[11] = r.rbx;
	t->regs[12] = r.rdx, t->regs[13] = r.rax, t->regs[14] = r.rcx, t->regs[15] = r.rsp;
	/* orig_rax: the number of the system call the stop interrupted, -1
	   when it stopped the thread in its own code. */
	t->sp = ls_stop_sp(r.rsp, (long)r.orig_rax >= 0);
	__atomic_store_n(&t->answered, 1, __ATOMIC_RELEASE);
}

/* Takes the stops and exits of seized tasks until none is left running,
   or until the deadline (wait: 0 takes only those already there). */
RT_RARE static void lt_collect(int wait)
{
	for (;;) {
		struct timespec ts = {0, 20000};
		int status = 0, pending = 0;
		long pid = rt_sys(SYS_wait4, -1, (long)&status, __WALL | WNOHANG, 0);
		u32 i;
		if (pid > 0) {
			for (i = 0; i < g_ls.ntasks && g_ls.tasks[i].tid != pid; i++)
				;
			if (i < g_ls.ntasks && g_ls.tasks[i].traced == LT_SEIZED) {
				if (WIFSTOPPED(status))
					lt_stopped(&g_ls.tasks[i], status);
				else
					g_ls.tasks[i].traced = LT_GONE;
			}
			continue;
		}
		if (pid < 0 || !wait)
			return; /* ECHILD: nothing seized runs */
		for (i = 0; i < g_ls.ntasks; i++)
			pending += g_ls.tasks[i].traced == LT_SEIZED;
		if (!pending || lt_now() > g_lt.deadline)
			return;
		rt_sys(SYS_nanosleep, (long)&ts, 0, 0, 0);
	}
}

/* The tracer: stops the tasks, holds them while the scan runs, detaches
   them. Nothing of the C library, no thread-local storage (see the top). */
RT_RARE static int lt_main(void *arg)
{
	u32 pass, i, held = 0, denied = 0;
	(void)arg;
	rt_sys(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0);
	if (rt_sys(SYS_getppid, 0, 0, 0, 0) != g_pid)
		return 1; /* the exiting thread is gone already */
	while (__atomic_load_n(&g_lt.phase, __ATOMIC_ACQUIRE) == LT_START)
		rt_sys(SYS_futex, (long)&g_lt.phase, FUTEX_WAIT, LT_START, 0);
	if (__atomic_load_n(&g_lt.phase, __ATOMIC_ACQUIRE) != LT_GO)
		return 1;
	g_lt.deadline = lt_now() + LS_WAIT_MS * 1000000ull;
	for (pass = 0; pass < LT_PASSES && ls_list_tasks(g_lt.fd, g_lt.me, lt_seize); pass++)
		lt_collect(1);
	for (i = 0; i < g_ls.ntasks; i++) {
		held += g_ls.tasks[i].traced == LT_HELD || g_ls.tasks[i].traced == LT_SEIZED;
		denied += g_ls.tasks[i].traced == LT_DENIED;
	}
	lt_report(denied && !held ? LT_REFUSED : LT_STOPPED);
	while (__atomic_load_n(&g_lt.phase, __ATOMIC_ACQUIRE) == LT_STOPPED)
		rt_sys(SYS_futex, (long)&g_lt.phase, FUTEX_WAIT, LT_STOPPED, 0);
	lt_collect(0); /* late stops: their signals are given back too */
	for (i = 0; i < g_ls.ntasks; i++)
		if (g_ls.tasks[i].traced == LT_HELD)
			rt_sys(SYS_ptrace, PTRACE_DETACH, g_ls.tasks[i].tid, 0, g_ls.tasks[i].sig);
	/* Those seized that never stopped are detached by this exit. */
	return 0;
}

/* clone(2) with the instruction, as LeakSanitizer's internal_clone: the C
   library's wrapper (before glibc 2.25) wrote the child's pid into the
   thread's TLS, which the tracer shares with the exiting thread. */
RT_RARE static long lt_clone(int (*fn)(void *), char *top, long flags, int *tid)
{
	long r;
	register long r10 __asm__("r10") = (long)tid;
	register long r8 __asm__("r8") = 0;
	uintptr_t *sp = (uintptr_t *)(((uintptr_t)top & ~(uintptr_t)15) - 16);
	sp[0] = (uintptr_t)fn;
	sp[1] = 0;
	/* Both assembler dialects ({AT&T|Intel}): a program built with
	   -masm=intel compiles the runtime with it too. */
	__asm__ volatile("syscall\n\t"
			 "{testq %%rax, %%rax|test rax, rax}\n\t"
			 "jnz 1f\n\t"
			 "{xorq %%rbp, %%rbp|xor rbp, rbp}\n\t"
			 "{popq %%rax|pop rax}\n\t"
			 "{popq %%rdi|pop rdi}\n\t"
			 "{call *%%rax|call rax}\n\t"
			 "{movq %%rax, %%rdi|mov rdi, rax}\n\t"
			 "{movq %[exit], %%rax|mov rax, %[exit]}\n\t"
			 "syscall\n\t"
			 "1:\n\t"
			 : "=a"(r)
			 : "0"((long)SYS_clone), [exit] "i"((long)SYS_exit), "S"(sp), "D"(flags), "d"(tid), "r"(r8),
			   "r"(r10)
			 : "memory", "rcx", "r11");
	return r;
}

/* Yama's ptrace_scope, 0 without Yama. */
RT_RARE static int lt_yama(void)
{
	char c = '0';
	int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, &c, 1) != 1)
			c = '0';
		close(fd);
	}
	return c - '0';
}

/* Whether the tracer may be tried: ptrace not refused up front, no seccomp
   filter (a clone may kill the process). */
RT_RARE static int lt_can(void)
{
	return !getauxval(AT_SECURE) && prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 1 &&
	       !rt_under_seccomp();
}

/* Waits while the tracer's phase is from, up to ms; returns the phase. */
RT_RARE static int lt_await(int from, u64 ms)
{
	u64 t0 = now_ns(), left;
	int p;
	while ((p = __atomic_load_n(&g_lt.phase, __ATOMIC_ACQUIRE)) == from) {
		struct timespec ts;
		u64 t = now_ns() - t0;
		if (t >= ms * 1000000ull)
			break;
		left = ms * 1000000ull - t;
		ts.tv_sec = (time_t)(left / 1000000000ull);
		ts.tv_nsec = (long)(left % 1000000000ull);
		syscall(SYS_futex, &g_lt.phase, FUTEX_WAIT, from, &ts, NULL, 0);
	}
	return p;
}

/* Ends the tracer (phase: LT_RELEASE, or LT_ABORT when it is not to stop
   anything) and reaps it. */
RT_RARE static void lt_end(int phase)
{
	int t, pid = __atomic_load_n(&g_lt.tid, __ATOMIC_ACQUIRE);
	u64 t0 = now_ns();
	__atomic_store_n(&g_lt.phase, phase, __ATOMIC_RELEASE);
	syscall(SYS_futex, &g_lt.phase, FUTEX_WAKE, 0x7fffffff, NULL, NULL, 0);
	while ((t = __atomic_load_n(&g_lt.tid, __ATOMIC_ACQUIRE)) != 0) {
		struct timespec ts = {0, 10000000};
		if (now_ns() - t0 > 2000ull * 1000000ull) {
			kill(pid, SIGKILL); /* stuck: its exit detaches every task */
			t0 = now_ns();
		}
		syscall(SYS_futex, &g_lt.tid, FUTEX_WAIT, t, &ts, NULL, 0);
	}
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
}

/* Stops the other tasks with the tracer, whose stack is stack; returns 0
   when ptrace is not to be had (nothing stopped then). */
RT_RARE static int lt_stop(int fd, int me, char *stack)
{
	u64 all = ~(u64)0, old;
	long pid;
	int p;
	if (!lt_can())
		return 0;
	g_lt.phase = LT_START;
	g_lt.fd = fd;
	g_lt.me = me;
	g_lt.tid = 0;
	g_ls.ntasks = 0;
	/* The tracer starts with every signal blocked: it inherits the mask. */
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof all);
	pid = lt_clone(lt_main, stack + LT_STACK,
		       CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_UNTRACED | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID,
		       &g_lt.tid);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof old);
	if (pid <= 0)
		return 0;
	if (lt_yama() == 1)
		prctl(PR_SET_PTRACER, pid, 0, 0, 0);
	__atomic_store_n(&g_lt.phase, LT_GO, __ATOMIC_RELEASE);
	syscall(SYS_futex, &g_lt.phase, FUTEX_WAKE, 0x7fffffff, NULL, NULL, 0);
	p = lt_await(LT_GO, 4 * LS_WAIT_MS + 1000);
	if (p == LT_STOPPED)
		return 1;
	/* Refused, or stuck: the tracer ends, detaching what it holds. */
	lt_end(LT_ABORT);
	g_ls.ntasks = 0;
	return 0;
}
#endif /* LT_PTRACE */

/* ------------------------------------------------------- the signal way */

RT_RARE static void ls_on_signal(int sig, siginfo_t *si, void *uc)
{
	int e = errno, tid = (int)syscall(SYS_gettid);
	u32 i;
	if (!si || si->si_code != SI_TKILL || si->si_pid != g_pid || !__atomic_load_n(&g_ls_hold, __ATOMIC_ACQUIRE)) {
		/* Not ours: the handler it replaced. */
		if ((g_ls_prev.sa_flags & SA_SIGINFO) && g_ls_prev.sa_sigaction)
			g_ls_prev.sa_sigaction(sig, si, uc);
		else if (!(g_ls_prev.sa_flags & SA_SIGINFO) && g_ls_prev.sa_handler != SIG_DFL &&
			 g_ls_prev.sa_handler != SIG_IGN)
			g_ls_prev.sa_handler(sig);
		errno = e;
		return;
	}
	for (i = 0; i < g_ls.ntasks; i++) {
		if (g_ls.tasks[i].tid != tid)
			continue;
#if defined(__x86_64__)
		/* Its stack pointer and registers when stopped (leakstack.c). */
		const greg_t *g = uc ? ((ucontext_t *)uc)->uc_mcontext.gregs : NULL;
		g_ls.tasks[i].sp = g ? ls_stop_sp((uintptr_t)g[REG_RSP], ls_at_syscall((uintptr_t)g[REG_RIP]))
				     : (uintptr_t)__builtin_frame_address(0);
		g_ls.tasks[i].uc = uc;
#else
		/* The kernel put the signal frame, with every register, just
		   above this frame. */
		g_ls.tasks[i].sp = (uintptr_t)__builtin_frame_address(0);
#endif
		__atomic_store_n(&g_ls.tasks[i].answered, 1, __ATOMIC_RELEASE);
		break;
	}
	while (__atomic_load_n(&g_ls_hold, __ATOMIC_ACQUIRE)) {
		struct timespec now, nap = {0, 100000000};
		u64 until = __atomic_load_n(&g_ls_park_until, __ATOMIC_ACQUIRE);
		rt_clock_gettime(CLOCK_MONOTONIC, &now);
		if (until && (u64)now.tv_sec * 1000000000ull + (u64)now.tv_nsec >= until)
			break;
		syscall(SYS_futex, &g_ls_hold, FUTEX_WAIT_PRIVATE, 1, until ? &nap : NULL, NULL, 0);
	}
	errno = e;
}

/* Stops the listed tasks with LS_SIGNAL; returns how many answered. fd:
   /proc/self/task. */
RT_RARE static u32 ls_signal_stop(int fd)
{
	struct sigaction sa;
	u32 i, answered = 0, gone = 0;
	int looked = 0;
	u64 t0;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = ls_on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (sigaction(LS_SIGNAL, &sa, &g_ls_prev) != 0)
		return 0;
	g_ls.stop = LS_STOP_SIGNAL;
	__atomic_store_n(&g_ls_park_until, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&g_ls_hold, 1, __ATOMIC_RELEASE);
	for (i = 0; i < g_ls.ntasks; i++)
		syscall(SYS_tgkill, g_pid, g_ls.tasks[i].tid, LS_SIGNAL);
	t0 = now_ns();
	for (;;) {
		struct timespec ts = {0, 200000};
		answered = 0;
		for (i = 0; i < g_ls.ntasks; i++)
			answered += (u32)__atomic_load_n(&g_ls.tasks[i].answered, __ATOMIC_ACQUIRE);
		if (answered + gone == g_ls.ntasks || now_ns() - t0 > LS_WAIT_MS * 1000000ull)
			break;
		/* Still waiting after 2 ms: a zombie (main after pthread_exit)
		   never answers. */
		for (i = 0; !looked && now_ns() - t0 > 2000000 && i < g_ls.ntasks; i++)
			gone += !__atomic_load_n(&g_ls.tasks[i].answered, __ATOMIC_ACQUIRE) &&
				ls_task_zombie(fd, g_ls.tasks[i].tid);
		looked |= now_ns() - t0 > 2000000;
		nanosleep(&ts, NULL);
	}
	return answered;
}

/* ------------------------------------------------------------ the stop */

/* Stops every other task of the process (see the top); returns how many
   stopped. The tracer's stack lies at the end of the tasks' map. */
RT_RARE static u32 ls_stop(void)
{
	int fd, me = (int)syscall(SYS_gettid), e = errno;
	u32 i, n = 0;
	u64 t0 = now_ns();
	g_ls.stop = LS_STOP_NONE;
	g_ls.ntasks = 0;
	fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (ls_list_tasks(fd, me, NULL)) {
#if LT_PTRACE
		if (lt_stop(fd, me, (char *)(g_ls.tasks + LS_MAXTASKS))) {
			g_ls.stop = LS_STOP_PTRACE;
			for (i = 0; i < g_ls.ntasks; i++)
				n += (u32)__atomic_load_n(&g_ls.tasks[i].answered, __ATOMIC_ACQUIRE);
		}
		/* Not to be had: the signal way, the tasks listed again. */
		g_ls.ntasks = g_ls.stop == LS_STOP_PTRACE ? g_ls.ntasks : 0;
		if (g_ls.stop != LS_STOP_PTRACE && ls_list_tasks(fd, me, NULL))
#endif
			n = ls_signal_stop(fd);
	}
	close(fd);
	g_ls.stop_ns = now_ns() - t0;
	errno = e;
	return n;
}

RT_RARE static void ls_resume(void)
{
	int e = errno;
	u64 t0 = now_ns();
#if LT_PTRACE
	if (g_ls.stop == LS_STOP_PTRACE)
		lt_end(LT_RELEASE);
#endif
	if (g_ls.stop == LS_STOP_SIGNAL) {
		/* The executable's scan runs at an exit that ends the process:
		   its threads stay parked until then, for at most
		   LS_PARK_MS. Released at once, a call the signal cut short
		   (pause) would let one go on, even end the process first
		   (main returning 0) before the profile is written. Parked for
		   good, one stopped while it held a lock the rest of the exit
		   takes (glibc >= 2.39 locks every FILE to flush it at exit)
		   would hang the process: after LS_PARK_MS they go on. A
		   library's copy (dlclose) releases them at once. */
		if (g_in_exe) {
			struct timespec now;
			rt_clock_gettime(CLOCK_MONOTONIC, &now);
			__atomic_store_n(&g_ls_park_until,
					 (u64)now.tv_sec * 1000000000ull + (u64)now.tv_nsec + LS_PARK_MS * 1000000ull,
					 __ATOMIC_RELEASE);
			syscall(SYS_futex, &g_ls_hold, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
		} else {
			__atomic_store_n(&g_ls_hold, 0, __ATOMIC_RELEASE);
			syscall(SYS_futex, &g_ls_hold, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
		}
		sigaction(LS_SIGNAL, &g_ls_prev, NULL);
	}
	g_ls.stop_ns += now_ns() - t0;
	errno = e;
}
