/* A small heap that moves for a long time, as a server's: a ring of 1024
   messages of 16-271 bytes, each new one replacing (and freeing) the one
   in its slot, for the number of messages given (default 100,000), then
   all freed. The heap stays near 150 KiB whatever the run length. */
#include "woven.h"
#include <stdlib.h>

FN(main);
FN(handle);

#define RING 1024

static void *handle(unsigned *rng)
{
	ENTER(handle);
	*rng = *rng * 1103515245u + 12345u;
	char *m = W_MALLOC(handle, 16 + (*rng >> 16) % 256);
	if (m)
		m[0] = 1;
	return m;
}

int main(int argc, char **argv)
{
	ENTER(main);
	static void *ring[RING];
	long n = argc > 1 ? atol(argv[1]) : 100000, i;
	unsigned rng = 1;
	for (i = 0; i < n; i++) {
		W_FREE(main, ring[i % RING]);
		ring[i % RING] = handle(&rng);
	}
	for (i = 0; i < RING; i++)
		W_FREE(main, ring[i]);
	return 0;
}
