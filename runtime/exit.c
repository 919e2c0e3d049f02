//go:build ignore

/* exit.c: the ways out of a process, each of which writes the profile
   and prints the summary (rt_finish): exit and return from main, _exit,
   quick_exit, exec*, crash signals; and fork, whose child starts its own
   counts.

   - fork: the child's counters start at zero (calls, heap counters, bins),
     its profile lists only the forking thread (as T 0), and the blocks it
     inherited are retagged "inherited" (node 0): freeing one counts in the
     M inherited_freed record, not as a free of the child's. Parent and
     child profiles never count the same event twice. The child writes its
     own profile (its pid in the default name, or %p in WEAVE_OUT).
   - exec*: execve, execv, execvp, execvpe, execl, execlp, execle, fexecve
     and execveat are interposed (weak): the profile is written (M end
     exec, complete) before the real call; if it fails, the process goes
     on and its final profile replaces that one. A profile written before
     exec is never replaced by a later image of the same pid (same
     WEAVE_OUT): that one takes the next free name (name.1.prof).
   - exit and return from main: the destructor below runs after the
     program's atexit handlers and destructors; in the executable it then
     registers one more atexit handler, which glibc runs after the
     destructors of every shared object, and which writes the profile. So
     frees in atexit handlers and library destructors are counted.
   - _exit and _Exit (interposed, weak) and quick_exit (an at_quick_exit
     handler registered at start-up, run after the program's) write it too.
     Calls from a vfork child, or any process whose pid is not the one the
     runtime knows (a clone without fork handlers), write nothing.
   - SIGSEGV, SIGBUS, SIGABRT (abort), SIGFPE and SIGILL: unless
     WEAVE_SIGNALS=0, a handler is installed at start-up for each whose
     disposition is SIG_DFL. It writes the profile (M complete 0, M end
     signal N), restores SIG_DFL and lets the signal kill the process as it
     would have (the faulting instruction runs again; a sent signal is
     raised again): same signal, same status, same core. A handler the
     program had installed before is kept and called instead (nothing
     written: it may recover); one it installs later replaces the
     runtime's (the kernel holds one per signal) and works as usual.
   The profile is written once: the first of these wins, except that one
   written before exec, from a crash handler or as a checkpoint
   (checkpoint.c) is provisional: replaced if the process goes on.
   - Several threads leaving at once: the first thread to call exit (or
     to reach the runtime's destructor, returning from main) owns the way
     out; another thread that calls exit then waits for ever, as musl,
     current glibc and Rust's std make a second exit do, since the first
     one ends the process. Without that, its exit ran the handlers and ended the
     process while the first thread was still writing the profile: none
     was left. A thread that ends the process another way while the
     profile is being written (_exit, quick_exit, a crash) waits for the
     writer to finish first. exit is interposed only in an executable's
     copy (weak: a static link's C library wins, then this does not hold
     for exit). */

#include "internal.h"

#include <linux/futex.h>
#include <sys/prctl.h>

/* g_finished: nothing written, the final profile written or being
   written, a provisional one (before exec, from a crash handler) written
   or being written. An atomic int: the first way out to change it wins. */
enum { FIN_NONE, FIN_FINAL, FIN_PROV, FIN_PROV_BUSY };
static int g_finished;
/* The thread writing the final profile, and whether it is done (atomic). */
static int g_final_tid, g_final_done;
/* The thread that owns the way out by exit (atomic; 0: none yet). */
static int g_exit_tid;

/* Whether this is not the process the runtime knows: a vfork child, which
   shares its parent's memory, or a clone the fork handlers missed. */
RT_RARE static int other_process(void)
{
	return __atomic_load_n(&g_pid, __ATOMIC_RELAXED) && (int)getpid() != g_pid;
}

/* Waits for another thread's final profile to be written; a thread inside
   the runtime may hold what the writer needs, and does not wait. */
