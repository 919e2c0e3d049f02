/* Arenas of the program's own, mmap'd as pymalloc's are, laid right
   above and right below a big block that glibc mmap'd: the kernel joins
   the three anonymous maps in one line of /proc/self/maps. The arenas
   hold the only pointers to two small blocks, which memcheck calls still
   reachable; the big block, lost, holds the only pointer to a third,
   indirectly lost. An allocator's memory is no root (its free chunks
   hold stale pointers), but the program's own maps beside it are.
   Prints whether each arena and the block's map are one line of maps
   (natively, with glibc's malloc; the verdicts are the same either way). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define ARENA (1 << 20)
#define BIG (300 * 1000)

static char maps[1 << 16];

/* Whether [lo, hi) lies in one line of /proc/self/maps. */
static int one_line(unsigned long lo, unsigned long hi)
{
	if (hi <= lo)
		return 0;
	int fd = open("/proc/self/maps", O_RDONLY);
	long n = 0, r;
	char *p;
	if (fd < 0)
		return 0;
	while (n < (long)sizeof maps - 1 && (r = read(fd, maps + n, sizeof maps - 1 - (size_t)n)) > 0)
		n += r;
	close(fd);
	maps[n] = 0;
	for (p = maps; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
		char *end;
		unsigned long a = strtoul(p, &end, 16), b = strtoul(end + 1, NULL, 16);
		if (a <= lo && hi <= b)
			return 1;
	}
	return 0;
}

/* Stores a new block's only pointer in *slot (out of main's frame, so
   that no copy of it stays in main's registers or live frame). */
static __attribute__((noinline)) void fill(void **slot, size_t size)
{
	*slot = malloc(size);
}

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(5);
}

/* A map of ARENA bytes at where, or NULL when that is taken. */
static void **arena_at(char *where)
{
	void **p = mmap(where, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if ((char *)p != where) { /* a kernel before 4.17: a hint */
		munmap(p, ARENA);
		return NULL;
	}
	return p;
}

/* An arena anywhere. */
static void **arena(void)
{
	void **p = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(2);
	return p;
}

int main(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	void **below = NULL, **above = NULL, *spare[64];
	char *big = NULL, *chunk;
	int n = 0, i;
	mallopt(M_MMAP_THRESHOLD, 128 << 10); /* fixed: a free does not raise it */
	/* Big blocks until one's map has room for an arena beside it (each
	   fills the gap it took, so the next lands elsewhere). */
	while (!below && !above && n < 64) {
		if (big)
			spare[n++] = big;
		if (!(big = malloc(BIG)))
			return 2;
		chunk = big - 16;
		below = arena_at(chunk - ARENA);
		above = arena_at(chunk + (BIG + 16 + pg - 1) / pg * pg);
	}
	for (i = 0; i < n; i++)
		free(spare[i]);
	say(above && one_line((unsigned long)chunk, (unsigned long)above + ARENA) ? "above joined\n" : "above apart\n");
	say(below && one_line((unsigned long)below, (unsigned long)big + BIG) ? "below joined\n" : "below apart\n");
	if (!below)
		below = arena();
	if (!above)
		above = arena();
	fill(&below[1000], 48); /* reachable from the arena below */
	fill(&above[7], 96);    /* reachable from the arena above */
	memset(big, 0, BIG);
	fill((void **)(big + 4096), 200); /* indirectly lost */
	big = chunk = NULL;
	below = above = NULL; /* the arenas' addresses are gone too */
	return 0;
}
