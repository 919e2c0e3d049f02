/* lastword: two blocks of 536 bytes (a glibc chunk of 544: the block's
   last 8 bytes are where the allocator keeps the next chunk's header),
   each reached only by a pointer to those last 8 bytes, an interior
   pointer: one from a global (an end cursor on the last element), one
   from a callee-saved register at the call to exit (mawk's cursor on the
   last instruction of its END code). memcheck calls both possibly lost. */
#include <stdlib.h>
#include <string.h>

void **volatile last; /* &table[66] (volatile: a store never read is kept) */

__attribute__((noinline)) static char *make(void)
{
	char *p = malloc(536);
	memset(p, 1, 536);
	return p + 528;
}

int main(void)
{
	void **table = malloc(67 * sizeof *table);
	char *q;
	memset(table, 0, 67 * sizeof *table);
	last = &table[66];
	table = NULL;
	q = make();
#if defined(__x86_64__)
	__asm__ volatile("and $-16, %%rsp\n\t"
			 "mov %0, %%rbx\n\t"
			 "xor %%edi, %%edi\n\t"
			 "call exit@PLT"
			 :: "r"(q) : "rbx", "rdi", "memory");
#endif
	exit(q == NULL);
}
