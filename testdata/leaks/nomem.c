/* nomem.c: 100,000 blocks in use at exit, half of them lost. With an
   argument, it leaves its address space full at exit (run it under
   prlimit --as): 1 MiB maps until mmap fails, and the last two unmapped
   again, so that 2 MiB are left. The leak scan's tables (some 17 bytes a block, and a
   1 MiB table of its own) do not fit there; the profile does. It prints
   whether it filled its address space, and exits 0. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define N 100000
void *keep[N / 2]; /* not static: -O2 keeps the stores */

int main(int argc, char **argv)
{
	static void *maps[1 << 16];
	int i, n = 0;
	for (i = 0; i < N; i++) {
		void *p = malloc(24);
		if (!p)
			return 1;
		if (i % 2)
			keep[i / 2] = p;
	}
	if (argc < 2)
		return 0;
	while (n < (1 << 16)) {
		void *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED)
			break;
		maps[n++] = m;
	}
	for (i = 0; i < 2 && n > 0; i++)
		munmap(maps[--n], 1 << 20);
	printf("%s\n", n > 0 && n < (1 << 16) ? "full" : "not full");
	return 0;
}
