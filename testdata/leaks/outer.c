/* Blocks of a declared allocator (gnulib's xmalloc and xcalloc carry
   __attribute__((malloc, alloc_size)), so each call is woven as a
   __weave_outer bracket) whose only pointer the program dropped, in a
   frame that is live at exit: main calls exit() itself, as diff3 does.
   The woven call keeps the returned pointer in its bracket, on main's
   stack; memcheck calls the plain build's blocks definitely lost, and so
   must the leak scan: that copy is the runtime's, no root. argv[1]:
     malloc - xmalloc's blocks, each filled and dropped;
     calloc - xcalloc's, likewise. */
#include <stdlib.h>
#include <string.h>

__attribute__((malloc, alloc_size(1), noinline)) static void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p)
		abort();
	return p;
}

__attribute__((malloc, alloc_size(1, 2), noinline)) static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);
	if (!p)
		abort();
	return p;
}

static __attribute__((noinline)) void use(void *p, size_t n)
{
	memset(p, 1, n);
	__asm__ volatile("" : : "r"(p) : "memory");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "malloc";
	if (!strcmp(mode, "malloc")) {
		for (int i = 0; i < 3; i++)
			use(xmalloc(40), 40);
	} else {
		for (int i = 0; i < 3; i++)
			use(xcalloc(5, 8), 40);
	}
	exit(0);
}
