/* A lost block whose address only the runtime holds: a mark's and a
   region's labels are copied into the runtime's memory, and these labels
   are the block's address bytes. The runtime's memory is no root: the
   block is definitely lost, as memcheck says of the unwoven program (which
   has no copy). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "weave_api.h"

static char label[16];

/* Whether p's address, as bytes, makes a label of six bytes (no zero
   byte in its low six, the top two zero): its copy, NUL-terminated, is
   then the address itself. */
static int make_label(void *p)
{
	uintptr_t a = (uintptr_t)p;
	memset(label, 0, sizeof label);
	memcpy(label, &a, sizeof a);
	return strlen(label) == 6 && a >> 48 == 0;
}

static __attribute__((noinline)) void lose(void)
{
	void *tries[64];
	int n = 0, i;
	void *p = malloc(48); /* site:lost */
	while (!make_label(p) && n < 64) {
		tries[n++] = p;
		p = malloc(48); /* site:lost */
	}
	for (i = 0; i < n; i++)
		free(tries[i]);
	WEAVE_MARK(label);
	weave_region_begin(label);
	weave_region_end();
	p = NULL;
	*(void *volatile *)&p = NULL;
	memset(label, 0, sizeof label);
	__asm__ volatile("" ::"r"(label) : "memory");
}

/* Writes over the stack lose() used, so no stale copy of the address stays. */
static __attribute__((noinline)) void wipe(void)
{
	volatile char junk[4096];
	for (int i = 0; i < (int)sizeof junk; i++)
		junk[i] = 0;
}

int main(void)
{
	lose();
	wipe();
	return 0;
}
