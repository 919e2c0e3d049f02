/* A program with large static arrays it never touches (or touches in one
   page), one leaked block and two reachable ones, one of them held only
   from the touched page of a sparse array. weave's leak scan at exit must
   find the blocks without reading the pages the program never touched:
   reading a page maps it (the zero page on most kernels, a page of memory
   on kernels without one), so a scan that reads them grows the program's
   memory by the size of its static arrays. A destructor registers a
   handler that runs after weave's scan (weave's own exit handler is
   registered later, from its priority-101 destructor, and so runs first;
   on_exit, not atexit, whose handlers __cxa_finalize runs with the
   executable's destructors) and prints how many pages of the arrays are
   mapped, from /proc/self/pagemap: as many as the unwoven program has;
   and on stderr, how many pages of every private writable mapping are,
   the runtime's own included, and how many large anonymous mappings ask
   for no page size (the runtime's ask for small pages). */
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BIG (64u << 20)

static char untouched[BIG];
static void *sparse[BIG / sizeof(void *)];
static void *kept;

/* The pages of [p, p + n) that are mapped (present or swapped). */
static long mapped(const void *p, size_t n)
{
	uintptr_t lo = ((uintptr_t)p + 4095) & ~(uintptr_t)4095, hi = ((uintptr_t)p + n) & ~(uintptr_t)4095, a;
	uint64_t e[512];
	long count = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0)
		return -1;
	for (a = lo; a < hi; a += sizeof e / sizeof e[0] * 4096) {
		size_t k, pages = (hi - a) / 4096 < 512 ? (hi - a) / 4096 : 512;
		if (pread(fd, e, pages * 8, (off_t)(a / 4096 * 8)) != (ssize_t)(pages * 8)) {
			count = -1;
			break;
		}
		for (k = 0; k < pages; k++)
			count += (long)(e[k] >> 62 != 0);
	}
	close(fd);
	return count;
}

/* Reads the file at path into buf (size bytes), NUL-terminated: 0 if it
   cannot be opened. No stdio: nothing allocated. */
static int slurp(const char *path, char *buf, long size)
{
	long got = 0, n;
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	while (got < size - 1 && (n = read(fd, buf + got, (size_t)(size - 1 - got))) > 0)
		got += n;
	close(fd);
	buf[got] = 0;
	return 1;
}

/* The pages mapped in every private writable mapping. */
static long mapped_private(void)
{
	static char maps[1 << 16];
	long total = 0;
	char *s, *e;
	if (!slurp("/proc/self/maps", maps, sizeof maps))
		return -1;
	for (s = maps; *s; s = e + 1) {
		unsigned long lo, hi;
		char perm[5];
		if (!(e = strchr(s, '\n')))
			break;
		if (sscanf(s, "%lx-%lx %4s", &lo, &hi, perm) == 3 && perm[1] == 'w' && perm[3] == 'p' && hi < (1ul << 47))
			total += mapped((const void *)lo, hi - lo);
	}
	return total;
}

/* The anonymous private writable mappings of 2 MiB or more with no page
   size advice (VmFlags hg or nh): where the kernel gives huge pages
   unasked, each may take 2 MiB of memory for a page touched. */
static long unadvised_large(void)
{
	static char smaps[1 << 20];
	long count = 0;
	unsigned long lo = 0, hi = 0;
	int candidate = 0;
	char *s, *e;
	if (!slurp("/proc/self/smaps", smaps, sizeof smaps))
		return -1;
	for (s = smaps; *s; s = e + 1) {
		char perm[5], name[64];
		unsigned long off, inode;
		if (!(e = strchr(s, '\n')))
			break;
		*e = 0;
		name[0] = 0;
		if (sscanf(s, "%lx-%lx %4s %lx %*s %lu %63s", &lo, &hi, perm, &off, &inode, name) >= 5)
			candidate = perm[1] == 'w' && perm[3] == 'p' && inode == 0 && name[0] == 0 && hi - lo >= (2ul << 20);
		else if (candidate && strncmp(s, "VmFlags:", 8) == 0 && !strstr(s, " hg") && !strstr(s, " nh"))
			count++;
	}
	return count;
}

static void report(int status, void *arg)
{
	char line[128];
	int n = snprintf(line, sizeof line, "untouched: %ld pages mapped; sparse: %ld\n", mapped(untouched, sizeof untouched),
			 mapped(sparse, sizeof sparse));
	(void)status, (void)arg;
	if (write(1, line, (size_t)n) != n)
		_exit(3);
	n = snprintf(line, sizeof line, "private pages mapped: %ld\n", mapped_private());
	if (write(2, line, (size_t)n) != n)
		_exit(3);
	n = snprintf(line, sizeof line, "large maps without page size advice: %ld\n", unadvised_large());
	if (write(2, line, (size_t)n) != n)
		_exit(3);
}

__attribute__((destructor)) static void at_end(void)
{
	on_exit(report, NULL);
}

int main(void)
{
	void *lost = malloc(48);                            /* site:lost */
	kept = malloc(32);                                  /* site:kept */
	sparse[BIG / sizeof(void *) / 2 + 3] = malloc(64); /* site:sparse: one page of sparse written */
	if (!lost || !kept)
		return 1;
	lost = NULL;
	printf("blocks made\n");
	return 0;
}
