//go:build ignore

/* safefile.c: how the runtime creates files (profiles, and whatever it
   writes later): see struct safefile. */

#include "internal.h"

/* Safe files
   ----------
   Every file the runtime creates goes through struct safefile. The runtime
   writes with the program's privileges, often into a directory others can
   write to, so: the directory is opened once (O_PATH) and every step is
   relative to it; the data goes to a temporary file with an unpredictable
   name (getrandom), created with O_CREAT|O_EXCL|O_NOFOLLOW and mode 0600
   (so it never truncates or follows anything planted there); only when
   complete does it get the umask's mode and its final name, by linkat
   (which replaces nothing) or, to replace this process's own earlier file,
   by renameat after checking that the name is a regular file the process
   owns and weave wrote (never a symbolic link, never another user's file,
   never one that is not a profile or a trace: replaceable). Where the
   file system allows, the temporary file has no name at all until then
   (O_TMPFILE, named through /proc/thread-self/fd): a process killed mid-write
   (SIGKILL, a crash while tracing) leaves nothing behind. */
struct safefile {
	int dir;      /* the directory, opened once */
	int fd;       /* the temporary file */
	char tmp[40]; /* its name; "" while it has none (O_TMPFILE) */
};

/* Fills b with n unpredictable bytes (getrandom; /dev/urandom; else the
   clock and addresses, which O_EXCL still keeps safe, only guessable). */
RT_RARE static void random_bytes(unsigned char *b, wsize n)
{
	wsize got = 0;
	while (got < n) {
		ssize_t k = getrandom(b + got, n - got, GRND_NONBLOCK);
		if (k <= 0)
			break;
		got += (wsize)k;
	}
	if (got < n) {
		int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		ssize_t k = fd < 0 ? -1 : read(fd, b + got, n - got);
		if (fd >= 0)
			close(fd);
		if (k > 0)
			got += (wsize)k;
	}
	for (u64 x = now_ns() ^ (u64)(uintptr_t)b ^ (u64)getpid() << 32; got < n; got++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		b[got] = (unsigned char)(x >> 56);
	}
}

/* Writes 16 unpredictable hex digits at c (no terminator): the part of a
   name nobody can guess. */
RT_RARE static void random_hex(char *c)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char r[8];
	random_bytes(r, sizeof r);
	for (int i = 0; i < 8; i++) {
		*c++ = hex[r[i] >> 4];
		*c++ = hex[r[i] & 15];
	}
}

/* The mode a file created with 0666 would get: the process's umask from
   /proc/self/status (umask(2) cannot read it without setting it, which
   would race with the program's threads); 022 if unreadable. Never
   writable by others, whatever the umask: a daemon sets umask(0) (nginx's
   master), and a profile in a shared directory (/tmp) anyone could
   change would not be the program's. */
RT_RARE static mode_t umask_mode(void)
{
	u64 m = rt_status_number("\nUmask:", 8, 022);
	return 0666 & ~(mode_t)m & ~(mode_t)S_IWOTH;
}

/* The last component of path. */
RT_RARE static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* f->tmp = .weave-<16 unpredictable hex digits>.tmp. */
RT_RARE static void tmp_name(struct safefile *f)
{
	memcpy(f->tmp, ".weave-", 7);
	random_hex(f->tmp + 7);
	memcpy(f->tmp + 23, ".tmp", 5);
}

/* Creates a temporary file of a fresh unpredictable name in f's
   directory (f->tmp); returns its descriptor, or -1 with errno set. */
