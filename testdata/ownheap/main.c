/* A program with its own malloc (heap.c), woven: the runtime's interposed
   functions lose to the program's, so frees can bypass the runtime.
   1. A block the woven code allocates (recorded) and the allocator's own
   entry frees (not seen), its chunk handed out again at a smaller size
   and freed by the woven code: the runtime zeroed a freed block's bytes
   for the leak scan by the size it had recorded, past the new block's
   end (bash 5.2 with its own malloc, woven, aborted in its subshells:
   "free: start and end chunk sizes differ").
   2. A block the runtime never saw, freed and reallocated by the woven
   code: the runtime asked the C library's malloc_usable_size about it,
   which read the program's header as glibc's (SIGSEGV).
   The argument names the case: reused or unseen. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *heap_get(size_t n);
void heap_put(void *p);

static void reused(void)
{
	for (int i = 0; i < 4; i++) {
		char *a = malloc(200 + i);
		char *b;
		memset(a, 'x', 200 + i);
		heap_put(a); /* behind the runtime's back */
		b = heap_get(60 + i);
		strcpy(b, "reused");
		printf("%s %d\n", b, a == b);
		free(b);
	}
}

static void unseen(void)
{
	char *c;
	free(heap_get(8)); /* its header's word before it: 8, IS_MMAPPED clear */
	c = realloc(heap_get(8), 100);
	strcpy(c, "grown");
	puts(c);
	free(c);
}

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "reused") != 0 && strcmp(argv[1], "unseen") != 0)) {
		fprintf(stderr, "usage: ownheap reused|unseen\n");
		return 2;
	}
	if (argv[1][0] == 'r')
		reused();
	else
		unseen();
	puts("done");
	return 0;
}
