//go:build ignore

/* control.c: the run-time control channel of weave trace, weave snapshot
   and weave mark: a thread of the runtime's that alone receives and runs
   the requests, so that no thread of the program ever takes a signal or
   runs a handler for them.

   Why a thread. A signal (the channel until this file) cuts short sleep,
   nanosleep, poll, select, epoll_wait and pthread_cond_timedwait in the
   thread that takes it, whatever SA_RESTART says, and many programs take
   that for an error. Nothing but a thread can answer a process that idles
   in such a call without disturbing it. The thread, "weave-ctl" (`ps -L`
   shows the name), is created when the program sets up its second thread
   (WEAVE_CONTROL=auto, the default) or by the constructor
   (WEAVE_CONTROL=1), with every signal blocked (the program's signals, process-directed ones included, never
   land in it), a 256 KiB stack without a guard page, and in_rt set for
   life: it is never set up, so it is not one of the program's threads
   for the runtime (not in g_nthreads: __weave_solo and the advice's
   one-thread fast paths stay; no CPU timer; not in the profile), and the
   glibc calloc of its TLS vector in pthread_create is not recorded. What
   it would cost a single-threaded program: glibc, once a process has two
   threads, locks stdio and malloc's arena for good (getc 2.1x its
   instructions: docs/tracepoints.md); hence auto, where only a program
   with threads of its own, already in those paths, gets one.
   WEAVE_CONTROL=0 creates no thread and no socket.

   The channel. A SOCK_SEQPACKET unix socket bound at
   /tmp/.weave-UID/PID.sock (the directory created 0700 if missing, used
   only if this user owns it and no one else can write it; bound through
   /proc/self/fd, so no link swapped in is followed), close-on-exec, its
   descriptor moved near the top of the limit (fd_high), the thread
   waiting in poll (a blocked accept holds the lowest free number): the
   program's descriptors are numbered as unwoven. If the program closes
   it, the thread binds a new one (fd_ident). The
   kernel lets only the directory's user (and root) connect; the thread
   answers only a peer of this process's effective user (SO_PEERCRED).
   A socket left by a process that died with the same pid (nobody
   listening: ECONNREFUSED) is replaced. One request a connection, one
   message each way: "trace PATTERNS", "off", "snapshot", "mark LABEL";
   the answer "ok ..." or "error ...". A malformed request is answered
   with an error and gets one line on stderr. No channel in a secure
   (AT_SECURE) process.

   Safety. Each request runs in the thread, under g_lock like any other
   runtime entry, so never in a signal handler nor in the middle of the
   runtime's own work on that state: tp_set and mark_set as a program
   thread's call would; a snapshot is rt_write's provisional profile, as
   a checkpoint writes it (checkpoint.c), reading counts that running
   threads may add to meanwhile. An idle process answers at once.

   fork: the child inherits the socket but not the thread; it closes the
   parent's descriptors (the listening socket, a connection being
   answered) and opens a channel of its own, bound at its own pid, before
   fork returns (glibc has reset its locks by then: malloc's, the
   loader's); none under ThreadSanitizer, which forbids that thread.
   exec: the socket is unlinked first and closed by the exec
   (close-on-exec); an exec that fails binds it again. exit: the final
   profile unlinks it (and the crash handlers); requests already queued
   are refused. A process killed otherwise leaves it: the next command
   removes the sockets of processes that are gone. */

#include "internal.h"

#include <linux/futex.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>

/* ThreadSanitizer refuses a thread started in the child of a
   multi-threaded fork (it makes the process exit): such a child has no
   channel. */
#if defined(__SANITIZE_THREAD__)
#define CTL_FORK_CHILD 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CTL_FORK_CHILD 0
#endif
#endif
#ifndef CTL_FORK_CHILD
#define CTL_FORK_CHILD 1
#endif

#define CTL_REQ_MAX 4200
#define CTL_STACK (256u << 10)

/* The channel: the listening socket (-1: none), the connection being
   answered (-1: none), the pid that bound it, its path, whether the
   final profile is being written. fd, conn and pid atomic: pid is stored
   (release) once path is written, and cleared before path is, so that
   the exit and exec paths, in whatever thread, read a whole path or
   none while another thread opens the channel. */
