/* unwoven: a woven program calling a library that was not woven
   (libfoo.c), which leaks a list (TestLeakUnwovenLibrary): its blocks are
   charged to main's hidden site in libfoo.so, suppressible by
   leak:libfoo.so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void foo_lose_list(int n);

/* Overwrites the stack below the caller, so that no stale copy of a lost
   pointer keeps its block (possibly) reachable. */
static __attribute__((noinline)) void scrub(void)
{
	volatile char buf[16384];
	memset((char *)buf, 0, sizeof buf);
}

static __attribute__((noinline)) void own_leak(void)
{
	char *p = malloc(500); /* site:own */
	memset(p, 1, 500);
}

int main(void)
{
	foo_lose_list(4);
	own_leak();
	scrub();
	printf("done\n");
	return 0;
}
