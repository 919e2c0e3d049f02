//go:build ignore

/* out.c: what the exit writers (profile.c, summary.c, timing.c) write
   with: buffered output to a file descriptor, numbers without stdio,
   fixed-capacity strings, and scratch memory mapped for the writing and
   unmapped after. */

#include "internal.h"

/* write(2) that raises no SIGPIPE in the program: a reader gone (stderr a
   pipe whose reader exited: prog 2>&1 | head) makes it fail with EPIPE,
   not end the program with another exit status. SIGPIPE is blocked in
   this thread for the call and, if the call raised it (it was not pending
   before), taken back. */
RT_RARE static ssize_t quiet_write(int fd, const void *b, wsize n)
{
	sigset_t pipe, old, pend;
	ssize_t r;
	int e, was;
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, &old);
	was = sigpending(&pend) == 0 && sigismember(&pend, SIGPIPE);
	r = write(fd, b, n);
	e = errno;
	if (r < 0 && e == EPIPE && !was) {
		struct timespec zero = {0, 0};
		while (sigtimedwait(&pipe, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return r;
}

RT_RARE static void out_flush(struct out *o)
{
	wsize off = 0;
	while (off < o->len && !o->err) {
		ssize_t n = quiet_write(o->fd, o->buf + off, o->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			o->err = n < 0 ? errno : EIO;
		else
			off += (wsize)n;
	}
	o->len = 0;
}

RT_RARE static void out_mem(struct out *o, const char *s, wsize n)
{
	while (n) {
		wsize k = o->cap - o->len;
		if (!k) {
			out_flush(o);
			continue;
		}
		if (k > n)
			k = n;
		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
	}
}

RT_RARE static void out_str(struct out *o, const char *s)
{
	out_mem(o, s, strlen(s));
}

RT_RARE static void out_ch(struct out *o, char c)
{
	if (o->len < o->cap) /* most of a profile's bytes: no copy loop */
		o->buf[o->len++] = c;
	else
		out_mem(o, &c, 1);
}

/* Appends s escaped as S record text: '\\' as `\\`, newline as `\n`. */
RT_RARE static void out_escaped(struct out *o, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			out_str(o, "\\\\");
		else if (*s == '\n')
			out_str(o, "\\n");
		else
			out_ch(o, *s);
	}
}

RT_RARE static void out_u64(struct out *o, u64 v)
{
	char b[24];
	int i = sizeof b;
	do
		b[--i] = (char)('0' + v % 10);
	while (v /= 10);
	out_mem(o, b + i, sizeof b - (wsize)i);
}

/* A field: " v", or " -1" when v is ~0. */
RT_RARE static void out_field(struct out *o, u64 v)
{
	out_ch(o, ' ');
	if (v == ~0ull)
		out_str(o, "-1");
	else
		out_u64(o, v);
}

RT_RARE static void out_commas(struct out *o, u64 v)
{
	char b[32];
	int i = sizeof b, n = 0;
	do {
		if (n && n % 3 == 0)
			b[--i] = ',';
		b[--i] = (char)('0' + v % 10);
		n++;
	} while (v /= 10);
	out_mem(o, b + i, sizeof b - (wsize)i);
}

/* Pieces up to TMP_SMALL bytes come from TMP_CHUNK maps, several to a
   page: each map costs a resident page at least. */
#define TMP_SMALL 4096u
#define TMP_CHUNK 16384u

RT_RARE static void *tmp_alloc(struct tmpmem *m, wsize n)
{
	void *p;
	n = n ? (n + 15) & ~(wsize)15 : 16;
	if (n <= TMP_SMALL && n <= m->small.left) {
		p = m->small.next;
		m->small.next += n;
		m->small.left -= n;
		return p;
	}
	if (n <= TMP_SMALL) {
		if (!(p = tmp_alloc(m, TMP_CHUNK)))
			return NULL;
		m->small.next = (char *)p + n;
		m->small.left = TMP_CHUNK - n;
		return p;
	}
	if (m->k == 16)
		return NULL;
	if (!(p = rt_map(n))) {
		m->nomem = 1;
		return NULL;
	}
	m->p[m->k] = p;
	m->n[m->k++] = n;
	return p;
}

RT_RARE static void tmp_free(struct tmpmem *m)
{
	while (m->k > 0) {
		m->k--;
		rt_unmap(m->p[m->k], m->n[m->k]);
	}
	m->small.left = 0;
}

static void sb_str(struct sbuf *b, const char *s)
{
	wsize k = strlen(s);
	if (k > sizeof b->s - 1 - b->n)
		k = sizeof b->s - 1 - b->n;
	memcpy(b->s + b->n, s, k);
	b->n += k;
	b->s[b->n] = 0;
}

static void sb_mem(struct sbuf *b, const char *s, wsize k)
{
	if (k > sizeof b->s - 1 - b->n)
		k = sizeof b->s - 1 - b->n;
	memcpy(b->s + b->n, s, k);
	b->n += k;
	b->s[b->n] = 0;
}

static void sb_u64(struct sbuf *b, u64 v)
{
	char d[24];
	int i = sizeof d;
	do
		d[--i] = (char)('0' + v % 10);
	while (v /= 10);
	sb_mem(b, d + i, sizeof d - (wsize)i);
}

/* 2 while descriptor 2 is still the stderr the program started with,
   else -1: a program that closed it and opened a file of its own, which
   took number 2, never finds the runtime's lines in that file. */
RT_RARE static int stderr_fd(void)
{
	return g_stderr_id && fd_ident(2) == g_stderr_id ? 2 : -1;
}

/* Writes "==weave <pid>== " and msg (a line) on stderr in one write, as
   the summary's lines start: a parent's lines and its children's told
   apart. No stdio, no malloc: callable anywhere. */
RT_RARE static void rt_warn(const char *msg)
{
	struct sbuf b = {.n = 0};
	int fd = stderr_fd();
	if (fd < 0)
		return;
	sb_str(&b, "==weave ");
	sb_u64(&b, (u64)getpid());
	sb_str(&b, "== ");
	sb_str(&b, msg);
	(void)!quiet_write(fd, b.s, b.n);
}

/* Appends dir and a '/' unless the current directory is dir (the
   directory of device dev and inode ino). May set errno. */
RT_RARE static void sb_dir_unless_cwd(struct sbuf *b, const char *dir, u64 dev, u64 ino)
{
	struct stat st;
	if (stat(".", &st) != 0 || (u64)st.st_dev != dev || (u64)st.st_ino != ino) {
		sb_str(b, dir);
		sb_str(b, "/");
	}
}

/* Appends the start directory and a '/' when rel (a path to write) is
   relative and the process has changed directory since. */
static void sb_start_dir(struct sbuf *b, const char *rel)
{
	int e = errno;
	if (rel[0] != '/' && g_start_dir[0])
		sb_dir_unless_cwd(b, g_start_dir, g_start_dir_dev, g_start_dir_ino);
	errno = e;
}

/* Appends pattern with each "%p" replaced by the pid (WEAVE_OUT, WEAVE_LOG),
   a relative one from the start directory (sb_start_dir). */
static void sb_expand(struct sbuf *b, const char *pattern)
{
	sb_start_dir(b, pattern);
	for (const char *c = pattern; *c; c++) {
		if (c[0] == '%' && c[1] == 'p') {
			sb_u64(b, (u64)getpid());
			c++;
		} else {
			sb_mem(b, c, 1);
		}
	}
}

/* b = name with ".n" added before its .prof suffix (or at its end). */
RT_RARE static void sb_numbered(struct sbuf *b, const struct sbuf *name, u64 n)
{
	int prof = name->n > 5 && strcmp(name->s + name->n - 5, ".prof") == 0;
	b->n = 0;
	sb_mem(b, name->s, prof ? name->n - 5 : name->n);
	sb_str(b, ".");
	sb_u64(b, n);
	if (prof)
		sb_str(b, ".prof");
}
