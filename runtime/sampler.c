//go:build ignore

/* sampler.c: sampled time's sampler, a thread of the runtime's own
   ("weave-sample"), so that no thread of the program ever takes a signal
   or runs a handler for it.

   Each program thread the runtime sets up gets a POSIX timer on its own
   CPU clock (timing.c, smp_timer_start) whose expiries, every
   SMP_PERIOD_NS of that thread's CPU time, queue a signal to the sampler
   (SIGEV_THREAD_ID): to the sampler only, never to a thread of the
   program. The sampler waits for them in rt_sigtimedwait with every
   signal blocked; for each it reads that thread's CPU clock and charges
   the time since its last reading to the node the thread is in (its cur,
   read from its TLS), and does the heap timeline's tick (vm_tick). A
   thread that does not run uses no CPU, so its timer never expires: an
   idle process wakes the sampler once a second (orphan.c), a busy one once per ms of CPU of
   each running thread (the kernel checks CPU timers at its ticks), with
   the sample taken while the thread still runs where it ran.

   Why a timer and not a polling loop that reads every thread's clock
   each period: a loop wakes an idle process, or backs off and then
   charges a burst of work that came after a quiet spell to wherever the
   thread is when the loop next wakes (a server's request handler to its
   event loop).

   The thread. On x86-64 and aarch64 it is a raw clone (CLONE_THREAD, as
   leakpar.c's helpers), with a stack mapped here, so that the C library
   does not know of it: the process stays single-threaded for glibc (its
   stdio and malloc keep their one-thread fast paths), nothing is
   allocated (valgrind sees no calloc for its TLS), no program hook
   runs. It shares the creating thread's TLS pointer and must never write
   TLS: every system call is inline (rt_sys: errno untouched), no libc
   call, no stack protector (its canary is read through the TLS pointer,
   which a fork child's forking thread may free). Under a sanitizer, whose
   instrumentation keeps per-thread state in TLS, and on other
   architectures, it is a pthread instead (then glibc sees two threads,
   and a ThreadSanitizer fork child, where TSan forbids a thread, has
   none). No sampler (M time_sampler none) under a seccomp filter (a
   clone may kill the process rather than fail: leakpar.c), when no
   profile is written (WEAVE_OUT=, or a secure process), or when no
   signal is free; the tail charges (timing.c) still give each thread its
   exact CPU time, to the node it ends in.

   Its signal: the first real-time signal from SIGRTMAX - 1 down whose
   disposition is SIG_DFL at start-up. The program never sees it: the
   timers queue it to the sampler, which blocks it (a blocked signal is
   queued whatever the disposition, and never kills). A process-directed
   signal of that number (kill, sigqueue: the program's own, with the
   signal blocked in its main thread) could reach the sampler while it
   waits: it is not one of its timers', so the sampler sends it to the
   process again (kill) and ends (M time_sampler stopped signal), so that
   the program gets all the later ones. It ends too if its wait fails
   (stopped error: a seccomp filter the program set since).

   Hand-off with the owner: a sample charges T's node and T->cpu_last
   only while it holds T->samp (SMP_FREE -> SMP_BUSY by CAS); the owner
   takes it for good at thread exit or at exit (smp_retire: SMP_DEAD,
   waiting on a futex if a sample is under way), then charges its own
   tail. So no interval of CPU time is charged twice, and the sampler
   never reads a TLS block that its thread has released. T records are
   never freed; the sampler finds them by T->num in g_smp.slot.

   fork: the child has no sampler and no timers (neither is inherited);
   timing.c's fork hook starts a new sampler on the same stack (the
   parent's sampler does not exist in the child) and a timer for the
   forking thread. exec: gone with the other threads. A copy of the
   runtime in a shared object ends its sampler at its final profile
   (smp_stop), before a dlclose can unmap the sampler's code. */

#include "internal.h"

#include <grp.h>
#include <linux/capability.h>
#include <linux/futex.h>
#include <sys/prctl.h>

#define SMP_PERIOD_NS 1000000u
#define SMP_STACK (64u << 10)
#define SMP_SLOTS (1u << 20) /* threads a process sets up in its life that are sampled */
#define SMP_SLOTS_LIMITED (1u << 14) /* under a limit on the address space (rt_limited) */

