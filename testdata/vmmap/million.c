/* A million allocations in waves: the heap rises and falls 100 times,
   each wave a different size, over about as many contexts as calls. */
#include <stdio.h>
#include <stdlib.h>

#define N 10000
static void *live[N];

static void *leaf(size_t n) { return malloc(n); }
static void *mid(size_t n) { return n % 2 ? leaf(n) : malloc(n); }

int main(void)
{
	long total = 0;
	int wave, i;
	for (wave = 0; wave < 100; wave++) {
		for (i = 0; i < N; i++) {
			live[i] = mid((size_t)(16 + (wave * 37 + i) % 2000));
			total += (long)((char *)live[i] != NULL);
		}
		for (i = 0; i < N; i++)
			free(live[i]);
	}
	printf("%ld\n", total);
	return 0;
}
