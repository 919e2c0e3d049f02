/* gnulib's malloca: an allocator returning a pointer into the block it
   got from malloc, freed through its own deallocator (grep's test-malloca).
   The malloc attribute names freea (gcc 11): weave takes it as --free
   freea:ptr=1. Built with -DNOATTR and --alloc mmalloca:size=1, freea is
   unknown and the records of the freed blocks stay, some of them at pages
   glibc has since unmapped: the leak scan must not read them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
void freea(void *p);
#ifdef NOATTR
void *mmalloca(size_t n);
#else
void *mmalloca(size_t n) __attribute__((__malloc__, __malloc__(freea, 1), __alloc_size__(1)));
#endif
__attribute__((noinline)) void *mmalloca(size_t n)
{
	char *mem = malloc(n + 32);
	if (!mem)
		return NULL;
	uintptr_t umem = (uintptr_t)mem, umemplus = umem + 1 + 15;
	size_t offset = (umemplus & ~(uintptr_t)31) + 16 - umem;
	unsigned char *p = (unsigned char *)(mem + offset);
	p[-1] = offset;
	return p;
}
__attribute__((noinline)) void freea(void *p)
{
	if ((uintptr_t)p & 16)
		free((char *)p - ((unsigned char *)p)[-1]);
}
int main(int argc, char **argv)
{
	static const int sizes[] = {510823, 129321, 4070, 4095, 16582};
	int iters = argc > 1 ? atoi(argv[1]) : 10;
	for (int i = 0; i < iters; i++)
		for (int k = 0; k < 5; k++) {
			void *volatile p = mmalloca(sizes[k]);
			freea(p);
		}
	puts("ok");
	return 0;
}
