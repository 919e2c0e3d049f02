/* bigheap: the leak scan's workload. Allocates about MIB MiB (default
   1024) in blocks of 64 B to 2^MAXSHIFT bytes (default 20: 1 MiB; three
   blocks in four are at most 2 KiB), fills them with bytes that are not
   pointers, stores in one block in three a pointer to an earlier block,
   keeps one block in four reachable from a global array and drops the
   rest: the scan then reads about 1 GB of reachable and lost blocks.
   Usage: bigheap [MIB [MAXSHIFT]]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void **keep; /* not static: a store the compiler must keep */

int main(int argc, char **argv)
{
	size_t target = (argc > 1 ? strtoull(argv[1], 0, 10) : 1024) << 20, total = 0;
	int maxsh = argc > 2 ? atoi(argv[2]) : 20;
	size_t n = 0, cap = 1 << 24;
	unsigned long long seed = 1;
	void **all = malloc(cap * sizeof *all);
	if (!all || maxsh < 6 || maxsh > 30)
		return 2;
	while (total < target && n < cap) {
		size_t sz;
		char *p;
		int sh;
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		sh = 6 + (int)((seed >> 33) % (unsigned)(maxsh - 5));
		if ((seed >> 40) & 3)
			sh = 6 + (int)((seed >> 45) % 6);
		if (sh > maxsh)
			sh = maxsh;
		sz = (size_t)1 << sh;
		if (!(p = malloc(sz)))
			return 1;
		memset(p, (int)(seed >> 56) | 1, sz);
		if (n && (seed >> 20) % 3 == 0)
			*(void **)p = all[(seed >> 24) % n];
		all[n++] = p;
		total += sz;
	}
	keep = malloc((n / 4 + 1) * sizeof *keep);
	for (size_t i = 0; i < n / 4; i++)
		keep[i] = all[i * 4];
	memset(all, 0, n * sizeof *all);
	free(all);
	printf("%zu blocks, %zu MiB\n", n, total >> 20);
	return 0;
}