RT_RARE static int tmp_create(struct safefile *f)
{
	int fd = -1;
	for (int try = 0; try < 64; try++) {
		tmp_name(f);
		fd = openat(f->dir, f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	return fd;
}

/* Opens path's directory and creates a fresh temporary file in it.
   Returns 0, or -1 with errno set. */
RT_RARE static int safefile_open(struct safefile *f, const char *path)
{
	struct sbuf dir = {.n = 0};
	const char *base = base_name(path);
	f->fd = -1;
	if (base == path)
		sb_str(&dir, ".");
	else
		sb_mem(&dir, path, base - path > 1 ? (wsize)(base - 1 - path) : 1);
	f->dir = open(dir.s, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (f->dir < 0)
		return -1;
	f->tmp[0] = 0;
	/* Unnamed where safefile_name can name it later (/proc mounted;
	   else it would be copied). O_RDWR: copied if it cannot. */
	if (access("/proc/thread-self/fd", X_OK) == 0 || access("/proc/self/fd", X_OK) == 0) {
		f->fd = openat(f->dir, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (f->fd >= 0)
			return 0;
	}
	f->fd = tmp_create(f);
	if (f->fd < 0) {
		int e = errno;
		close(f->dir);
		errno = e;
		return -1;
	}
	return 0;
}

/* Moves fd, a descriptor the runtime keeps open, to a number near the
   top of the descriptor limit (as bash keeps its script's), so that the
   program's own are numbered as unwoven (its next open gets the number it
   would have); returns it, or fd where that fails. errno kept. */
static int fd_high(int fd)
{
	struct rlimit r;
	int hi, e = errno;
	if (fd < 0 || getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur < 256)
		return fd;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, (int)((r.rlim_cur > 1024 ? 1024 : r.rlim_cur) - 64));
	if (hi >= 0) {
		close(fd);
		fd = hi;
	}
	errno = e;
	return fd;
}

/* Grows the descriptor table to hold fd_high's numbers now, while the
   process has (as a rule) one thread: grown once threads share it, the
   kernel waits for an RCU grace period (10-26 ms measured) in the thread
   that grows it, which under WEAVE_CONTROL=auto is the program's second
   thread opening the channel. A table never shrinks. errno kept. */
static void fd_high_reserve(void)
{
	int e = errno, fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		close(fd_high(fd));
	errno = e;
}

/* A descriptor's identity (0 if it is closed): the program may close one
   of the runtime's (a daemon's closefrom) and reuse its number. */
static u64 fd_ident(int fd)
{
	struct stat st;
	int e = errno;
	u64 id = fd >= 0 && rt_fstat(fd, &st) == 0 ? (u64)st.st_ino ^ (u64)st.st_dev << 48 : 0;
	errno = e;
	return id;
}

static int tmp_copy(struct safefile *f);

/* Links the unnamed file fd into f's directory as f->tmp, through
   /proc/thread-self (/proc/self/fd is gone once the main thread has
   called pthread_exit), /proc/self (before Linux 3.17), or AT_EMPTY_PATH
   (privileged). */
RT_RARE static int tmp_link(struct safefile *f)
{
	static const char *const via[] = {"/proc/thread-self/fd/", "/proc/self/fd/"};
	char num[12], p[40];
	int k = 0;
	for (unsigned v = (unsigned)f->fd; k == 0 || v; v /= 10)
		num[k++] = (char)('0' + v % 10);
	for (unsigned i = 0; i < sizeof via / sizeof via[0]; i++) {
		wsize n = strlen(via[i]);
		memcpy(p, via[i], n);
		for (int j = k; j > 0; j--)
			p[n++] = num[j - 1];
		p[n] = 0;
		if (linkat(AT_FDCWD, p, f->dir, f->tmp, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		if (errno == EEXIST)
			return -1; /* the name is taken: another one */
	}
	return linkat(f->fd, "", f->dir, f->tmp, AT_EMPTY_PATH);
}

/* Gives an unnamed temporary file (O_TMPFILE) a fresh unpredictable name
   in its directory, as safefile_open would have; where no link can be
   made, its content goes to a named temporary file, which replaces it.
   Returns 0, or -1 with errno set. */
RT_RARE static int safefile_name(struct safefile *f)
{
	for (int try = 0; try < 64; try++) {
		tmp_name(f);
		if (tmp_link(f) == 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	return tmp_copy(f);
}

/* safefile_name's way out: f's content copied to a named temporary file,
   which takes its place. Out of line: its buffer is on the stack only
   then. */
RT_RARE static __attribute__((noinline)) int tmp_copy(struct safefile *f)
{
	char b[8192];
	struct out o = {.buf = b, .cap = sizeof b};
	off_t at = 0;
	ssize_t n = 0;
	if ((o.fd = tmp_create(f)) < 0) {
		f->tmp[0] = 0;
		return -1;
	}
	while (!o.err && (n = pread(f->fd, b, sizeof b, at)) > 0) {
		o.len = (wsize)n;
		out_flush(&o);
		at += n;
	}
	if (o.err || n != 0) {
		int e = o.err ? o.err : errno;
		close(o.fd);
		unlinkat(f->dir, f->tmp, 0);
		f->tmp[0] = 0;
		errno = e;
		return -1;
	}
	close(f->fd);
	f->fd = o.fd;
	return 0;
}

/* Removes the temporary file and closes everything. */
RT_RARE static void safefile_abort(struct safefile *f)
{
	int e = errno;
	if (f->fd >= 0)
		close(f->fd);
	if (f->tmp[0])
		unlinkat(f->dir, f->tmp, 0);
	close(f->dir);
	errno = e;
}

/* Whether name in dir may be replaced: absent, or a regular file this
   process's user owns that is weave's: empty, a profile or a trace (its
   first bytes "weave profile " or "WVTR", or a start of them). Never the
   user's source or program that WEAVE_OUT=prog.c named by mistake. */
RT_RARE static int replaceable(int dir, const char *name)
{
	static const char prof[] = "weave profile ", trace[] = "WVTR";
	struct stat st;
	char b[sizeof prof - 1];
	ssize_t n;
	int fd;
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
		return 0;
	fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, b, sizeof b);
	close(fd);
	return n == 0 || (n > 0 && (memcmp(b, prof, (wsize)n) == 0 ||
				    memcmp(b, trace, (wsize)(n < 4 ? n : 4)) == 0));
}

/* renameat, by syscall() where the system call is there by that name
   (x86-64; glibc's renameat makes the same call): the C library's
   renameat lies in a 64 KiB window of its code (the kernel maps a
   file's pages 64 KiB around each fault) that a program which never
   prints touches for nothing else, while syscall() is the runtime's
   from its start (gettid, getcwd). threads-1, exact RSS at its exit:
   -64 KiB. */
RT_RARE static int rt_renameat(int od, const char *o, int nd, const char *n)
{
#ifdef SYS_renameat
	return (int)syscall(SYS_renameat, od, o, nd, n);
#else
	return renameat(od, o, nd, n);
#endif
}

/* Gives the complete temporary file the name in path (same directory as
   safefile_open's): by renameat when replace and the name is replaceable,
   else by linkat to the first free one of path, path.1.prof, path.2.prof...
   (path.N without the .prof suffix); path gets the name used. Closes
   everything. Returns 0, or -1 with errno set. */
RT_RARE static int safefile_commit(struct safefile *f, struct sbuf *path, int replace)
{
	struct sbuf orig = {.n = 0};
	int e;
	if (!f->tmp[0] && safefile_name(f) != 0)
		goto fail;
	fchmod(f->fd, umask_mode());
	e = close(f->fd) != 0 ? errno : 0;
	f->fd = -1;
	if (e) {
		errno = e;
		goto fail;
	}
	if (replace && replaceable(f->dir, base_name(path->s))) {
		if (rt_renameat(f->dir, f->tmp, f->dir, base_name(path->s)) != 0)
			goto fail;
		close(f->dir);
		return 0;
	}
	sb_str(&orig, path->s);
	for (u32 n = 1;; n++) {
		const char *name = base_name(path->s);
		if (linkat(f->dir, f->tmp, f->dir, name, 0) == 0)
			break;
		if (errno != EEXIST) {
			/* No hard links here: reserve the name, then rename. */
			int fd = openat(f->dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (fd >= 0) {
				close(fd);
				if (rt_renameat(f->dir, f->tmp, f->dir, name) == 0) {
					close(f->dir);
					return 0;
				}
				unlinkat(f->dir, name, 0);
				goto fail;
			}
			if (errno != EEXIST)
				goto fail;
		}
		if (n > 1000) {
			errno = EEXIST;
			goto fail;
		}
		sb_numbered(path, &orig, n);
	}
	safefile_abort(f);
	return 0;
fail:
	safefile_abort(f);
	return -1;
}

/* SIGXFSZ around the runtime's writes: a program that limits the size of
   the files it writes (RLIMIT_FSIZE) would be killed by the signal a
   write of the profile or of the summary past the limit sends, whose
   default action ends the process, before its own stdout was flushed
   (exit status 153 where it exited 6). The writer's thread blocks it,
   so that the write fails (EFBIG) and says so, and takes back one the
   runtime's writes left pending (not one that was pending before).
   Returns the mask to restore, in *old; -1: nothing blocked. */
RT_RARE static int xfsz_hold(sigset_t *old)
{
	sigset_t s, p;
	int e = errno, was = -1;
	sigemptyset(&s);
	sigaddset(&s, SIGXFSZ);
	if (pthread_sigmask(SIG_BLOCK, &s, old) == 0)
		was = sigpending(&p) == 0 && sigismember(&p, SIGXFSZ);
	errno = e;
	return was;
}

RT_RARE static void xfsz_release(const sigset_t *old, int was)
{
	sigset_t s, p;
	struct timespec zero = {0, 0};
	int e = errno;
	if (was < 0)
		return;
	sigemptyset(&s);
	sigaddset(&s, SIGXFSZ);
	if (!was && sigpending(&p) == 0 && sigismember(&p, SIGXFSZ))
		sigtimedwait(&s, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, old, NULL);
	errno = e;
}

/* Descriptors for the writer where the program left none free under its
   RLIMIT_NOFILE (libevent 2.1's listener/error_unlock sets the limit to
   the descriptors it has, to make accept fail): the profile was lost,
   "cannot write profile ...: Too many open files". The soft limit is
   raised by 16 for the writer (the hard one too where the process may:
   CAP_SYS_RESOURCE), then set back. Returns whether it raised it (*old:
   the limits to set back). */
RT_RARE static int fd_room_hold(struct rlimit *old)
{
	struct rlimit r;
	int e = errno, fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), raised = 0;
	if (fd >= 0)
		close(fd);
	else if (errno == EMFILE && getrlimit(RLIMIT_NOFILE, old) == 0 && old->rlim_cur < RLIM_INFINITY - 16) {
		r.rlim_cur = old->rlim_cur + 16;
		r.rlim_max = old->rlim_max >= r.rlim_cur ? old->rlim_max : r.rlim_cur;
		raised = setrlimit(RLIMIT_NOFILE, &r) == 0;
	}
	errno = e;
	return raised;
}

RT_RARE static void fd_room_release(const struct rlimit *old, int raised)
{
	int e = errno;
	if (raised)
		setrlimit(RLIMIT_NOFILE, old);
	errno = e;
}