static struct {
	int fd, conn, pid, closing, quit;
	u64 id; /* fd's identity (fd_ident) when the thread took it */
	char path[64];
} g_ctl = {-1, -1, 0, 0, 0, 0, {0}};

/* The control directory, /tmp/.weave-UID, created if missing, opened if
   it is a directory owned by this process's user that no one else can
   write. */
static int ctl_dir(void)
{
	struct sbuf p = {.n = 0};
	struct stat st;
	int fd;
	sb_str(&p, "/tmp/.weave-");
	sb_u64(&p, (u64)geteuid());
	if (mkdir(p.s, 0700) != 0 && errno != EEXIST)
		return -1;
	fd = open(p.s, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (rt_fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Whether the socket at a is stale: nobody listens on it. */
static int ctl_stale(const struct sockaddr_un *a)
{
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), r;
	if (s < 0)
		return 0;
	r = connect(s, (const struct sockaddr *)a, sizeof *a) != 0 && errno == ECONNREFUSED;
	close(s);
	return r;
}

/* Binds and listens on this process's socket; sets g_ctl.path. *arg:
   the socket or -1. Its frame is 12 KiB: ctl_listen runs it on a stack
   of the runtime's. */
static void ctl_listen_here(void *arg)
{
	struct sockaddr_un a;
	struct sbuf name = {.n = 0}, p = {.n = 0};
	int dir = ctl_dir(), fd = -1;
	*(int *)arg = -1;
	if (dir < 0)
		return;
	sb_u64(&name, (u64)getpid());
	sb_str(&name, ".sock");
	sb_str(&p, "/proc/self/fd/");
	sb_u64(&p, (u64)dir);
	sb_str(&p, "/");
	sb_str(&p, name.s);
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	if (p.n < sizeof a.sun_path)
		fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd >= 0) {
		memcpy(a.sun_path, p.s, p.n + 1);
		if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 &&
		    !(errno == EADDRINUSE && ctl_stale(&a) && unlinkat(dir, name.s, 0) == 0 &&
		      bind(fd, (struct sockaddr *)&a, sizeof a) == 0)) {
			close(fd);
			fd = -1;
		} else if (listen(fd, 16) != 0) {
			unlinkat(dir, name.s, 0);
			close(fd);
			fd = -1;
		}
	}
	close(dir);
	if (fd >= 0) {
		fd = fd_high(fd);
		__atomic_store_n(&g_ctl.id, fd_ident(fd), __ATOMIC_RELEASE);
		p.n = 0;
		sb_str(&p, "/tmp/.weave-");
		sb_u64(&p, (u64)geteuid());
		sb_str(&p, "/");
		sb_str(&p, name.s);
		if (p.n < sizeof g_ctl.path) {
			memcpy(g_ctl.path, p.s, p.n + 1);
			__atomic_store_n(&g_ctl.pid, (int)getpid(), __ATOMIC_RELEASE);
		}
	}
	*(int *)arg = fd;
}

/* ctl_listen_here, on a stack of the runtime's: the thread opening the
   channel is the program's second (WEAVE_CONTROL=auto), whose stack may
   be 16 KiB, or one that forked or whose exec failed. */
static int ctl_listen(void)
{
	int fd = -1;
	uintptr_t sp;
	if (!rt_on_stack(ctl_listen_here, &fd, &sp))
		ctl_listen_here(&fd);
	return fd;
}

/* A snapshot: the profile now, as a provisional one. Waits a while for a
   checkpoint being written. */
