/* Blocks held at exit only by pointers into their middle, which memcheck's
   leak heuristics (--leak-check-heuristics, all by default) call still
   reachable when the block's first words say what the pointer is:
   length64, 8 bytes in after the block's size less 8 (sqlite's
   allocator); newarray, 8 bytes in after a count of elements that divides
   the rest (C++'s new[]); stdstring, 24 bytes in after a length, a
   capacity and a reference count, with room for capacity bytes and a NUL
   (libstdc++'s string). The same pointers that do not fit, and one that
   fits but is held only by a possibly lost block, leave theirs possibly
   lost. The sqlite3 shell exiting with its database open holds 89 blocks
   so. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *volatile held[12];

/* A block of n bytes whose first words are w0, w1, w2 (when it has room
   for them), held by a pointer off bytes in. */
static __attribute__((noinline)) char *block(size_t n, uint64_t w0, uint64_t w1, uint64_t w2, size_t off)
{
	char *p = malloc(n);
	memset(p, 0, n);
	uint64_t w[3] = {w0, w1, w2};
	memcpy(p, w, n < sizeof w ? n / 8 * 8 : sizeof w);
	return p + off;
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "all") != 0)
		return 2;
	held[0] = block(72, 64, 0, 0, 8);     /* length64 (and newarray): reachable */
	held[1] = block(8 + 5 * 24, 5, 0, 0, 8); /* newarray: reachable */
	held[2] = block(24 + 15 + 1, 3, 15, 0, 24); /* stdstring: reachable */
	held[3] = block(72, 0, 0, 0, 8);      /* count 0: possibly lost */
	held[4] = block(72, 7, 0, 0, 8);      /* 64 % 7: possibly lost */
	held[5] = block(24 + 15 + 1, 16, 15, 0, 24); /* length > capacity: possibly lost */
	held[6] = block(72, 64, 0, 0, 16);    /* length64's words, 16 bytes in: possibly lost */
	held[7] = block(24 + 16 + 1, 3, 15, 0, 24); /* no room for the NUL's place: possibly lost */
	/* A start pointer from a block held by a heuristic is reachable. */
	char *child = malloc(100);
	memcpy(held[1] + 8, &child, sizeof child);
	/* A length64 block held only from a possibly lost one stays possibly
	   lost. */
	char *inner = block(40, 32, 0, 0, 8);
	memcpy(held[3] + 8, &inner, sizeof inner);
	printf("%zu blocks held\n", sizeof held / sizeof held[0] - 3);
	return 0;
}