RT_RARE static void wait_final_writer(int was)
{
	int me = (int)syscall(SYS_gettid);
	if (other_process())
		return; /* a vfork child: the writer is its parent's */
	while (!was && __atomic_load_n(&g_final_tid, __ATOMIC_ACQUIRE) != me &&
	       !__atomic_load_n(&g_final_done, __ATOMIC_ACQUIRE)) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
}

/* Seccomp filters: how many the process had at start-up (a container's,
   systemd's: inherited), and whether the exiting thread is under one the
   program set since (file(1)'s sandbox, OpenSSH's), looked at once, on
   the way out. Such a filter may refuse any system call of the exit's,
   and kill the process (SIGSYS) where it would have exited: the exit
   paths then make none of their own, and no profile is written. A filter
   set through prctl is known without a look (g_filter_set); /proc's
   answer otherwise. OpenSSH's refuses openat (EACCES), so /proc could not
   tell, and kills the thread for readlink: its pre-authentication child's
   main thread died in the profile writer, and the sampler kept the
   process, and the session, waiting for ever. A refused open now counts
   as a filter more; one that fails otherwise (no /proc in a chroot) as
   none. */
static u64 g_filters_at_start;

static u64 rt_filters(void)
{
	int e = errno;
	u64 n;
	errno = 0;
	n = rt_status_number("\nSeccomp_filters:", 10, ~0ull); /* Linux 5.9 */
	if (n == ~0ull && (errno == EACCES || errno == EPERM))
		/* More than any count at start-up; not under a landlock
		   ruleset the program set (xz 5.6's sandbox), which refuses
		   the open itself: the exit then goes on, says what it could
		   not do, and writes what it can. */
		n = __atomic_load_n(&g_landlock_set, __ATOMIC_ACQUIRE) ? g_filters_at_start : ~0ull - 1;
	else if (n == ~0ull)
		n = rt_status_number("\nSeccomp:", 10, 0);
	errno = e;
	return n;
}

static void rt_sandbox_note(void)
{
	g_filters_at_start = rt_filters();
}

RT_RARE static int rt_sandboxed(void)
{
	static int sandboxed = -1;
	if (__atomic_load_n(&g_filter_set, __ATOMIC_ACQUIRE))
		return 1;
	if (__atomic_load_n(&sandboxed, __ATOMIC_RELAXED) < 0)
		__atomic_store_n(&sandboxed, rt_filters() > g_filters_at_start, __ATOMIC_RELAXED);
	return __atomic_load_n(&sandboxed, __ATOMIC_RELAXED);
}

/* prctl (interposed, weak): notes a seccomp filter before the C library
   sets it (rt_sandboxed). Its four arguments after the option are read
   as the C library's prctl reads them. */
__attribute__((weak)) int prctl(int option, ...)
{
	va_list ap;
	unsigned long a[4];
	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_SET_SECCOMP)
		__atomic_store_n(&g_filter_set, 1, __ATOMIC_RELEASE);
	return (int)syscall(SYS_prctl, option, a[0], a[1], a[2], a[3]);
}

RT_RARE static int claim_exit(void)
{
	int me, prev = 0;
	if (rt_sandboxed())
		return 0;
	me = (int)syscall(SYS_gettid);
	if (other_process())
		return 0;
	return !__atomic_compare_exchange_n(&g_exit_tid, &prev, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) && prev != me;
}

/* Takes g_lock for a writer: LOCK_WAIT blocks; LOCK_TRY (a signal
   handler, _exit) tries for about a second; LOCK_ONCE (this thread was
   inside the runtime, and may hold it) tries once. Without the lock the
   writer goes on: it reads the counts as they are anyway. Returns whether
   it holds the lock. */
RT_RARE static int lock_for_exit(int mode)
{
	int i;
	if (mode == LOCK_WAIT) {
		pthread_mutex_lock(&g_lock);
		return 1;
	}
	for (i = 0; i < (mode == LOCK_TRY ? 200 : 1); i++) {
		struct timespec ts = {0, 5000000};
		if (pthread_mutex_trylock(&g_lock) == 0)
			return 1;
		if (mode == LOCK_TRY)
			nanosleep(&ts, NULL);
	}
	return 0;
}