RT_RARE static void ctl_snapshot(struct sbuf *a)
{
	struct rt_local *l = &rt_local;
	int ok = 0;
	if (out_stream()) {
		sb_str(a, "error the profile goes into a stream (WEAVE_OUT): a snapshot would be a second profile in it");
		return;
	}
	for (int i = 0; i < 400 && !ok; i++) {
		int st = __atomic_load_n(&g_finished, __ATOMIC_ACQUIRE);
		if (st == FIN_FINAL)
			break;
		if (st == FIN_PROV_BUSY) {
			struct timespec ts = {0, 5000000};
			nanosleep(&ts, NULL);
			continue;
		}
		l->in_rt = 0; /* so that rt_write waits for g_lock */
		ok = rt_write(0, 1, "snapshot", 0, LOCK_WAIT, 1);
		l->in_rt = 1;
		if (!ok && __atomic_load_n(&g_finished, __ATOMIC_ACQUIRE) != FIN_PROV_BUSY)
			break;
	}
	if (ok) {
		sb_str(a, "ok snapshot ");
		sb_str(a, g_prev_path);
	} else if (__atomic_load_n(&g_finished, __ATOMIC_ACQUIRE) == FIN_FINAL) {
		sb_str(a, "error the process is exiting");
	} else if (g_cfg_out_set && !g_cfg_out[0]) {
		sb_str(a, "error the process writes no profile (WEAVE_OUT is empty, or a secure process)");
	} else {
		sb_str(a, "error the profile could not be written");
	}
}

/* Runs request req (NUL-terminated, trailing space removed); the answer
   goes to a. */
RT_RARE static void ctl_run(char *req, struct sbuf *a)
{
	const char *bad = NULL;
	if (__atomic_load_n(&g_ctl.closing, __ATOMIC_ACQUIRE)) {
		sb_str(a, "error the process is exiting");
		return;
	}
	if (strcmp(req, "snapshot") == 0) {
		ctl_snapshot(a);
		return;
	}
	pthread_mutex_lock(&g_lock);
	if (strncmp(req, "trace ", 6) == 0 && !(bad = tp_check(req + 6))) {
		if (tp_unmatched(req + 6, a))
			goto out; /* not malformed: nothing to say on stderr */
		tp_set(req + 6);
		sb_str(a, "ok tracing ");
		sb_str(a, req + 6);
		tp_unframed(req + 6, a);
	} else if (strcmp(req, "off") == 0) {
		tp_set("");
		sb_str(a, "ok tracing off");
	} else if (strncmp(req, "mark ", 5) == 0 && req[5]) {
		u32 gen = mark_set(req + 5, NULL); /* runtime/marks.c */
		sb_str(a, gen ? "ok mark " : "error too many marks: not set");
		if (gen)
			sb_u64(a, gen);
	} else {
		if (!bad)
			bad = "unknown request";
		sb_str(a, "error ");
		sb_str(a, bad);
	}
out:
	pthread_mutex_unlock(&g_lock);
	if (bad)
		tp_say("malformed request ignored: ", bad);
}

/* Answers one connection c. */
RT_RARE static void ctl_serve(int c)
{
	char req[CTL_REQ_MAX + 1];
	struct sbuf a = {.n = 0};
	struct ucred cr;
	socklen_t k = sizeof cr;
	struct timeval tv = {2, 0};
	ssize_t n;
	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &k) != 0 || cr.uid != geteuid()) {
		static const char no[] = "error only the process's user may control it";
		(void)!send(c, no, sizeof no - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		return;
	}
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	n = recv(c, req, CTL_REQ_MAX, MSG_TRUNC);
	if (n <= 0)
		return; /* nothing came (ctl_wake's connection) */
	if (n >= CTL_REQ_MAX) {
		tp_say("malformed request ignored: ", "request too long");
		sb_str(&a, "error request too long");
	} else {
		req[n] = 0;
		while (n > 0 && (req[n - 1] == '\n' || req[n - 1] == ' '))
			req[--n] = 0;
		ctl_run(req, &a);
	}
	(void)!send(c, a.s, a.n, MSG_NOSIGNAL);
}

