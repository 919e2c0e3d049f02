//go:build ignore

/* leakpar.c: the leak scan's helper threads, for its passes over the
   blocks that split by address range (ls_edges).

   The scan runs inside the exiting program (an atexit handler, a
   destructor, _exit), with its other threads stopped: no malloc, no
   pthread_create (which may allocate and run the program's thread hooks).
   A helper is a raw clone sharing the address space, with a stack of its
   own mapped here and every signal blocked (it never takes the program's
   signals, nor the timer's); it keeps the exiting thread's TLS pointer and
   touches no thread-local state (no system call, so no errno). The kernel
   clears its tid word when it has exited (CLONE_CHILD_CLEARTID), which the
   join waits for on a futex; its stack is then unmapped, before the scan
   reads /proc/self/maps. A helper that cannot start (no memory, clone
   refused by a sandbox) has its slice run by the calling thread: the
   result never depends on how many threads ran. Under a seccomp filter
   (or if /proc/self/status cannot tell) no helper is made: the filter
   may kill the process for a clone instead of refusing it. */

#include "internal.h"

#include <linux/futex.h>

#define LS_THREADS_MAX 8
#define LS_PAR_STACK (64u << 10)
#define LS_PAR_MIN (16u << 20) /* the blocks' bytes from which helpers pay off (auto) */

static u32 g_cfg_leak_threads; /* WEAVE_LEAK_THREADS; 0: auto */

struct ls_helper {
	void (*fn)(void *);
	void *arg;
	char *stack;
	int tid; /* set by clone, cleared by the kernel at the helper's exit */
};

RT_RARE static int ls_helper_main(void *p)
{
	struct ls_helper *h = p;
	h->fn(h->arg);
	return 0;
}

/* The CPUs this thread may run on. */
RT_RARE static u32 ls_cpus(void)
{
	u64 set[16];
	long n = syscall(SYS_sched_getaffinity, 0, sizeof set, set), i;
	u32 c = 0;
	for (i = 0; i < n / 8; i++)
		c += (u32)__builtin_popcountll(set[i]);
	return c ? c : 1;
}

/* The CPUs not busy now: those this thread may use less the tasks the
   kernel has running, this one included (the fourth field of
   /proc/loadavg, "running/total"); all of them if it cannot be read. A
   helper on a busy CPU only takes turns with what runs there (widgets'
   scan: 23 ms alone, 25 with a helper when the other CPU was busy, 17.5
   when it was free). */
RT_RARE static u32 ls_idle_cpus(void)
{
	char b[128];
	u32 cpus = ls_cpus(), running = 0;
	int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC), f = 0;
	ssize_t k = fd >= 0 ? read(fd, b, sizeof b - 1) : -1, i;
	if (fd >= 0)
		close(fd);
	for (i = 0; i < k && f < 3; i++)
		f += b[i] == ' ';
	if (f < 3 || i >= k || b[i] < '0' || b[i] > '9')
		return cpus;
	for (; i < k && b[i] >= '0' && b[i] <= '9'; i++)
		running = running * 10 + (u32)(b[i] - '0');
	return running < cpus ? cpus - running + 1 : 1;
}

/* How many threads a pass over n blocks of bytes bytes takes: one for
   each CPU not busy (at most LS_THREADS_MAX) for a heap of LS_PAR_MIN
   bytes or more, else one; WEAVE_LEAK_THREADS=N sets it, whatever the
   heap and the load (the tests). */
RT_RARE static u32 ls_par_threads(u64 n, u64 bytes)
{
	u32 t = g_cfg_leak_threads;
	if (!RT_INTERPOSE)
		return 1; /* a sanitizer's thread state is thread-local: a helper would share it */
	if (!t)
		t = bytes >= LS_PAR_MIN ? ls_idle_cpus() : 1;
	/* Under a seccomp filter a clone may kill the process rather than
	   fail: no helpers there, whatever WEAVE_LEAK_THREADS says. */
	if (t > 1 && rt_under_seccomp())
		t = 1;
	if (t > LS_THREADS_MAX)
		t = LS_THREADS_MAX;
	if (t > n)
		t = n ? (u32)n : 1;
	return t;
}

RT_RARE static int ls_par_start(struct ls_helper *h)
{
	u64 all = ~(u64)0, old;
	long r;
	h->stack = mmap(NULL, LS_PAR_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (h->stack == MAP_FAILED)
		return 0;
	rt_own(h->stack, LS_PAR_STACK);
	/* The helper starts with every signal blocked: it inherits the mask. */
	if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof all) != 0) {
		rt_unmap(h->stack, LS_PAR_STACK);
		return 0;
	}
	r = clone(ls_helper_main, h->stack + LS_PAR_STACK,
		  CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | CLONE_PARENT_SETTID |
			  CLONE_CHILD_CLEARTID,
		  h, &h->tid, NULL, &h->tid);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof old);
	if (r <= 0) {
		rt_unmap(h->stack, LS_PAR_STACK);
		return 0;
	}
	return 1;
}

RT_RARE static void ls_par_join(struct ls_helper *h)
{
	int t;
	while ((t = __atomic_load_n(&h->tid, __ATOMIC_ACQUIRE)) != 0)
		syscall(SYS_futex, &h->tid, FUTEX_WAIT, t, NULL, NULL, 0);
	rt_unmap(h->stack, LS_PAR_STACK);
}

/* Runs fn on nt arguments, args[k] at args + k * size: the first here,
   the others on helper threads where they start. Returns how many
   threads ran them. */
RT_RARE static u32 ls_par_run(void (*fn)(void *), void *args, wsize size, u32 nt)
{
	struct ls_helper h[LS_THREADS_MAX];
	int started[LS_THREADS_MAX];
	u32 k, ran = 1;
	for (k = 1; k < nt; k++) {
		h[k].fn = fn;
		h[k].arg = (char *)args + k * size;
		h[k].tid = 0;
		started[k] = ls_par_start(&h[k]);
		ran += (u32)started[k];
	}
	fn(args);
	for (k = 1; k < nt; k++) {
		if (started[k])
			ls_par_join(&h[k]);
		else
			fn((char *)args + k * size);
	}
	return ran;
}
