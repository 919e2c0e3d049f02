//go:build ignore

/* save.c: the profile's file: its name (WEAVE_OUT: a file, or a
   directory to put one in; else weave-<prog>.<pid>.prof never replacing
   another run's), written through
   a safe file (safefile.c), so a reader never sees a half-written profile
   and nothing planted at its name is followed or overwritten. */

#include "internal.h"

/* The program's name: basename of /proc/self/exe, else of argv[0]
   (/proc's cmdline, else the C library's copy of it: a program that
   chroots has no /proc at exit, and its profile was weave-prog.PID). */
RT_RARE static void prog_name(struct sbuf *b)
{
	char p[4096];
	const char *base;
	/* self/exe first: valgrind answers it with the program's path (its
	   thread-self/exe is the tool's, memcheck-amd64-linux); thread-self
	   when main is a zombie (pthread_exit), whose self/exe and cmdline
	   are unreadable. */
	ssize_t n = readlink("/proc/self/exe", p, sizeof p - 1);
	wsize k;
	if (n <= 0)
		n = readlink("/proc/thread-self/exe", p, sizeof p - 1);
	if (n <= 0) {
		int fd = open("/proc/thread-self/cmdline", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, p, sizeof p - 1);
		if (fd >= 0)
			close(fd);
	}
	if (n <= 0) {
		sb_str(b, program_invocation_short_name && *program_invocation_short_name ? program_invocation_short_name : "prog");
		return;
	}
	p[n] = 0;
	k = strlen(p);
	if (k > 10 && strcmp(p + k - 10, " (deleted)") == 0)
		p[k - 10] = 0;
	base = strrchr(p, '/');
	base = base ? base + 1 : p;
	sb_str(b, *base ? base : "prog");
}

/* Whether the program is a build system's probe: autoconf's conftest,
   CMake's cmTC_* try-compile programs. Built with CC="weave cc" by
   ./configure or cmake, they run in the user's tree; without WEAVE_OUT,
   or with a directory in it, they write no profile and print no summary (no weave-conftest.*.prof
   left behind, nothing added to what configure captures). */
RT_RARE static __attribute__((noinline)) int build_probe(void)
{
	struct sbuf name = {.n = 0};
	prog_name(&name);
	return strcmp(name.s, "conftest") == 0 || strcmp(name.s, "conftest.exe") == 0 ||
	       strncmp(name.s, "cmTC_", 5) == 0;
}

/* Whether path holds a profile this process wrote before an exec (a
   former image of the same pid): its first lines say so. */