static void *ctl_main(void *arg)
{
	struct rt_local *l = &rt_local;
	int cur = -1;
	u64 id = 0; /* cur's identity, also in g_ctl.id */
	(void)arg;
	l->in_rt = 1; /* never set up: not a thread of the program's */
	prctl(PR_SET_NAME, "weave-ctl", 0, 0, 0);
	__atomic_store_n(&g_ctl_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	syscall(SYS_futex, &g_ctl_tid, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	for (;;) {
		int fd = __atomic_load_n(&g_ctl.fd, __ATOMIC_ACQUIRE), c;
		if (fd != cur) { /* the first, or a failed exec bound a new one */
			if (cur >= 0 && fd_ident(cur) == id)
				close(cur);
			cur = fd;
			id = fd_ident(fd);
			__atomic_store_n(&g_ctl.id, id, __ATOMIC_RELEASE);
		}
		if (fd < 0)
			return NULL;
		if (__atomic_load_n(&g_ctl.quit, __ATOMIC_ACQUIRE))
			return NULL; /* ctl_stop */
		if (__atomic_load_n(&g_orphaned, __ATOMIC_ACQUIRE))
			goto orphaned;
		if (!id || fd_ident(fd) != id) {
			/* The program closed the descriptor, maybe reusing its
			   number: never accept on it; a socket of its own again,
			   after a while (a daemon closes every descriptor, then
			   opens its own: the new socket's transient low numbers
			   must not come between). */
			struct timespec ts = {0, 100000000};
			int nfd;
			nanosleep(&ts, NULL);
			nfd = __atomic_load_n(&g_ctl.closing, __ATOMIC_ACQUIRE) ? -1 : ctl_listen();
			if (nfd < 0)
				ctl_exit();
			__atomic_store_n(&g_ctl.fd, nfd, __ATOMIC_RELEASE);
			cur = nfd;
			id = fd_ident(nfd);
			__atomic_store_n(&g_ctl.id, id, __ATOMIC_RELEASE);
			continue;
		}
		/* Blocked in poll, not accept: a blocked accept holds the lowest
		   free descriptor number, the one the program's next open
		   would have had. */
		{
			struct pollfd pf = {fd, POLLIN, 0};
			struct timespec ts = {0, 50000000};
			int r = poll(&pf, 1, (int)rt_orphan_wait_ms(RT_MAIN));
			if (r == 0 && rt_orphaned() == RT_ORPHANED)
				goto orphaned;
			if (r <= 0)
				continue;
			if (!(pf.revents & POLLIN)) {
				nanosleep(&ts, NULL); /* closed (POLLNVAL): seen above */
				continue;
			}
		}
		c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0) {
			struct timespec ts = {0, 50000000};
			if (errno != EINTR && errno != ECONNABORTED && errno != EAGAIN)
				nanosleep(&ts, NULL);
			continue;
		}
		c = fd_high(c);
		__atomic_store_n(&g_ctl.conn, c, __ATOMIC_RELEASE);
		ctl_serve(c);
		__atomic_store_n(&g_ctl.conn, -1, __ATOMIC_RELEASE);
		close(c);
	}
orphaned: /* orphan.c */
	ctl_exit();
	l->in_rt = 0; /* the C library may run exit from here: the program's handlers */
	return NULL;
}

/* Wakes the thread from its poll (rt_main_exit): a connection of the
   process's own, closed at once. */
RT_RARE static void ctl_wake(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int e = errno, s;
	if (__atomic_load_n(&g_ctl.pid, __ATOMIC_ACQUIRE) != g_pid || __atomic_load_n(&g_ctl.closing, __ATOMIC_ACQUIRE))
		return;
	memcpy(a.sun_path, g_ctl.path, sizeof g_ctl.path < sizeof a.sun_path ? sizeof g_ctl.path : sizeof a.sun_path);
	a.sun_path[sizeof a.sun_path - 1] = 0;
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s >= 0) {
		(void)!connect(s, (struct sockaddr *)&a, sizeof a);
		close(s);
	}
	errno = e;
}

/* When the channel opens (WEAVE_CONTROL): never; at start-up; or, the
   default, once the program has a second thread. */
enum { CTL_OFF, CTL_ON, CTL_AUTO };
static int g_ctl_mode = CTL_OFF; /* set by the constructor */
static int g_ctl_open;           /* atomic: the channel was opened in this process */

static void ctl_open(void);

/* The channel's mode that WEAVE_CONTROL asks for: CTL_AUTO unless set. */
static int ctl_mode_env(void)
{
	const char *s = rt_env("WEAVE_CONTROL");
	return !s || !*s || strcmp(s, "auto") == 0 ? CTL_AUTO : strcmp(s, "0") == 0 ? CTL_OFF : CTL_ON;
}

