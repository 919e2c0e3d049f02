/* Allocates a block every 10 ms for argv[1] seconds, keeping them, then
   exits; killed before that, only its checkpoints tell what it did. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void **kept;

static void grow(int i)
{
	kept[i] = malloc(1000);
}

int main(int argc, char **argv)
{
	int n = (argc > 1 ? atoi(argv[1]) : 1) * 100;
	kept = calloc((size_t)n, sizeof *kept);
	for (int i = 0; i < n; i++) {
		struct timespec ts = {0, 10000000};
		grow(i);
		nanosleep(&ts, NULL);
	}
	puts("done");
	return 0;
}
