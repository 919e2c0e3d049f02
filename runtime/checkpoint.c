//go:build ignore

/* checkpoint.c: WEAVE_CHECKPOINT=SECONDS, a profile every so often while
   the program runs, so that a process killed by SIGKILL or the OOM killer
   still leaves its last checkpoint. A thread of the runtime's own (never
   set up: it records nothing, and its creation is not recorded either)
   sleeps SECONDS, then writes the profile as a provisional one (M end
   checkpoint, M complete 0: the counts stop there; end_ns says when),
   through a safe file renamed into place, so the file is always a whole
   profile; the next checkpoint and the final profile replace it (see
   exit.c). No summary is printed for a checkpoint. The thread has every
   signal blocked, so the program's signals never land in it. A fork
   child takes no checkpoints, nor does a process whose profile goes into
   a stream (WEAVE_OUT=/dev/stdout, a pipe). */

#include "internal.h"

#include <linux/futex.h>

static unsigned g_ckpt_secs; /* written once by checkpoint_start */
static int g_ckpt_quit;      /* atomic: ckpt_stop; the thread's sleep waits on it */
static int g_ckpt_started;   /* checkpoint_start made the thread (this process) */

RT_RARE static void *ckpt_main(void *arg)
{
	struct rt_local *l = &rt_local;
	(void)arg;
	l->in_rt = 1; /* never set up: allocations here are not the program's */
	__atomic_store_n(&g_ckpt_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	for (;;) {
		long wait_ms = 1000;
		for (u64 ms = 0; ms < g_ckpt_secs * 1000ull; ms += (u64)wait_ms) {
			struct timespec ts = {wait_ms / 1000, wait_ms % 1000 * 1000000};
			int left;
			syscall(SYS_futex, &g_ckpt_quit, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
			if (__atomic_load_n(&g_ckpt_quit, __ATOMIC_ACQUIRE))
				return NULL;
			if (!__atomic_load_n(&g_orphaned, __ATOMIC_ACQUIRE) && (left = rt_orphaned()) != RT_ORPHANED)
				wait_ms = rt_orphan_wait_ms(left);
			else { /* orphan.c */
				l->in_rt = 0; /* the C library may run exit from here: the program's handlers */
				return NULL;
			}
		}
		if (__atomic_load_n(&g_finished, __ATOMIC_ACQUIRE) == FIN_FINAL || (int)getpid() != g_pid)
			return NULL;
		l->in_rt = 0; /* so that rt_write waits for g_lock */
		rt_write(0, 0, g_ckpt_how, 0, LOCK_WAIT, 1);
		l->in_rt = 1;
	}
}

/* Starts the checkpoint thread if WEAVE_CHECKPOINT asks for one and a
   profile is written. From the constructor (in_rt set). */
static void checkpoint_start(void)
{
	const char *s = rt_env("WEAVE_CHECKPOINT");
	u64 secs = 0;
	pthread_attr_t a;
	pthread_t th;
	sigset_t all, old;
	if (!s || !*s || (g_cfg_out_set && !g_cfg_out[0]))
		return;
	for (; *s >= '0' && *s <= '9' && secs < 1000000; s++)
		secs = secs * 10 + (u64)(*s - '0');
	if (*s || !secs) {
		rt_warn("WEAVE_CHECKPOINT: want a number of seconds; no checkpoints\n");
		return;
	}
	if (out_stream()) {
		/* A checkpoint there would be one more profile in the stream,
		   which weave report - refuses, not one that the next replaces. */
		rt_warn("WEAVE_CHECKPOINT: the profile goes into a stream (WEAVE_OUT), where a checkpoint cannot be replaced; no checkpoints\n");
		return;
	}
	if (rt_under_seccomp()) {
		/* A clone may kill the process there (a sandbox's filter). */
		rt_warn("WEAVE_CHECKPOINT: under a seccomp filter weave starts no thread; no checkpoints\n");
		return;
	}
	g_ckpt_secs = (unsigned)secs;
	sigfillset(&all);
	if (pthread_attr_init(&a) != 0)
		return;
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 256 << 10);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	g_ckpt_started = pthread_create(&th, &a, ckpt_main, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
}

/* Ends the checkpoint thread, waking its sleep, and waits (up to two
   seconds: a checkpoint may be under way) until its task is gone:
   before a seccomp filter set on every thread (sampler.c's syscall),
   which the thread's next wake-up would have ended the process for. */
RT_RARE static void ckpt_stop(void)
{
	int tid, e = errno;
	struct timespec ts = {0, 1000000};
	__atomic_store_n(&g_ckpt_quit, 1, __ATOMIC_RELEASE);
	/* A thread started that has not yet run (a loaded machine) would
	   make its first system call under the filter: wait for it. */
	for (int n = 0; g_ckpt_started && !__atomic_load_n(&g_ckpt_tid, __ATOMIC_ACQUIRE) && n < 2000; n++)
		nanosleep(&ts, NULL);
	tid = __atomic_load_n(&g_ckpt_tid, __ATOMIC_ACQUIRE);
	if (!tid || tid == (int)syscall(SYS_gettid))
		return;
	syscall(SYS_futex, &g_ckpt_quit, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	for (int n = 0; syscall(SYS_tgkill, g_pid, tid, 0) == 0 && n < 2000; n++)
		nanosleep(&ts, NULL);
	errno = e;
}
