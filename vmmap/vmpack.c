//go:build ignore

/* vmpack.c: the snapshots' copies of /proc/self/maps, packed. With many
   threads the maps are long (64 threads: 266 lines, 14.1 KiB of text) and
   their copy at the heap's peak was 4-5 resident pages at the process's
   peak. A copy of over a page is now kept as the text packed line by line against the
   line before (a maps line shares most of its bytes with the one above: a
   start that is the previous end, the same permissions, offset, device,
   path): about a quarter of the text (threads 64's, 13 KiB: 3.6). No parsing: any text packs and
   unpacks byte for byte (vm_unpack, at exit, gives vmwrite.c the lines it
   writes as V records, which package vmmap parses).

   The text is cut into segments: up to and including a newline, or
   VM_SEG bytes, or what is left at the end. A segment is packed as tokens
   against the segment before it (none for the first):
     0x00-0x7f  literal: the next 1-128 bytes (the byte + 1)
     0x80-0xff  copy: (the byte & 0x7f) + 3 bytes of the previous
                segment, from the offset in the next byte.
   A token does not cross a segment's end. The file is read through a
   stack buffer of 2 * VM_SEG bytes (the segment being cut and the one
   before), no deeper than vm_statm's: a snapshot makes about 6 times the
   reads it made with a 64 KiB buffer (threads 64: 38 of up to 255 bytes
   for 13 KiB), and packing costs about 13 instructions a byte of text
   (a snapshot of threads 64's maps: 170,000). vm_read_packed runs in
   every program (the start's snapshot): not in the rare code. */

#include "internal.h"

#define VM_SEG 255u /* a segment's bytes at most: offsets fit a byte */

/* Appends n bytes to b: 0, or -1 when b is full. */
static int vm_put(struct vm_buf *b, const void *p, wsize n)
{
	if (b->cap - b->n < n)
		return -1;
	memcpy(b->p + b->n, p, n);
	b->n += n;
	return 0;
}

/* Appends s[0..n) as literal tokens. */
static int vm_put_lits(struct vm_buf *b, const char *s, wsize n)
{
	for (; n; ) {
		wsize k = n > 128 ? 128 : n;
		unsigned char h = (unsigned char)(k - 1);
		if (vm_put(b, &h, 1) || vm_put(b, s, k))
			return -1;
		s += k;
		n -= k;
	}
	return 0;
}

/* The bytes a and b have alike at their start, at most n: a word at a
   time where the byte order allows. */
static wsize vm_match(const char *a, const char *b, wsize n)
{
	wsize k = 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (; k + 8 <= n; k += 8) {
		u64 x, y;
		memcpy(&x, a + k, 8);
		memcpy(&y, b + k, 8);
		if (x != y)
			return k + (wsize)(__builtin_ctzll(x ^ y) >> 3);
	}
#endif
	while (k < n && a[k] == b[k])
		k++;
	return k;
}

/* Packs segment s (n bytes) against the previous one, pv (pn bytes), onto
   b: 0, or -1 when b is full. The candidates for a copy at i are the same
   offset above and the one after pv's first '-' (a start that is the end
   above): hashing every offset of pv as well packs threads 64's maps 1%
   smaller for twice the instructions. */
static int vm_pack_seg(struct vm_buf *b, const char *s, wsize n, const char *pv, wsize pn)
{
	const char *dash = memchr(pv, '-', pn);
	wsize i = 0, lit = 0, d = dash ? (wsize)(dash - pv) + 1 : pn;
	while (i + 3 <= n) {
		wsize max = n - i > 130 ? 130 : n - i, best = 0, off = 0, k;
		if (i < pn && s[i] == pv[i] && (k = vm_match(s + i, pv + i, pn - i < max ? pn - i : max)) > best)
			best = k, off = i;
		if (d < pn && s[i] == pv[d] && (k = vm_match(s + i, pv + d, pn - d < max ? pn - d : max)) > best)
			best = k, off = d;
		if (best < 3) {
			i++;
			continue;
		}
		{
			unsigned char t[2] = {(unsigned char)(0x80 | (best - 3)), (unsigned char)off};
			if (vm_put_lits(b, s + lit, i - lit) || vm_put(b, t, 2))
				return -1;
		}
		i += best;
		lit = i;
	}
	return vm_put_lits(b, s + lit, n - lit);
}