#if rt_sys_raw && RT_INTERPOSE
#define SMP_RAW 1
#else
#define SMP_RAW 0
#endif

/* ThreadSanitizer refuses a thread started in the child of a
   multi-threaded fork (control.c): no sampler there. */
#if defined(__SANITIZE_THREAD__)
#define SMP_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SMP_TSAN 1
#endif
#endif
#ifndef SMP_TSAN
#define SMP_TSAN 0
#endif


enum { SMP_FREE, SMP_BUSY, SMP_WAIT, SMP_DEAD }; /* T->samp */
enum { SMP_NONE, SMP_RUNNING, SMP_STOPPED, SMP_ENDED }; /* g_smp.state */

/* The sampler: state, signal (and g_smp_tid) written by smp_start (one thread:
   the first set-up, or a fork child), state by the sampler when it stops
   (atomic); slot[T->num] = T published with release by T's owner. */
static struct {
	int state, sig;
	const char *why; /* SMP_NONE, SMP_STOPPED: why */
	char *stack;     /* SMP_STACK bytes, kept for a fork child's sampler */
	struct rt_thread **slot;
	u32 nslot;       /* slot's length: SMP_SLOTS, or SMP_SLOTS_LIMITED */
	u64 samples;     /* atomic */
	int quit, alive; /* smp_stop: atomic; alive is the sampler's tid until it exits */
} g_smp = {.why = "not started"};