/* Writes the profile and prints the summary, once (see above). final: the process ends here (else provisional: exec,
   crash); complete: M complete; how and sig: M end. */
static int rt_write(int final, int complete, const char *how, int sig, int mode, int snapshot);

RT_RARE static void rt_finish(int final, int complete, const char *how, int sig, int mode)
{
	rt_write(final, complete, how, sig, mode, 0);
}

/* rt_write's arguments and result, for the stack it runs on. sp: the
   caller's stack pointer, where the leak scan reads this thread's stack
   from. */
struct rt_write_args {
	int final, complete, sig, mode, snapshot, ret;
	const char *how;
	uintptr_t sp;
};

static void rt_write_here(void *arg);

/* rt_finish's work, on a stack of the runtime's (ownstack.c): the
   thread that gets here may have little (a small thread stack, a handler
   on sigaltstack). */
RT_RARE static int rt_write(int final, int complete, const char *how, int sig, int mode, int snapshot)
{
	struct rt_write_args a = {final, complete, sig, mode, snapshot, 0, how, 0};
	sigset_t old;
	struct rlimit nofile;
	int xfsz, c, room;
	if (!rt_is_active() || rt_sandboxed() || other_process())
		return 0;
	xfsz = xfsz_hold(&old); /* RLIMIT_FSIZE: the write fails, the process lives */
	c = rt_nocancel();
	room = fd_room_hold(&nofile); /* RLIMIT_NOFILE: every descriptor taken */
	if (!rt_on_stack(rt_write_here, &a, &a.sp)) {
		a.sp = (uintptr_t)__builtin_frame_address(0);
		rt_write_here(&a);
	}
	fd_room_release(&nofile, room);
	rt_cancel_restore(c);
	xfsz_release(&old, xfsz);
	return a.ret;
}

/* rt_write's work (a: its arguments, a->ret its result). snapshot: the
   process goes on (weave snapshot): time keeps being measured and no
   summary is printed. The steps with large frames (build_probe,
   save_profile, summary, time_finish, tp_finish) are not inlined here:
   in this frame (21 KiB) they sat above the leak scan's frames, whose
   pages the stack then kept resident (8 KiB more at exit than with this
   frame's 5). */
