/* Climbs fast to a peak of 24 blocks of 1 MiB and frees them all. After
   each allocation it prints the heap it holds and the sum of its mappings'
   sizes, read from /proc/self/maps with no allocation (a static buffer):
   "heap BYTES mapped BYTES". */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MiB (1 << 20)
static char buf[1 << 20];
static char *blocks[24];

static unsigned long mapped(void)
{
	unsigned long sum = 0, lo, hi;
	long n = 0, r;
	int fd = open("/proc/self/maps", O_RDONLY);
	if (fd < 0)
		return 0;
	while ((r = read(fd, buf + n, sizeof buf - 1 - n)) > 0)
		n += r;
	close(fd);
	buf[n] = 0;
	for (char *l = buf; *l; l = strchr(l, '\n') + 1) {
		if (sscanf(l, "%lx-%lx", &lo, &hi) == 2)
			sum += hi - lo;
		if (!strchr(l, '\n'))
			break;
	}
	return sum;
}

int main(void)
{
	static unsigned long heap[24], maps[24];
	int i;
	for (i = 0; i < 24; i++) {
		blocks[i] = malloc(MiB);
		heap[i] = (unsigned long)(i + 1) * MiB;
		maps[i] = mapped();
	}
	for (i = 0; i < 24; i++) {
		printf("heap %lu mapped %lu\n", heap[i], maps[i]);
		free(blocks[i]);
	}
	return 0;
}