/* Reads the file at path packed into b: 0, an errno, or -1 when b is full
   (the caller grows it and reads again). */
static int vm_pack_file(struct vm_buf *b, char *buf, int fd)
{
	char *raw = buf, *pv = buf + VM_SEG;
	wsize have = 0, pn = 0;
	int eof = 0;
	b->n = 0;
	while (!eof) {
		ssize_t k = read(fd, raw + have, VM_SEG - have);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		eof = k == 0;
		have += (wsize)k;
		while (have) {
			const char *nl = memchr(raw, '\n', have);
			wsize seg = nl ? (wsize)(nl - raw) + 1 : have == VM_SEG || eof ? have : 0;
			if (!seg)
				break;
			if (vm_pack_seg(b, raw, seg, pv, pn))
				return -1;
			memcpy(pv, raw, seg);
			pn = seg;
			memmove(raw, raw + seg, have - seg);
			have -= seg;
		}
	}
	return 0;
}

/* Reads fd raw into b, up to a page: 0 when that is the whole file, 1
   when there is more, or an errno. */
static int vm_read_page(struct vm_buf *b, int fd)
{
	wsize page = 4096;
	ssize_t k = -1;
	b->n = 0;
	while (b->n < page && (k = read(fd, b->p + b->n, page - b->n)) != 0) {
		if (k < 0 && errno != EINTR)
			return errno;
		if (k > 0)
			b->n += (wsize)k;
	}
	return k != 0;
}

/* The process's maps into b: 0 or an errno. Through thread-self (self
   where it is missing), as vm_read_maps. A text of a page or less is kept
   raw (*packed 0: as before, no more instructions), a longer one packed
   (*packed 1; the file read again), into a buffer grown (twice the size)
   until it fits. */
static int vm_read_packed(struct vm_buf *b, int *packed)
{
	char buf[2 * VM_SEG + 2]; /* first the path, then the segments */
	const char *file = "thread-self/maps";
	*packed = 0;
	for (;;) {
		int fd, e;
		if (!b->p) {
			if (!(b->p = rt_map(VM_MAPS_INIT)))
				return ENOMEM;
			b->cap = VM_MAPS_INIT;
		}
		b->n = 0;
		vm_path(buf, sizeof buf, file);
		if ((fd = open(buf, O_RDONLY | O_CLOEXEC)) < 0) {
			if (errno == ENOENT && file[0] == 't') {
				file = "self/maps";
				continue;
			}
			return errno;
		}
		e = *packed ? vm_pack_file(b, buf, fd) : vm_read_page(b, fd);
		close(fd);
		if (e == 1 && !*packed) {
			*packed = 1;
			continue;
		}
		if (e >= 0)
			return e;
		if (vm_buf_grow(b))
			return ENOMEM;
	}
}

/* Unpacks b (vm_read_packed's) and passes each piece of text to f, in
   order, through a buffer of 2 * VM_SEG bytes: a segment at a time. */
RT_RARE static void vm_unpack(const struct vm_buf *b, void (*f)(void *arg, const char *s, wsize n), void *arg)
{
	char buf[2 * VM_SEG];
	char *cur = buf, *pv = buf + VM_SEG;
	const unsigned char *p = (const unsigned char *)b->p, *end = p + b->n;
	wsize n = 0;
	while (p < end) {
		wsize k;
		if (*p < 0x80) {
			k = (wsize)*p + 1;
			if (k > (wsize)(end - p - 1) || n + k > VM_SEG)
				break; /* not vm_read_packed's */
			memcpy(cur + n, p + 1, k);
			p += 1 + k;
		} else {
			k = (wsize)(*p & 0x7f) + 3;
			if (end - p < 2 || n + k > VM_SEG || p[1] + k > VM_SEG)
				break;
			memcpy(cur + n, pv + p[1], k);
			p += 2;
		}
		n += k;
		if (n == VM_SEG || cur[n - 1] == '\n' || p == end) {
			char *t = cur;
			f(arg, cur, n);
			cur = pv;
			pv = t;
			n = 0;
		}
	}
}