RT_RARE static int exec_profile(const char *path)
{
	char want[96], got[96];
	struct sbuf w = {.n = 0};
	/* Never through a link, and never block on a FIFO planted there. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	ssize_t n;
	if (fd < 0)
		return 0;
	sb_str(&w, "weave profile 1\nM pid ");
	sb_u64(&w, (u64)getpid());
	sb_str(&w, "\nM end exec\n");
	memcpy(want, w.s, w.n);
	n = read(fd, got, w.n);
	close(fd);
	return n == (ssize_t)w.n && memcmp(want, got, w.n) == 0;
}

/* Whether path holds the profile of another process of this run: a
   forked parent or child, which wrote it first, or a process that was
   still running when this one started (a test suite's parallel jobs
   given one WEAVE_OUT): its pid is not ours, and it ended after this run
   started (M end_ns; without it, started after), where a profile of an
   earlier run ended before. Such a profile is never replaced. Before,
   only its start counted: of two runs at once, the later writer replaced
   the profile of the one that had started first. */
RT_RARE static int run_profile(const char *path)
{
	char b[8192];
	const char *p, *end;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	ssize_t n;
	u64 pid = 0, start = 0, end_ns = 0, *v;
	if (fd < 0)
		return 0;
	n = read(fd, b, sizeof b - 1);
	close(fd);
	if (n < 16 || memcmp(b, "weave profile ", 14) != 0)
		return 0;
	b[n] = 0;
	end = b + n;
	for (p = b; p && p < end; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *d;
		if (strncmp(p, "M pid ", 6) == 0)
			v = &pid, d = p + 6;
		else if (strncmp(p, "M start_ns ", 11) == 0)
			v = &start, d = p + 11;
		else if (strncmp(p, "M end_ns ", 9) == 0)
			v = &end_ns, d = p + 9;
		else
			continue;
		for (*v = 0; *d >= '0' && *d <= '9'; d++)
			*v = *v * 10 + (u64)(*d - '0');
	}
	return pid && pid != (u64)getpid() && (end_ns ? end_ns : start) >= g_run_start_ns;
}

/* The descriptor that /dev/stdout, /dev/stderr, /dev/stdin, /dev/fd/N or
   /proc/self/fd/N names, or -1. */
RT_RARE static int fd_name(const char *path)
{
	const char *d = NULL;
	int n = 0;
	if (strcmp(path, "/dev/stdin") == 0 || strcmp(path, "/dev/stdout") == 0 || strcmp(path, "/dev/stderr") == 0)
		return path[8] == 'i' ? 0 : path[8] == 'o' ? 1 : 2;
	if (strncmp(path, "/dev/fd/", 8) == 0)
		d = path + 8;
	else if (strncmp(path, "/proc/self/fd/", 14) == 0)
		d = path + 14;
	if (!d || !*d)
		return -1;
	for (; *d >= '0' && *d <= '9' && n < 1 << 20; d++)
		n = n * 10 + (*d - '0');
	return *d ? -1 : n;
}

/* WEAVE_OUT names an existing character device (/dev/null), or a
   descriptor (/dev/stdout: fd_name) that is a stream (a pipe, a terminal,
   a socket): the profile is written into it, as a shell redirection
   would, rather than created beside it (a temporary file in /dev, then
   /dev/null.1, /dev/stdout.1 ...). A descriptor that is a regular file
   (the program may have opened its own at that number) is refused
   (ENOSTR). Only root makes device nodes, so none is planted; a FIFO may
   be, and is treated as any other file that is not ours (safefile.c).
   Returns an open descriptor, -1 when path is none of these (or a link:
   never followed), -2 when it cannot be written (errno set). */
RT_RARE static int device_out(const char *path)
{
	struct stat st;
	int fd, n = fd_name(path);
	if (n >= 0) {
		if (rt_fstat(n, &st) != 0)
			return -2;
		if (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode) && !S_ISSOCK(st.st_mode)) {
			errno = ENOSTR;
			return -2;
		}
		fd = fcntl(n, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -2 : fd;
	}
	if (lstat(path, &st) != 0 || !S_ISCHR(st.st_mode))
		return -1;
	fd = open(path, O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0)
		fcntl(fd, F_SETFL, 0);
	return fd < 0 ? -2 : fd;
}

/* Whether WEAVE_OUT sends the profile into a device or a descriptor
   (device_out): a trace then has no file to go beside. */
RT_RARE static int out_stream(void)
{
	struct stat st;
	return g_cfg_out_set && (fd_name(g_cfg_out) >= 0 || (lstat(g_cfg_out, &st) == 0 && S_ISCHR(st.st_mode)));
}

/* Whether WEAVE_OUT names a directory (%p replaced): it ends in '/', or
   is an existing directory. Each process's profile then gets a name of
   its own there (dir_name): a test suite's hundreds of runs write one
   each, none replaced, nothing left in the build tree. */
RT_RARE static int out_dir(void)
{
	struct sbuf d = {.n = 0};
	struct stat st;
	if (!g_cfg_out_set || !g_cfg_out[0])
		return 0;
	sb_expand(&d, g_cfg_out);
	return d.s[d.n - 1] == '/' || (stat(d.s, &st) == 0 && S_ISDIR(st.st_mode));
}

/* The directory the program was linked in, written into each link's copy
   of the runtime object by `weave cc` (runtime/linkdir.go finds the marker
   this array starts with and writes the absolute path over it). A profile
   goes there by default, as gcov's .gcda files go beside the objects: a
   program run in a directory of data (rsync's test suite lists and diffs
   the trees it ran a helper in) finds no file it did not make there, and a
   test suite's runs in scratch directories leave their profiles in the
   build tree. Unset (the marker) in a runtime built by hand (weave
   runtime), or gone or not the process's to write (a copy installed
   with make install DESTDIR=..., a package built in a builder's tree,
   its build tree removed): the start directory then, as before, not
   $TMPDIR with a line on stderr at every run. */
static const char g_link_dir[4096] __attribute__((used)) = "\177WEAVE-LINK-DIR\177";

/* Appends the link directory and a '/' to path when the program has one
   it can write in and the current directory is another. Returns whether
   it has one. */
RT_RARE static int sb_link_dir(struct sbuf *path)
{
	const char *d = g_link_dir;
	struct stat a;
	int e = errno;
	__asm__("" : "+r"(d)); /* not the initializer: the link's copy */
	if (d[0] != '/' || stat(d, &a) != 0 || !S_ISDIR(a.st_mode) || access(d, W_OK | X_OK) != 0) {
		errno = e;
		return 0;
	}
	sb_dir_unless_cwd(path, d, (u64)a.st_dev, (u64)a.st_ino);
	errno = e;
	return 1;
}

/* p = a path in the directory the profile will be written in (WEAVE_OUT's
   when it names one, else its file's, else the link or start directory), for a
   file made before the profile that goes beside it (the trace file). */
RT_RARE static void out_beside(struct sbuf *p)
{
	if (out_dir()) {
		sb_expand(p, g_cfg_out);
		sb_str(p, "/f");
	} else if (g_cfg_out_set && g_cfg_out[0]) {
		sb_expand(p, g_cfg_out);
	} else {
		if (!sb_link_dir(p))
			sb_start_dir(p, "f");
		sb_str(p, "f");
	}
}

/* path = the WEAVE_OUT directory (made if absent, one level, as mkdir
   does) and weave-<prog>.<pid>.<16 random hex digits>.prof in it: unique,
   and not to be guessed by whoever else writes there. */
static void unique_name(struct sbuf *path);

RT_RARE static void dir_name(struct sbuf *path)
{
	sb_expand(path, g_cfg_out);
	if (path->s[path->n - 1] == '/')
		(void)!mkdir(path->s, 0777);
	else
		sb_str(path, "/");
	unique_name(path);
}

/* Appends weave-<prog>.<pid>.<16 random hex digits>.prof to path. */
RT_RARE static void unique_name(struct sbuf *path)
{
	char r[17] = {0};
	sb_str(path, "weave-");
	prog_name(path);
	sb_str(path, ".");
	sb_u64(path, (u64)getpid());
	random_hex(r);
	sb_str(path, ".");
	sb_str(path, r);
	sb_str(path, ".prof");
}

/* path = weave-<prog>.<pid>.prof in the link directory (sb_link_dir), else
   the start directory: the profile's name without WEAVE_OUT. */
RT_RARE static void default_name(struct sbuf *path)
{
	if (!sb_link_dir(path))
		sb_start_dir(path, "weave-");
	sb_str(path, "weave-");
	prog_name(path);
	sb_str(path, ".");
	sb_u64(path, (u64)getpid());
	sb_str(path, ".prof");
}

static const char *errdesc(int e);

/* When the profile cannot be made where it should go (a read-only or
   another user's directory: a daemon that dropped root, a test run in a
   read-only tree), it goes to $TMPDIR (/tmp) under a name of its own,
   and one line says so: not lost. Returns 0 with f open and path the new
   name, or -1 with errno the first failure's. */
RT_RARE static int open_elsewhere(struct safefile *f, struct sbuf *path)
{
	const char *tmp = rt_env("TMPDIR");
	struct sbuf m = {.n = 0};
	int e = errno;
	if (e != EACCES && e != EPERM && e != EROFS && e != ENOENT)
		return -1;
	sb_str(&m, "cannot write ");
	sb_str(&m, path->s);
	sb_str(&m, ": ");
	sb_str(&m, errdesc(e));
	path->n = 0;
	path->s[0] = 0;
	sb_str(path, tmp && tmp[0] == '/' ? tmp : "/tmp");
	sb_str(path, "/");
	unique_name(path);
	if (safefile_open(f, path->s) != 0) {
		errno = e;
		return -1;
	}
	sb_str(&m, "; the profile goes to ");
	sb_str(&m, path->s);
	sb_str(&m, "\n");
	rt_warn(m.s);
	return 0;
}

/* safefile_commit, with one line when this process's provisional
   profile (a checkpoint's) could not be replaced: written before the
   program changed its user (a daemon that dropped root), it is another
   user's file now. The profile gets a name of its own beside it. */
RT_RARE static int commit_said(struct safefile *f, struct sbuf *path, int replace)
{
	struct sbuf m = {.n = 0};
	int own = replace && g_prev_path[0];
	if (own)
		sb_str(&m, path->s);
	if (safefile_commit(f, path, replace) != 0)
		return -1;
	if (own && strcmp(m.s, path->s) != 0) {
		sb_str(&m, ": this run's provisional profile, not replaced (its owner is no longer this process's user); the profile goes to ");
		sb_str(&m, path->s);
		sb_str(&m, "\n");
		rt_warn(m.s);
	}
	return 0;
}

/* Writes the profile into the file chosen by WEAVE_OUT (see init.c);
   path gets the final name. Returns 0, or -1 with errno set. */
RT_RARE static __attribute__((noinline)) int save_profile(struct sbuf *path, struct totals *t, struct tmpmem *tm)
{
	struct out o = {.fd = -1};
	struct safefile f;
	int replace = 0;
	u64 pid = (u64)getpid();
	int dev = -1;

	if (g_prev_path[0]) {
		/* This process's provisional profile: replace it. */
		sb_str(path, g_prev_path);
		if ((dev = device_out(path->s)) == -2)
			return -1;
		replace = 1;
	} else if (out_dir()) {
		dir_name(path);
	} else if (g_cfg_out_set) {
		sb_expand(path, g_cfg_out);
		if ((dev = device_out(path->s)) == -2) {
			/* Not into that descriptor or device (a regular file, maybe
			   the program's own; closed), and not lost: the default name. */
			struct sbuf m = {.n = 0};
			int e = errno;
			sb_str(&m, "WEAVE_OUT=");
			sb_str(&m, path->s);
			sb_str(&m, ": ");
			sb_str(&m, errdesc(e));
			path->n = 0;
			path->s[0] = 0;
			default_name(path);
			sb_str(&m, "; the profile goes to ");
			sb_str(&m, path->s);
			sb_str(&m, "\n");
			rt_warn(m.s);
			dev = -1;
		} else if (dev < 0) {
			replace = !exec_profile(path->s);
		}
		if (dev < 0 && run_profile(path->s)) {
			/* Another process of this run wrote it: this one's name
			   gets the pid, before a .prof suffix. */
			struct sbuf base = {.n = 0};
			sb_str(&base, path->s);
			sb_numbered(path, &base, pid);
			replace = 0;
		}
	} else {
		default_name(path);
	}
	/* 16 KiB: a bigger buffer saves few system calls and adds to the
	   program's peak RSS, which the writer may set. */
	o.buf = tmp_alloc(tm, 1 << 14);
	o.cap = 1 << 14;
	if (!o.buf) {
		errno = ENOMEM;
		return -1;
	}
	if (dev >= 0) {
		o.fd = dev;
		write_profile(&o, t, tm);
		out_flush(&o);
		close(dev);
		errno = o.err;
		return o.err ? -1 : 0;
	}
	if (safefile_open(&f, path->s) != 0 && (g_prev_path[0] || open_elsewhere(&f, path) != 0))
		return -1;
	o.fd = f.fd;
	write_profile(&o, t, tm);
	out_flush(&o);
	if (o.err) {
		safefile_abort(&f);
		errno = o.err;
		return -1;
	}
	return commit_said(&f, path, replace);
}

