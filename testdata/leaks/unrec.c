/* unrec.c: blocks allocated once the address space is full (run it under
   prlimit --as): glibc's heap is grown to 96 MiB and freed again (kept:
   no trimming), then 1 MiB and 4 KiB maps are made until mmap fails, and
   400,000 blocks of 144 bytes come from the heap's free top, which needs
   no new memory from the kernel (the runtime's record of them does).
   64 MiB more are refused, and a realloc to 64 MiB. Then 4 MiB are unmapped again (room for the profile), the blocks freed;
   it prints how many malloc gave and exits 0. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define N 400000
void *v[N];

int main(void)
{
	void *big[4], *m[4], *p, *q;
	int i, n = 0, k = 0;
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	for (i = 0; i < 4; i++)
		big[i] = malloc(24 << 20);
	for (i = 3; i >= 0; i--)
		free(big[i]);
	while ((p = mmap(NULL, 1 << 20, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)) != MAP_FAILED)
		m[k++ % 4] = p;
	while (mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) != MAP_FAILED)
		;
	for (i = 0; i < N; i++)
		if ((v[i] = malloc(144)))
			n++;
	p = malloc(64 << 20); /* NULL: mmap'd, and no room */
	q = realloc(v[0], 64 << 20); /* NULL too, v[0] kept */
	if (q)
		v[0] = q;
	for (i = 0; i < 4 && i < k; i++)
		munmap(m[i], 1 << 20);
	for (i = 0; i < N; i++)
		free(v[i]);
	printf("%d of %d, %s, %s\n", n, N, p ? "64 MiB" : "no 64 MiB", q ? "v[0] moved" : "v[0] kept");
	return 0;
}