RT_RARE static void rt_write_here(void *arg)
{
	struct rt_write_args *a = arg;
	struct rt_local *l = &rt_local;
	struct totals t;
	struct tmpmem tm = {.k = 0};
	struct sbuf path = {.n = 0};
	int final = a->final, complete = a->complete, sig = a->sig, mode = a->mode, snapshot = a->snapshot;
	const char *how = a->how;
	int was = l->in_rt, perr = 0, save, st, locked, probe, e = errno;

	st = __atomic_load_n(&g_finished, __ATOMIC_ACQUIRE);
	do {
		/* The final profile waits (up to 2 s) for a checkpoint being
		   written, then replaces it. */
		for (int i = 0; final && st == FIN_PROV_BUSY && i < 400; i++) {
			struct timespec ts = {0, 5000000};
			nanosleep(&ts, NULL);
			st = __atomic_load_n(&g_finished, __ATOMIC_ACQUIRE);
		}
		if (st == FIN_FINAL && !snapshot)
			wait_final_writer(was);
		if (st == FIN_FINAL || st == FIN_PROV_BUSY)
			return;
	} while (!__atomic_compare_exchange_n(&g_finished, &st, final ? FIN_FINAL : FIN_PROV_BUSY, 0,
					      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	if (final) {
		__atomic_store_n(&g_final_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
		ctl_exit(); /* no request is taken from here on */
		if (!g_in_exe)
			ctl_stop(); /* this copy may be unmapped (dlclose) */
	}
	rt_enter(l);
	pthread_once(&g_once, rt_global_init);
	rt_config();
	if (!was && !snapshot)
		time_finish(); /* takes g_lock */
	locked = lock_for_exit(was ? LOCK_ONCE : mode);
	g_end = how;
	g_end_sig = sig;
	g_complete = complete;
	probe = (!g_cfg_out_set || out_dir()) && build_probe();
	own_note();
	if (final && complete && !probe)
		ls_leak_scan(a->sp);
	totals_start(&t, &tm);
	save = !probe && (!g_cfg_out_set || g_cfg_out[0]);
	if (save && save_profile(&path, &t, &tm) != 0)
		perr = errno ? errno : EIO;
	if (!save || perr)
		totals_compute(&t);
	if (final) /* the trace goes beside the profile, or nowhere */
		tp_finish(save && !perr ? path.s : NULL);
	if (!probe && !snapshot)
		summary(&t, save ? path.s : NULL, perr);
	if (!final && save && !perr && path.n < sizeof g_prev_path) {
		memcpy(g_prev_path, path.s, path.n);
		g_prev_path[path.n] = 0;
	}
	if (locked)
		pthread_mutex_unlock(&g_lock);
	tmp_free(&tm);
	if (!final)
		__atomic_store_n(&g_finished, FIN_PROV, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&g_final_done, 1, __ATOMIC_RELEASE);
	fence();
	l->in_rt = was;
	errno = e;
	a->ret = save && !perr;
}

/* Crash signals. */
static const int rt_crash_sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};

RT_RARE static void rt_crash(int sig, siginfo_t *si, void *uc)
{
	struct sigaction dfl;
	int e = errno;
	(void)uc;
	rt_finish(0, 0, "signal", sig, LOCK_TRY);
	ctl_exit(); /* the process dies: its control socket goes */
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	/* A fault happens again when the handler returns; a signal that was
	   sent (abort's included) is sent again, and stays pending until
	   then. Either way the default action ends the process. */
	if (!si || si->si_code <= 0)
		raise(sig);
	errno = e;
}

/* Installs rt_crash for each crash signal whose disposition is SIG_DFL. */
static void rt_crash_install(void)
{
	static int done;
	struct sigaction sa, old;
	unsigned i, n = sizeof rt_crash_sigs / sizeof rt_crash_sigs[0];
	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = rt_crash;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < n; i++)
		sigaddset(&sa.sa_mask, rt_crash_sigs[i]);
	for (i = 0; i < n; i++) {
		if (sigaction(rt_crash_sigs[i], NULL, &old) != 0)
			continue;
		if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
			sigaction(rt_crash_sigs[i], &sa, NULL);
	}
}

/* _exit and _Exit (the same function in glibc). */
RT_RARE static __attribute__((noreturn)) void rt_exit_now(int status)
{
	rt_finish(1, 1, "_exit", 0, LOCK_TRY);
	if (REAL_FN(exit_))
		g_real.exit_(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

RT_RARE __attribute__((weak, noreturn)) void _exit(int status)
{
	rt_exit_now(status);
}

RT_RARE __attribute__((weak, noreturn)) void _Exit(int status)
{
	rt_exit_now(status);
}

/* A thread that lost the way out to another: that one ends the process. */
RT_RARE static __attribute__((noreturn)) void wait_for_ever(void)
{
	static int park;
	for (;;)
		syscall(SYS_futex, &park, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
}

/* Calls of main so far: each woven main keeps its number in its cleanup's
   variable, and only the first (the outermost) claims at its return; a
   recursive main's inner returns claim nothing. */
static int g_main_calls;

/* In .text.startup, with main and the constructors (GNU ld puts it ahead
   of the rest of the code): emitted last of the runtime's .text, it was
   the last page there a program runs early, and the kernel's window
   around it mapped part of .text.weave_rare (RT_RARE; BENCHMARKS.md). */
#ifdef __ELF__
__attribute__((section(".text.startup")))
#endif
int __weave_main_enter(void)
{
	return __atomic_add_fetch(&g_main_calls, 1, __ATOMIC_RELAXED);
}

/* The outermost main returns: its thread claims the way out, before the C
   library's exit runs the handlers; if another thread's exit has it, this
   one waits for ever, as a second exit does. Without it a thread's exit
   ran the handlers beside main's return, and whichever ended the process
   first could cut the other's profile short: none was left in 28 of 40
   runs of exits.c's race_return. */
RT_RARE void __weave_main_return(int *call)
{
	if (*call == 1 && g_in_exe && claim_exit())
		wait_for_ever();
}

/* exit: the first thread to call it goes on to the C library's; any other
   waits for ever (see the top). On x86-64 it is a jump, so that the C
   library's exit runs on the stack as if called by the program: the exit
   leak scan finds the registers exit and its callees saved there
   (leakstack.c), and __weave_exit_wrapper names it for that. */
#if RT_INTERPOSE && !defined(WEAVE_SHARED_OBJECT)
__attribute__((used, visibility("hidden"))) void *__weave_exit_begin(void);
RT_RARE __attribute__((used, visibility("hidden"))) void *__weave_exit_begin(void)
{
	if (claim_exit())
		wait_for_ever();
	if (!REAL_FN(exit_full)) {
		/* No C library exit found (cannot happen in a dynamic link; a
		   static one links the C library's instead of this): end the
		   process as quick_exit would, with stdio flushed. */
		rt_finish(1, 1, "exit", 0, LOCK_WAIT);
		fflush(NULL);
		return (void *)g_real.exit_ ? (void *)g_real.exit_ : (void *)_exit;
	}
	return (void *)g_real.exit_full;
}
#if defined(__x86_64__) && !defined(__ILP32__)
extern const char __weave_exit_wrapper[] __attribute__((visibility("hidden")));
/* The instructions as bytes: the same text assembles under -masm=intel. */
__asm__(".text\n"
	".weak exit\n"
	".type exit, @function\n"
	".hidden __weave_exit_wrapper\n"
	"exit:\n"
	"__weave_exit_wrapper:\n"
	"\t.cfi_startproc\n"
	"\t.byte 0xf3, 0x0f, 0x1e, 0xfa\n" /* endbr64 */
	"\t.byte 0x57\n"                   /* push %rdi */
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tcall __weave_exit_begin\n"
	"\t.byte 0x5f\n" /* pop %rdi */
	"\t.cfi_adjust_cfa_offset -8\n"
	"\t.byte 0xff, 0xe0\n" /* jmp *%rax */
	"\t.cfi_endproc\n"
	".size exit, .-exit\n");
#define RT_EXIT_WRAPPER ((uintptr_t)__weave_exit_wrapper)
#else
RT_RARE __attribute__((weak, noreturn)) void exit(int status)
{
	void (*real)(int) = (void (*)(int))__weave_exit_begin();
	real(status);
	for (;;)
		syscall(SYS_exit_group, status);
}
#endif
#endif
#ifndef RT_EXIT_WRAPPER
#define RT_EXIT_WRAPPER ((uintptr_t)0)
#endif

RT_RARE static uintptr_t rt_exit_wrapper(void)
{
	return RT_EXIT_WRAPPER;
}

RT_RARE static void rt_quick_exit(void)
{
	rt_finish(1, 1, "quick_exit", 0, LOCK_WAIT);
}

/* Registers rt_quick_exit (the active copy, at start-up). A copy built for
   a shared object (-DWEAVE_SHARED_OBJECT, as the driver builds it for
   -shared links) finds __cxa_at_quick_exit, what at_quick_exit calls, at
   run time instead of linking it: a library must not need a symbol of
   the exit family, and some check it (libpq's build fails if `nm -u`
   lists one: a library must never end its caller's process). Registering
   a handler ends nothing; the runtime never calls exit itself. Without
   dlsym (a static program) quick_exit then writes no profile. An
   executable's calls __cxa_at_quick_exit as glibc's at_quick_exit does,
   which is linked from libc_nonshared.a into its last page of code (as
   rt_atfork, init.c). */
extern int __cxa_at_quick_exit(void (*)(void *), void *) __attribute__((weak));
static void rt_quick_exit_register(void)
{
#ifdef WEAVE_SHARED_OBJECT
	int (*reg)(void (*)(void *), void *);
	*(void **)&reg = dlsym ? dlsym(RTLD_DEFAULT, "__cxa_at_quick_exit") : NULL;
	if (reg)
		reg((void (*)(void *))rt_quick_exit, &__dso_handle);
#else
	if (&__cxa_at_quick_exit)
		__cxa_at_quick_exit((void (*)(void *))rt_quick_exit, &__dso_handle ? __dso_handle : NULL);
	else
		at_quick_exit(rt_quick_exit);
#endif
}

/* exec*: the profile first (see above). Without
   the real functions (dlsym missing) the system calls do it, and a PATH
   search like glibc's, without its fallback to /bin/sh for scripts. */
RT_RARE static int before_exec(void)
{
	rt_finish(0, 1, "exec", 0, LOCK_WAIT);
	return ctl_exec_before();
}

/* An exec that returned (failed) with r: the control channel back. */
RT_RARE static int after_exec(int ctl, int r)
{
	int e = errno;
	ctl_exec_failed(ctl);
	errno = e;
	return r;
}

RT_RARE static int sys_execve(const char *path, char *const argv[], char *const envp[])
{
	return REAL_FN(execve) ? g_real.execve(path, argv, envp) : (int)syscall(SYS_execve, path, argv, envp);
}

RT_RARE static int path_execvpe(const char *file, char *const argv[], char *const envp[])
{
	const char *path, *p, *z;
	char buf[4096];
	wsize fl = strlen(file);
	int eacces = 0;
	if (!*file) {
		errno = ENOENT;
		return -1;
	}
	if (strchr(file, '/'))
		return sys_execve(file, argv, envp);
	path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	for (p = path;; p = z + 1) {
		wsize k;
		z = strchrnul(p, ':');
		k = (wsize)(z - p);
		if (k + fl + 2 <= sizeof buf) {
			memcpy(buf, p, k);
			if (k)
				buf[k++] = '/';
			memcpy(buf + k, file, fl + 1);
			sys_execve(buf, argv, envp);
			if (errno == EACCES)
				eacces = 1;
			else if (errno != ENOENT && errno != ENOTDIR)
				return -1;
		}
		if (!*z)
			break;
	}
	if (eacces)
		errno = EACCES;
	return -1;
}

RT_RARE __attribute__((weak)) int execve(const char *path, char *const argv[], char *const envp[])
{
	int c = before_exec();
	return after_exec(c, sys_execve(path, argv, envp));
}

RT_RARE __attribute__((weak)) int execv(const char *path, char *const argv[])
{
	int c = before_exec();
	return after_exec(c, REAL_FN(execv) ? g_real.execv(path, argv) : sys_execve(path, argv, environ));
}

RT_RARE __attribute__((weak)) int execvp(const char *file, char *const argv[])
{
	int c = before_exec();
	return after_exec(c, REAL_FN(execvp) ? g_real.execvp(file, argv) : path_execvpe(file, argv, environ));
}

RT_RARE __attribute__((weak)) int execvpe(const char *file, char *const argv[], char *const envp[])
{
	int c = before_exec();
	return after_exec(c, REAL_FN(execvpe) ? g_real.execvpe(file, argv, envp) : path_execvpe(file, argv, envp));
}

RT_RARE __attribute__((weak)) int fexecve(int fd, char *const argv[], char *const envp[])
{
	int c = before_exec();
	if (REAL_FN(fexecve))
		return after_exec(c, g_real.fexecve(fd, argv, envp));
	return after_exec(c, (int)syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH));
}

RT_RARE __attribute__((weak)) int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	int c = before_exec();
	if (REAL_FN(execveat))
		return after_exec(c, g_real.execveat(dirfd, path, argv, envp, flags));
	return after_exec(c, (int)syscall(SYS_execveat, dirfd, path, argv, envp, flags));
}

/* daemon: the C library's forks and ends the parent by its own _exit,
   past the runtime's, and the daemon's profile starts from zero: what
   the program did before it became a daemon was in no profile. The
   parent's profile first, as before an exec (provisional: a daemon call
   that fails goes on and replaces it at exit); the daemon's goes beside
   it (rt_fork_child). */
RT_RARE __attribute__((weak)) int daemon(int nochdir, int noclose)
{
	int (*real)(int, int), fd;
	struct stat st;
	rt_finish(0, 1, "daemon", 0, LOCK_WAIT);
	*(void **)&real = next_sym("daemon");
	if (real)
		return real(nochdir, noclose);
	/* No C library's to call (a static link): glibc's steps. */
	switch (fork()) {
	case -1:
		return -1;
	case 0:
		break;
	default:
		_exit(0);
	}
	if (setsid() == -1)
		return -1;
	if (!nochdir)
		(void)!chdir("/");
	if (noclose)
		return 0;
	if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
		return -1;
	if (rt_fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode)) {
		close(fd);
		errno = ENODEV;
		return -1;
	}
	for (int i = 0; i < 3; i++)
		dup2(fd, i);
	if (fd > 2)
		close(fd);
	return 0;
}

/* execl, execlp, execle: the arguments into an array, then as execv,
   execvp, execve. */
#define COLLECT_ARGS(arg0, last)                                  \
	va_list ap;                                               \
	wsize n = 1, i;                                           \
	va_start(ap, arg0);                                       \
	while (va_arg(ap, char *))                                \
		n++;                                              \
	va_end(ap);                                               \
	char *argv[n + 1];                                        \
	argv[0] = (char *)arg0;                                   \
	va_start(ap, arg0);                                       \
	for (i = 1; i <= n; i++)                                  \
		argv[i] = va_arg(ap, char *);                     \
	last;                                                     \
	va_end(ap)

RT_RARE __attribute__((weak)) int execl(const char *path, const char *arg, ...)
{
	COLLECT_ARGS(arg, (void)0);
	return execv(path, argv);
}

RT_RARE __attribute__((weak)) int execlp(const char *file, const char *arg, ...)
{
	COLLECT_ARGS(arg, (void)0);
	return execvp(file, argv);
}

RT_RARE __attribute__((weak)) int execle(const char *path, const char *arg, ...)
{
	char **envp;
	COLLECT_ARGS(arg, envp = va_arg(ap, char **));
	return execve(path, argv, envp);
}
#undef COLLECT_ARGS

RT_RARE static void rt_fini_late(void)
{
	rt_finish(1, 1, "exit", 0, LOCK_WAIT);
	ls_exit_status();
}

/* Runs after the program's atexit handlers and after other (default
   priority) destructors of the executable. In the executable it defers the
   profile to one more atexit handler, which runs after the destructors of
   the shared objects (glibc runs handlers registered while it runs them);
   in a shared object (dlclose, or exit) it writes it now. Other threads
   may still run: their counts are read as they are. */
RT_RARE __attribute__((destructor(101))) static void rt_fini(void)
{
	struct rt_local *l;
	int was, late;
	if (!rt_is_active()) {
		unload_notify(); /* a woven library going away: see unload.c; no thread-local touched (rt_init) */
		return;
	}
	l = &rt_local;
	was = l->in_rt;
	if (__atomic_load_n(&g_finished, __ATOMIC_ACQUIRE) == FIN_FINAL) {
		wait_final_writer(was); /* another thread's _exit: this exit must not end it */
		return;
	}
	if (g_in_exe)
		claim_exit(); /* a return from main: later exits wait */
	rt_enter(l);
	late = g_in_exe && atexit(rt_fini_late) == 0;
	fence();
	l->in_rt = was;
	if (!late)
		rt_finish(1, 1, "exit", 0, LOCK_WAIT);
}

RT_RARE static void rt_fork_prepare(void)
{
	rt_local.in_rt++;
	fence();
	pthread_mutex_lock(&g_lock);
	marks_fork_prepare();
	side_lock();
	pool_lock();
	spin_lock(&g_held.lock);
}

RT_RARE static void rt_fork_parent(void)
{
	spin_unlock(&g_held.lock);
	pool_unlock();
	side_unlock();
	marks_fork_parent();
	pthread_mutex_unlock(&g_lock);
	fence();
	rt_local.in_rt--;
}

/* Zeroes counters that other threads may have added to atomically. */
RT_RARE static void zero_u64(u64 *p, wsize n)
{
	while (n--)
		__atomic_store_n(p++, 0, __ATOMIC_RELAXED);
}

/* In the child (one thread; the locks are held since rt_fork_prepare):
   everything counted so far is the parent's, so the child starts from
   zero (see above), times included. The forking thread becomes T 0, with its new tid, and keeps its tree, whose nodes keep their
   place but lose their counts; the other threads are dropped from the
   profile. Blocks in the side table are the parent's: retagged to node 0,
   "inherited". */
RT_RARE static void rt_fork_child(void)
{
	struct rt_thread *me = rt_local.thr, *T;
	u32 i, k;
	time_fork_child(); /* before the other threads leave the list */
	for (T = g_threads; T; T = T->next) {
		u32 nn = __atomic_load_n(&T->nnodes, __ATOMIC_ACQUIRE);
		for (i = T->first, k = 0; k < nn; k++) {
			struct rt_node *n = node_at(i);
			n->pub.calls = 0;
			__atomic_store_n(&n->time, 0, __ATOMIC_RELAXED);
			if (n->kind == KIND_A)
				zero_u64((u64 *)n->u.heap, sizeof *n->u.heap / sizeof(u64));
			if (T == me)
				n->thread = 0;
			i = n->next;
		}
		if (T->bins)
			memset(bin_start(T->bins), 0, TBINS_BYTES);
	}
	if (g_shared_bins_used) /* else never written: zeroing would copy its pages in every child */
		zero_u64((u64 *)g_shared_bins, BIN_ROWS * (sizeof(struct bin64) / sizeof(u64)));
	g_shared_bins_used = 0;
	zero_u64((u64 *)&g_inh, sizeof g_inh / sizeof(u64));
	side_inherit();
	g_threads = NULL;
	g_threads_tail = &g_threads;
	g_nthreads = 0;
	if (me) {
		me->tid = (int)syscall(SYS_gettid);
		me->num = 0;
		rt_local.num = 0;
		me->next = NULL;
		g_threads = me;
		g_threads_tail = &me->next;
		g_nthreads = 1;
	}
	g_pid = (int)getpid();
	g_forked = 1;
	g_exit_tid = g_final_tid = 0; /* the parent's threads leaving are not here */
	g_final_done = __atomic_load_n(&g_finished, __ATOMIC_RELAXED) == FIN_FINAL; /* nor its writer */
	/* The parent's provisional profile (a checkpoint, a snapshot, an exec
	   that failed) is not the child's to replace: the child's goes beside
	   it. A provisional write under way is the parent's (its writer is
	   not in the child), not one the child's final profile must wait for. */
	g_prev_path[0] = 0;
	if (__atomic_load_n(&g_finished, __ATOMIC_RELAXED) == FIN_PROV_BUSY)
		__atomic_store_n(&g_finished, FIN_PROV, __ATOMIC_RELAXED);
	g_start_ns = now_ns();
	g_unrec[0] = g_unrec[1] = g_refused = 0; /* the parent's */
	tp_fork_child();
	vm_fork_child();
	hs_fork_child();
	spin_unlock(&g_held.lock);
	pool_unlock();
	marks_fork_child();
	side_unlock();
	pthread_mutex_unlock(&g_lock);
	time_fork_child_late();
	ctl_fork_child();
	fence();
	rt_local.in_rt--;
}