static u64 clock_ns(clockid_t id)
{
	struct timespec ts;
	if (rt_clock_gettime(id, &ts) != 0)
		return 0;
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

/* Thread t's CPU clock (CPUCLOCK_SCHED | CPUCLOCK_PERTHREAD). */
static inline long smp_clock(int tid)
{
	return (long)(((unsigned)~tid << 3) | 6);
}

/* A timer's signal: charges thread T's CPU time since its last reading
   to the node it is in now. */
RT_NO_SSP static void smp_charge(struct rt_thread *T)
{
	struct __weave_thread *t;
	struct timespec ts;
	int s = SMP_FREE;
	if (!__atomic_compare_exchange_n(&T->samp, &s, SMP_BUSY, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return; /* its owner took it over (exit) */
	t = __atomic_load_n(&T->tls, __ATOMIC_ACQUIRE);
	if (t && rt_sys(SYS_clock_gettime, smp_clock(T->tid), (long)&ts, 0, 0) == 0) {
		u64 now = (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
		struct rt_node *n = (struct rt_node *)(void *)__atomic_load_n(&t->cur, __ATOMIC_RELAXED);
		if (now > T->cpu_last) {
			if (n != &rt_boot) {
				__atomic_fetch_add(&n->time, now - T->cpu_last, __ATOMIC_RELAXED);
				T->smp_node = n;
			}
			T->cpu_last = now;
		}
		__atomic_fetch_add(&g_smp.samples, 1, __ATOMIC_RELAXED);
		vm_tick(T->vm);
	}
	if (__atomic_exchange_n(&T->samp, SMP_FREE, __ATOMIC_ACQ_REL) == SMP_WAIT)
		rt_sys(SYS_futex, (long)&T->samp, FUTEX_WAKE_PRIVATE, 1, 0);
}

/* A signal the sampler took: a sample (1), or not one of its timers' (0). */
RT_NO_SSP static int smp_one(const siginfo_t *si)
{
	struct rt_thread *T;
	u32 k = (u32)si->si_value.sival_int;
	if (si->si_code != SI_TIMER || k >= g_smp.nslot || !(T = __atomic_load_n(&g_smp.slot[k], __ATOMIC_ACQUIRE)))
		return 0;
	/* Another timer id: T's timer was deleted at its exit, with a signal
	   still queued (the sampler ignores it). */
	if (__atomic_load_n(&T->timer, __ATOMIC_RELAXED) == si->si_timerid)
		smp_charge(T);
	return 1;
}

/* Credentials. The kernel keeps them per thread; glibc's set*id and
   setgroups give the new ones to every thread it knows (its SIGSETXID
   round), which the raw sampler is not. A daemon started as root that
   dropped to nobody kept a thread with root's uids and every capability
   in an address space the unprivileged program controls. So these calls
   are interposed (smp_follow, below): when one succeeds, the caller's
   credentials are copied here and the sampler takes them before the call
   returns. A sampler that cannot take them ends (M time_sampler stopped
   credentials): it never holds more than the program. */
#define SMP_GROUPS 64 /* groups copied in g_cred itself; more in a map */
static struct {
	u32 lock;      /* one copy at a time */
	u32 gen, seen; /* copies made; the last the sampler took: futex */
	int blind;     /* a change made under the program's seccomp filter: not copied */
	u32 uid[3], gid[3];
	int ngroups, room;  /* groups copied; room in groups and mine */
	u32 *groups, *mine; /* the caller's; the sampler's */
	u32 local[2][SMP_GROUPS];
	struct __user_cap_data_struct caps[2];
} g_cred;

/* The sampler takes the credentials copied in g_cred: groups, gids, uids
   (from the program's former ones, the kernel's transitions clear the
   same capabilities), then the capabilities themselves where they still
   differ. 0 if the kernel refused. */
RT_NO_SSP static int smp_take_cred(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct mine[2];
	long n = rt_sys(SYS_getgroups, g_cred.ngroups, (long)g_cred.mine, 0, 0);
	int i, same = n == g_cred.ngroups;
	for (i = 0; same && i < g_cred.ngroups; i++)
		same = g_cred.mine[i] == g_cred.groups[i];
	if (!same && rt_sys(SYS_setgroups, g_cred.ngroups, (long)g_cred.groups, 0, 0) != 0)
		return 0;
	if (rt_sys(SYS_setresgid, g_cred.gid[0], g_cred.gid[1], g_cred.gid[2], 0) != 0 ||
	    rt_sys(SYS_setresuid, g_cred.uid[0], g_cred.uid[1], g_cred.uid[2], 0) != 0 ||
	    rt_sys(SYS_capget, (long)&h, (long)mine, 0, 0) != 0)
		return 0;
	if (memcmp(mine, g_cred.caps, sizeof mine) == 0)
		return 1;
	h.pid = 0;
	return rt_sys(SYS_capset, (long)&h, (long)g_cred.caps, 0, 0) == 0;
}

/* The sampler's part of a copy (smp_follow): takes it, or ends. 1: go on. */
RT_NO_SSP static int smp_cred_due(void)
{
	u32 gen = __atomic_load_n(&g_cred.gen, __ATOMIC_ACQUIRE);
	int ok;
	if (gen == __atomic_load_n(&g_cred.seen, __ATOMIC_RELAXED))
		return 1;
	if (!(ok = !__atomic_load_n(&g_cred.blind, __ATOMIC_ACQUIRE) && smp_take_cred())) {
		g_smp.why = "credentials";
		__atomic_store_n(&g_smp.state, SMP_STOPPED, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&g_cred.seen, gen, __ATOMIC_RELEASE);
	rt_sys(SYS_futex, (long)&g_cred.seen, FUTEX_WAKE_PRIVATE, 1, 0);
	return ok;
}

RT_NO_SSP static int smp_main(void *arg)
{
	u64 set = 1ull << (g_smp.sig - 1);
	siginfo_t si;
	long wait_ms = 1000;
	(void)arg;
	rt_sys(SYS_prctl, PR_SET_NAME, (long)"weave-sample", 0, 0);
	for (;;) {
		struct timespec wait = {wait_ms / 1000, wait_ms % 1000 * 1000000};
		long r = rt_sys(SYS_rt_sigtimedwait, (long)&set, (long)&si, (long)&wait, 8);
		int left;
		if (__atomic_load_n(&g_smp.quit, __ATOMIC_ACQUIRE) || !smp_cred_due())
			return 0;
		if (r == -EINTR || (r == g_smp.sig && smp_one(&si)))
			continue;
		/* A while without a sample, or main's exit (smp_main_gone):
		   orphan.c. */
		if (r == -EAGAIN || (r == g_smp.sig && si.si_code == SI_TKILL && si.si_pid == g_pid)) {
			if ((left = rt_orphaned()) != RT_ORPHANED) {
				wait_ms = rt_orphan_wait_ms(left);
				continue;
			}
			__atomic_store_n(&g_orphaned, 1, __ATOMIC_RELEASE);
			g_smp.why = "no thread of the program left";
			__atomic_store_n(&g_smp.state, SMP_STOPPED, __ATOMIC_RELEASE);
			if (SMP_RAW)
				rt_orphan_end();
			return 0;
		}
		/* Not a sample: the program's own signal (given back), or the
		   wait refused (a seccomp filter set since: no busy loop).
		   The thread ends; its timers' later signals are dropped. */
		g_smp.why = r == g_smp.sig ? "signal" : "error";
		__atomic_store_n(&g_smp.state, SMP_STOPPED, __ATOMIC_RELEASE);
		if (r == g_smp.sig)
			rt_sys(SYS_kill, g_pid, g_smp.sig, 0, 0);
		return 0;
	}
}

/* The main thread is exiting (pthread_exit): the sampler looks at once,
   then every 20 ms, whether a thread of the program is left (orphan.c).
   Not inlined: rt_thread_exit, of a hot part, keeps its code (TestForSize). */
static __attribute__((noinline)) void smp_main_gone(void)
{
	int tid = __atomic_load_n(&g_smp_tid, __ATOMIC_ACQUIRE);
	if (rt_sys(SYS_gettid, 0, 0, 0, 0) != g_pid)
		return; /* not main */
	if (tid && __atomic_load_n(&g_smp.state, __ATOMIC_ACQUIRE) == SMP_RUNNING)
		rt_sys(SYS_tgkill, g_pid, tid, g_smp.sig, 0);
	rt_main_exit();
}

#if !SMP_RAW
static void *smp_main_pthread(void *arg)
{
	__atomic_store_n((int *)arg, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	smp_main(NULL);
	__atomic_store_n(&g_smp.alive, 0, __ATOMIC_RELEASE);
	syscall(SYS_futex, &g_smp.alive, FUTEX_WAKE, 1, NULL, NULL, 0);
	return NULL;
}
#endif

/* The signal for the timers: see the top. 0 if none is free. */
static int smp_signal(void)
{
	struct sigaction old;
	int s;
	for (s = SIGRTMAX - 1; s > SIGRTMIN; s--)
		if (sigaction(s, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
			return s;
	return 0;
}

/* Names the sampler "weave-sample" from here, so that the name is there
   as soon as the thread is (it names itself too, when it first runs:
   /proc may be missing). errno kept. */
static void smp_name(int tid)
{
	static const char name[] = "weave-sample";
	struct sbuf p = {.n = 0};
	int e = errno, fd;
	sb_str(&p, "/proc/self/task/");
	sb_u64(&p, (u64)tid);
	sb_str(&p, "/comm");
	fd = open(p.s, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t w = write(fd, name, sizeof name - 1); /* failed: it names itself */
		(void)w;
		close(fd);
	}
	errno = e;
}

/* Starts the sampler thread (sampled mode: time_global_init, and in a fork
   child: forked). Every signal blocked in it: it inherits the mask. */
static void smp_start(int forked)
{
	u64 all = ~(u64)0, old;
	long r = -1;
	(void)forked;
	g_smp.state = SMP_NONE;
	g_smp.quit = g_smp.alive = 0;
	/* A fork child's copy: a thread of the parent's may have held it. */
	g_cred.lock = 0;
	g_cred.seen = g_cred.gen;
	__atomic_store_n(&g_smp_tid, 0, __ATOMIC_RELEASE);
	if (g_cfg_out_set && !g_cfg_out[0]) {
		g_smp.why = "no profile";
		return;
	}
	if (rt_under_seccomp()) {
		g_smp.why = "seccomp"; /* or /proc unreadable: no clone either way */
		return;
	}
	if (!g_smp.sig && !(g_smp.sig = smp_signal())) {
		g_smp.why = "no free signal";
		return;
	}
	if (!g_smp.slot) {
		u32 n = rt_limited() ? SMP_SLOTS_LIMITED : SMP_SLOTS;
		void *p = mmap(NULL, n * sizeof *g_smp.slot, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p != MAP_FAILED) {
			rt_own(p, n * sizeof *g_smp.slot); /* one page per 512 threads, not 2 MiB */
			g_smp.nslot = n;
			__atomic_store_n(&g_smp.slot, p, __ATOMIC_RELEASE);
		}
	}
	if (SMP_RAW && !g_smp.stack) {
		void *p = mmap(NULL, SMP_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if (p != MAP_FAILED) {
			rt_own(p, SMP_STACK);
			g_smp.stack = p;
		}
	}
	if (!g_smp.slot || (SMP_RAW && !g_smp.stack)) {
		g_smp.why = "out of memory";
		return;
	}
	if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof all) != 0) {
		g_smp.why = "sigprocmask";
		return;
	}
#if SMP_RAW
	/* The kernel clears alive when it has exited (CLONE_CHILD_CLEARTID). */
	r = clone(smp_main, g_smp.stack + SMP_STACK,
		  CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | CLONE_PARENT_SETTID |
			  CLONE_CHILD_CLEARTID,
		  NULL, &g_smp.alive, NULL, &g_smp.alive);
#else
	{
		pthread_attr_t a;
		pthread_t th;
		static int tid;
		tid = 0;
		if (!(forked && SMP_TSAN) && pthread_attr_init(&a) == 0) {
			pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
			pthread_attr_setstacksize(&a, 256u << 10);
			if (pthread_create(&th, &a, smp_main_pthread, &tid) == 0)
				while (!(r = __atomic_load_n(&tid, __ATOMIC_ACQUIRE))) /* its tid, for the timers */
					sched_yield();
			pthread_attr_destroy(&a);
		}
	}
#endif
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof old);
	if (r <= 0) {
		g_smp.why = "no thread";
		return;
	}
	if (!SMP_RAW)
		__atomic_store_n(&g_smp.alive, (int)r, __ATOMIC_RELEASE);
	smp_name((int)r);
	__atomic_store_n(&g_smp_tid, (int)r, __ATOMIC_RELEASE);
	__atomic_store_n(&g_smp.state, SMP_RUNNING, __ATOMIC_RELEASE);
}

/* Ends the sampler and waits until it has exited: the final profile of
   a copy of the runtime in a shared object, which a dlclose may unmap
   (the sampler's code with it) while the program goes on. Samples stop
   there; a timer's later signals find no thread and are dropped. */
RT_RARE static void smp_stop(void)
{
	int tid = __atomic_load_n(&g_smp_tid, __ATOMIC_ACQUIRE), a, n = 0;
	struct timespec ts = {0, 10000000};
	if (!tid || __atomic_load_n(&g_smp.state, __ATOMIC_ACQUIRE) != SMP_RUNNING)
		return;
	__atomic_store_n(&g_smp.quit, 1, __ATOMIC_RELEASE);
	syscall(SYS_tgkill, g_pid, tid, g_smp.sig);
	/* Not FUTEX_WAIT_PRIVATE: the kernel's wake at the thread's exit is a
	   shared one. At most a second: a sampler held stopped (a debugger)
	   must not hang the exit. */
	while ((a = __atomic_load_n(&g_smp.alive, __ATOMIC_ACQUIRE)) != 0 && n++ < 100)
		syscall(SYS_futex, &g_smp.alive, FUTEX_WAIT, a, &ts, NULL, 0);
	__atomic_store_n(&g_smp.state, SMP_ENDED, __ATOMIC_RELEASE);
}

/* Deletes T's timer (owner). A signal still queued from it is ignored
   (smp_one); T->timer keeps the id so that it is recognised. */
static void smp_timer_stop(struct rt_thread *T)
{
	if (T->timer >= 0)
		syscall(SYS_timer_delete, T->timer);
}

/* Starts T's CPU-clock timer, whose signals go to the sampler (owner
   thread, at set-up or in a fork child). T->samp is SMP_FREE: the tail
   charge comes at exit (smp_retire) whether or not there is a timer. */
static void smp_timer_start(struct rt_thread *T)
{
	struct {
		union sigval value;
		int signo, notify, tid, pad[12];
	} ev;
	struct itimerspec its;
	T->cpu_last = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	T->smp_node = 0;
	T->timer = -1;
	__atomic_store_n(&T->samp, SMP_FREE, __ATOMIC_RELEASE);
	if (__atomic_load_n(&g_smp.state, __ATOMIC_ACQUIRE) != SMP_RUNNING || T->num >= g_smp.nslot)
		return;
	memset(&ev, 0, sizeof ev);
	ev.value.sival_int = (int)T->num;
	ev.signo = g_smp.sig;
	ev.notify = SIGEV_THREAD_ID;
	ev.tid = g_smp_tid;
	if (syscall(SYS_timer_create, CLOCK_THREAD_CPUTIME_ID, &ev, &T->timer) != 0) {
		T->timer = -1;
		return;
	}
	__atomic_store_n(&g_smp.slot[T->num], T, __ATOMIC_RELEASE); /* T's fields before */
	its.it_interval.tv_sec = its.it_value.tv_sec = 0;
	its.it_interval.tv_nsec = its.it_value.tv_nsec = SMP_PERIOD_NS;
	if (syscall(SYS_timer_settime, T->timer, 0, &its, NULL) != 0)
		smp_timer_stop(T);
}

/* Takes T's sampling over for good (owner, at thread exit or exit):
   returns 1 if this call took it (the caller charges the tail), 0 if it
   was taken before. */
static int smp_retire(struct rt_thread *T)
{
	for (;;) {
		int s = __atomic_load_n(&T->samp, __ATOMIC_ACQUIRE);
		if (s == SMP_DEAD)
			return 0;
		if (s == SMP_FREE && __atomic_compare_exchange_n(&T->samp, &s, SMP_DEAD, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return 1;
		if (s == SMP_BUSY)
			__atomic_compare_exchange_n(&T->samp, &s, SMP_WAIT, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
		else if (s == SMP_WAIT)
			syscall(SYS_futex, &T->samp, FUTEX_WAIT_PRIVATE, SMP_WAIT, NULL, NULL, 0);
	}
}

/* The sampler's memory, for the leak scan's exclusions (no pointers of
   the program's). */
RT_RARE static void smp_exclude(void (*f)(const void *p, u64 n))
{
	if (g_smp.stack)
		f(g_smp.stack, SMP_STACK);
	if (g_smp.slot)
		f(g_smp.slot, g_smp.nslot * sizeof *g_smp.slot);
}

/* M time_sampler: "thread" (sampling), "stopped signal" (it took a
   signal of the program's: no samples after), "stopped error", "stopped
   credentials" (smp_cred_due), "none <why>". */
RT_RARE static const char *smp_describe(struct sbuf *b)
{
	int s = __atomic_load_n(&g_smp.state, __ATOMIC_ACQUIRE);
	b->n = 0;
	if (s == SMP_RUNNING || s == SMP_ENDED)
		return "thread";
	sb_str(b, s == SMP_STOPPED ? "stopped " : "none ");
	sb_str(b, g_smp.why);
	return b->s;
}

#if SMP_RAW && RT_INTERPOSE && !defined(WEAVE_SHARED_OBJECT)
/* After a set*id or setgroups call succeeded: the caller's credentials
   copied for the sampler (g_cred), which is woken by its signal from this
   process (as smp_main_gone wakes it) and waited for. */
RT_RARE static void smp_follow(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct timespec ts = {0, 1000000};
	int tid = __atomic_load_n(&g_smp_tid, __ATOMIC_ACQUIRE), e = errno, n, i;
	u32 gen;
	/* Under a filter the program set, which may kill for any call of
	   ours, none is made here: the sampler ends at its next wake-up (at
	   most a second). */
	if (__atomic_load_n(&g_filter_set, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&g_cred.blind, 1, __ATOMIC_RELEASE);
		__atomic_fetch_add(&g_cred.gen, 1, __ATOMIC_RELEASE);
		return;
	}
	/* Not a vfork child's call: the sampler is its parent's. */
	if (!tid || __atomic_load_n(&g_smp.state, __ATOMIC_ACQUIRE) != SMP_RUNNING || (int)getpid() != g_pid)
		return;
	while (__atomic_exchange_n(&g_cred.lock, 1, __ATOMIC_ACQUIRE))
		nanosleep(&ts, NULL);
	if (!g_cred.groups)
		g_cred.groups = g_cred.local[0], g_cred.mine = g_cred.local[1], g_cred.room = SMP_GROUPS;
	if ((n = getgroups(0, NULL)) > g_cred.room) {
		void *p = mmap(NULL, 2 * (wsize)n * sizeof(u32), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			n = -1;
		else
			g_cred.groups = p, g_cred.mine = (u32 *)p + n, g_cred.room = n;
	}
	/* Read in this order, all by this thread: the set the kernel holds now. */
	if (n < 0 || (n = getgroups(n, (gid_t *)g_cred.groups)) < 0 ||
	    getresuid(&g_cred.uid[0], &g_cred.uid[1], &g_cred.uid[2]) != 0 ||
	    getresgid(&g_cred.gid[0], &g_cred.gid[1], &g_cred.gid[2]) != 0 ||
	    syscall(SYS_capget, &h, g_cred.caps) != 0) {
		/* Unknown: the sampler must not keep what may be more. */
		smp_stop();
		__atomic_store_n(&g_cred.lock, 0, __ATOMIC_RELEASE);
		errno = e;
		return;
	}
	g_cred.ngroups = n;
	gen = __atomic_load_n(&g_cred.gen, __ATOMIC_RELAXED) + 1;
	__atomic_store_n(&g_cred.gen, gen, __ATOMIC_RELEASE);
	syscall(SYS_tgkill, g_pid, tid, g_smp.sig);
	/* At most 10 s: a sampler held stopped (a debugger) is ended. */
	for (i = 0; i < 10000 && __atomic_load_n(&g_cred.seen, __ATOMIC_ACQUIRE) != gen &&
		    __atomic_load_n(&g_smp.state, __ATOMIC_ACQUIRE) == SMP_RUNNING; i++) {
		struct timespec w = {0, 1000000};
		syscall(SYS_futex, &g_cred.seen, FUTEX_WAIT_PRIVATE, __atomic_load_n(&g_cred.seen, __ATOMIC_ACQUIRE), &w, NULL, 0);
	}
	if (__atomic_load_n(&g_cred.seen, __ATOMIC_ACQUIRE) != gen)
		smp_stop();
	__atomic_store_n(&g_cred.lock, 0, __ATOMIC_RELEASE);
	errno = e;
}

/* The C library's call (its round of the threads it knows), then the
   sampler's (smp_follow). */
#define SMP_CRED_FN(f, params, args)                                          \
	RT_RARE __attribute__((weak)) int f params                             \
	{                                                                      \
		static int(*real) params;                                      \
		int ret_, (*fn_) params = __atomic_load_n(&real, __ATOMIC_ACQUIRE); \
		if (!fn_ && (*(void **)&fn_ = next_sym(#f)))                   \
			__atomic_store_n(&real, fn_, __ATOMIC_RELEASE);        \
		if (!fn_) {                                                    \
			errno = ENOSYS;                                        \
			return -1;                                             \
		}                                                              \
		if ((ret_ = fn_ args) == 0)                                    \
			smp_follow();                                          \
		return ret_;                                                   \
	}
SMP_CRED_FN(setuid, (uid_t a), (a))
SMP_CRED_FN(setgid, (gid_t a), (a))
SMP_CRED_FN(seteuid, (uid_t a), (a))
SMP_CRED_FN(setegid, (gid_t a), (a))
SMP_CRED_FN(setreuid, (uid_t a, uid_t b), (a, b))
SMP_CRED_FN(setregid, (gid_t a, gid_t b), (a, b))
SMP_CRED_FN(setresuid, (uid_t a, uid_t b, uid_t c), (a, b, c))
SMP_CRED_FN(setresgid, (gid_t a, gid_t b, gid_t c), (a, b, c))
SMP_CRED_FN(setgroups, (size_t a, const gid_t *b), (a, b))
#endif

/* syscall (interposed, weak): notes a landlock ruleset the program
   restricts itself with (below), and a seccomp filter or strict mode the
   program sets through the system call itself (libseccomp's
   seccomp_load), not prctl (exit.c's prctl): such a filter may kill the
   process for the first system call of the exit's (its look at
   /proc/self/status: a filter allowing only read, write and exit_group
   ended the woven program by SIGSYS where it exited 5). Noted once the
   call succeeded: libseccomp's probe passes no filter. A filter set on
   every thread (SECCOMP_FILTER_FLAG_TSYNC) is the sampler's too, whose
   next wait it killed the process for (or refused: the sampler then
   ended, its exit refused too, in a SIGSEGV): the sampler is ended
   first (smp_stop: no samples after), the control channel's thread
   (ctl_stop: no requests after) and the checkpoint writer (ckpt_stop). Any other call is glibc's
   syscall's instructions, which move no stack pointer (a thread blocked
   in one at exit is scanned from where glibc's would leave it:
   TestLeakRedZone); the errors go out of line. x86-64 only, and not
   under a sanitizer (as the malloc family: interpose.c); elsewhere only
   prctl is seen. */
#if RT_INTERPOSE && defined(__x86_64__) && !defined(__ILP32__)
__attribute__((used, visibility("hidden"))) long __weave_syscall_error(long r);
__attribute__((used, visibility("hidden"))) long __weave_syscall_error(long r)
{
	errno = (int)-r;
	return -1;
}

/* syscall(SYS_seccomp, op, flags, prog): the arguments as syscall's. */
__attribute__((used, visibility("hidden"))) long __weave_syscall_seccomp(long n, long op, long flags, long prog);
RT_RARE __attribute__((used, visibility("hidden"))) long __weave_syscall_seccomp(long n, long op, long flags, long prog)
{
	long r;
	if (op == 1 && (flags & 1) && prog) { /* SECCOMP_SET_MODE_FILTER, FLAG_TSYNC; not a probe */
		smp_stop();
		ctl_exit(); /* the control channel's thread wakes each second */
		ctl_stop();
		ckpt_stop(); /* WEAVE_CHECKPOINT's thread too */
	}
	r = rt_sys(n, op, flags, prog, 0);
	if (r >= 0 && (op == 0 || op == 1)) /* SECCOMP_SET_MODE_STRICT, _FILTER */
		__atomic_store_n(&g_filter_set, 1, __ATOMIC_RELEASE);
	return r < 0 && r > -4096 ? __weave_syscall_error(r) : r;
}

/* syscall(SYS_landlock_restrict_self, ruleset, flags): noted once it
   succeeded (g_landlock_set). */
__attribute__((used, visibility("hidden"))) long __weave_syscall_landlock(long n, long fd, long flags);
RT_RARE __attribute__((used, visibility("hidden"))) long __weave_syscall_landlock(long n, long fd, long flags)
{
	long r = rt_sys(n, fd, flags, 0, 0);
	if (r == 0)
		__atomic_store_n(&g_landlock_set, 1, __ATOMIC_RELEASE);
	return r < 0 && r > -4096 ? __weave_syscall_error(r) : r;
}

/* The instructions as bytes: the same text assembles under -masm=intel. */
__asm__(".text\n"
	".weak syscall\n"
	".type syscall, @function\n"
	"syscall:\n"
	"\t.cfi_startproc\n"
	"\t.byte 0xf3, 0x0f, 0x1e, 0xfa\n"             /* endbr64 */
	"\t.byte 0x48, 0x81, 0xff, 0x3d, 0x01, 0, 0\n" /* cmp $317 (SYS_seccomp), %rdi */
	"\tje __weave_syscall_seccomp\n"
	"\t.byte 0x48, 0x81, 0xff, 0xbe, 0x01, 0, 0\n" /* cmp $446 (SYS_landlock_restrict_self), %rdi */
	"\tje __weave_syscall_landlock\n"
	"\t.byte 0x48, 0x89, 0xf8\n"             /* mov %rdi, %rax */
	"\t.byte 0x48, 0x89, 0xf7\n"             /* mov %rsi, %rdi */
	"\t.byte 0x48, 0x89, 0xd6\n"             /* mov %rdx, %rsi */
	"\t.byte 0x48, 0x89, 0xca\n"             /* mov %rcx, %rdx */
	"\t.byte 0x4d, 0x89, 0xc2\n"             /* mov %r8, %r10 */
	"\t.byte 0x4d, 0x89, 0xc8\n"             /* mov %r9, %r8 */
	"\t.byte 0x4c, 0x8b, 0x4c, 0x24, 0x08\n" /* mov 8(%rsp), %r9 */
	"\t.byte 0x0f, 0x05\n"                   /* syscall */
	"\t.byte 0x48, 0x3d, 0x01, 0xf0, 0xff, 0xff\n" /* cmp $-4095, %rax */
	"\tjae 1f\n"
	"\t.byte 0xc3\n"             /* ret */
	"1:\t.byte 0x48, 0x89, 0xc7\n" /* mov %rax, %rdi */
	"\tjmp __weave_syscall_error\n"
	"\t.cfi_endproc\n"
	".size syscall, .-syscall\n");
#endif