/* Unless WEAVE_CONTROL=0, grows the descriptor table for the channel
   (fd_high_reserve) from rt_global_init, before the runtime starts a
   thread of its own (the sampler, time_global_init): grown after it, the
   kernel made the constructor wait 6-20 ms for an RCU grace period (the
   sqlite3 shell running "select 1;": 15.6 ms a run against 3.3 ms with
   WEAVE_CONTROL=0, 0.7 ms plain), which a run of any length pays in wall
   time. in_rt set. */
static void ctl_reserve(void)
{
	if (!g_secure && rt_is_active() && ctl_mode_env() != CTL_OFF)
		fd_high_reserve();
}

/* The constructor: reads WEAVE_CONTROL, opens the channel if asked to at
   start-up. in_rt set. */
static void ctl_start(void)
{
	if (g_secure || !rt_is_active())
		return;
	if (rt_env("WEAVE_CONTROL_SIGNAL") && !g_forked)
		tp_say("WEAVE_CONTROL_SIGNAL is gone: requests come through a thread of weave's, "
		       "no signal is used (WEAVE_CONTROL=0 turns run-time control off)", NULL);
	g_ctl_mode = ctl_mode_env();
	/* Under a seccomp filter from before the start (a sandbox's, a
	   container's), a clone may kill the process: the thread waits for
	   the program's second, as under auto, whose clone it allowed. */
	if (g_ctl_mode == CTL_ON && rt_under_seccomp())
		g_ctl_mode = CTL_AUTO;
	if (g_ctl_mode == CTL_ON)
		ctl_open();
}

/* A thread other than the first was set up (thread_setup, g_lock not
   held, in_rt set): under WEAVE_CONTROL=auto the channel opens now. A
   single-threaded process gets no thread of weave's: a second thread
   would switch glibc to its multi-thread paths for good (locked stdio:
   getc twice the instructions; malloc's arena locks), a cost the program
   pays whether or not anyone ever sends a request. Once the program has
   threads of its own, glibc is in those paths anyway. Not once the
   program set itself a seccomp filter (g_filter_set), which may kill
   the process for the channel's socket: a sandboxed worker that then
   started a thread was ended by SIGSYS (TestSandboxSeccompSyscall). */
static void ctl_threads(void)
{
	if (g_ctl_mode == CTL_AUTO && !__atomic_load_n(&g_ctl_open, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&g_filter_set, __ATOMIC_ACQUIRE) &&
	    !__atomic_exchange_n(&g_ctl_open, 1, __ATOMIC_ACQ_REL))
		ctl_open();
}

/* Opens the channel and starts its thread. in_rt set. */
static void ctl_open(void)
{
	pthread_attr_t at;
	pthread_t th;
	sigset_t all, old;
	int e = errno, ok, c = rt_nocancel(); /* on a thread of the program's */
	__atomic_store_n(&g_ctl_open, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&g_ctl.fd, ctl_listen(), __ATOMIC_RELEASE);
	if (g_ctl.fd < 0 || pthread_attr_init(&at) != 0)
		goto fail;
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, CTL_STACK);
	/* No guard page: the thread's depth is bounded (the profile writer,
	   as checkpoint.c's thread runs it), and so the maps tables count its
	   stack with the runtime's other maps (anon), not among the program's
	   thread stacks (maps with a guard page below). */
	pthread_attr_setguardsize(&at, 0);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ok = pthread_create(&th, &at, ctl_main, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	if (ok) {
		/* Its tid before going on: a leak scan at a quick exit (a fork
		   child's _exit) must not wait for it (it takes no signal). */
		struct timespec ts = {0, 100000000};
		while (!__atomic_load_n(&g_ctl_tid, __ATOMIC_ACQUIRE) &&
		       syscall(SYS_futex, &g_ctl_tid, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0) == 0)
			;
		rt_cancel_restore(c);
		errno = e;
		return;
	}
fail:
	if (g_ctl.fd >= 0) {
		unlink(g_ctl.path);
		close(g_ctl.fd);
	}
	g_ctl.fd = -1;
	__atomic_store_n(&g_ctl.pid, 0, __ATOMIC_RELEASE);
	g_ctl.path[0] = 0;
	rt_cancel_restore(c);
	errno = e;
}

