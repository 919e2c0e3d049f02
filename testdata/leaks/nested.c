/* Blocks nested in a block: a pointcut allocator (slot_alloc, woven with
   --alloc slot_alloc:size=1) carves 64-byte slots out of a 64 KiB arena
   that is itself counted (arena_alloc, --alloc arena_alloc:size=1), as
   sqlite's lookaside slots lie in a buffer from sqlite3Malloc. The
   arena, held by a global, is still reachable, and so is a slot held by
   a global far into it or by another slot; a slot nothing points to is
   definitely lost. The scan's page index once listed, for a granule
   inside the arena, the arena and the slots right after it, not those in
   the granule: slots past the first KiB were called lost whatever held
   them (the sqlite3 shell exiting with its database open: 31 blocks). */
#include <stdio.h>
#include <stdlib.h>

enum { ARENA = 65536, SLOT = 64 };

static char *arena;
/* FIRST 0 puts the first slot at the arena's own address: the scan
   classifies both, each by the pointers to it (TestLeakNestedSameAddress). */
#ifndef FIRST
#define FIRST SLOT /* no slot at the arena's own address */
#endif
static size_t used = FIRST;
static char *volatile keep[2];

__attribute__((noinline)) void *arena_alloc(size_t n)
{
	return malloc(n);
}

__attribute__((noinline)) void *slot_alloc(size_t n)
{
	void *p = arena + used;
	used += SLOT;
	(void)n;
	return p;
}

int main(void)
{
	arena = arena_alloc(ARENA); /* site:arena */
	keep[0] = slot_alloc(40); /* site:first */
	char *b = slot_alloc(40); /* site:child */
	*(char **)keep[0] = b;
	b = NULL;
	for (int i = 0; i < 600; i++)
		slot_alloc(40); /* site:dropped */
	keep[1] = slot_alloc(40); /* site:far */
	printf("%zu bytes of slots\n", used - FIRST);
	return 0;
}