/* The final profile: no request is taken from here on. */
RT_RARE static void ctl_exit(void)
{
	int e = errno;
	__atomic_store_n(&g_ctl.closing, 1, __ATOMIC_RELEASE);
	if (__atomic_exchange_n(&g_ctl.pid, 0, __ATOMIC_ACQ_REL) == (int)getpid())
		unlink(g_ctl.path);
	errno = e;
}

/* Ends the thread and waits (up to two seconds) until its task is gone:
   a woven shared object's final profile, before a dlclose can unmap this
   copy's code, which the thread runs until it has returned from ctl_main
   (its poll wakes every second, orphan.c). The socket is shut down (the
   channel is closed from the final profile on), which wakes its poll. */
RT_RARE static void ctl_stop(void)
{
	int tid = __atomic_load_n(&g_ctl_tid, __ATOMIC_ACQUIRE), fd = __atomic_load_n(&g_ctl.fd, __ATOMIC_ACQUIRE), e = errno;
	struct timespec ts = {0, 1000000};
	if (!tid || tid == (int)syscall(SYS_gettid))
		return;
	__atomic_store_n(&g_ctl.quit, 1, __ATOMIC_RELEASE);
	if (fd >= 0 && fd_ident(fd) == __atomic_load_n(&g_ctl.id, __ATOMIC_ACQUIRE))
		shutdown(fd, SHUT_RDWR);
	for (int n = 0; syscall(SYS_tgkill, g_pid, tid, 0) == 0 && n < 2000; n++)
		nanosleep(&ts, NULL);
	errno = e;
}

/* The child of fork (rt_fork_child, locks released, in_rt set): the
   parent's descriptors closed, a channel of its own. */
RT_RARE static void ctl_fork_child(void)
{
	int c = __atomic_exchange_n(&g_ctl.conn, -1, __ATOMIC_ACQ_REL), e = errno;
	if (c >= 0)
		close(c);
	if (g_ctl.fd >= 0 && fd_ident(g_ctl.fd) == g_ctl.id)
		close(g_ctl.fd); /* unless the program closed it and reused the number */
	g_ctl.fd = -1;
	__atomic_store_n(&g_ctl.pid, 0, __ATOMIC_RELEASE);
	g_ctl.path[0] = 0;
	g_ctl.closing = 0;
	__atomic_store_n(&g_ctl_tid, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&g_ctl_open, 0, __ATOMIC_RELEASE);
	errno = e;
	/* The child has one thread: under auto, its channel opens with its
	   second, as the parent's did. */
	if (CTL_FORK_CHILD && g_ctl_mode == CTL_ON)
		ctl_open();
}

/* Before exec: unlinks the socket (the exec closes it). Returns whether
   it did. Not in a vfork child (another pid: the parent's socket). */
RT_RARE static int ctl_exec_before(void)
{
	int e = errno, r = 0;
	if (g_ctl.fd >= 0 && __atomic_load_n(&g_ctl.pid, __ATOMIC_ACQUIRE) == (int)getpid() &&
	    !__atomic_load_n(&g_ctl.closing, __ATOMIC_ACQUIRE))
		r = unlink(g_ctl.path) == 0;
	errno = e;
	return r;
}

/* The exec failed: binds the socket again; the thread takes the new one
   (shutdown wakes its accept on the old one, which it then closes). */
RT_RARE static void ctl_exec_failed(int unlinked)
{
	int e = errno, fd, old, c;
	if (!unlinked || __atomic_load_n(&g_ctl.pid, __ATOMIC_ACQUIRE) != (int)getpid())
		return;
	c = rt_nocancel();
	fd = ctl_listen();
	rt_cancel_restore(c);
	if (fd >= 0) {
		old = __atomic_exchange_n(&g_ctl.fd, fd, __ATOMIC_ACQ_REL);
		shutdown(old, SHUT_RDWR);
	}
	errno = e;
}
