/* A program's own malloc family in a unit of its own, as bash's
   lib/malloc: malloc, free, calloc and realloc are exported (the C
   library's allocations come here too, and the runtime's weak ones lose),
   and heap_get and heap_put are the allocator's own entry points, which
   the program calls directly (bash's sh_xmalloc and sh_xfree) and weave
   does not advise. Each block is a 512-byte chunk from one free list,
   handed out again last in first out; its size is in the header and again
   in the four bytes after the block, and free checks them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CHUNK 512
#define ROOM (CHUNK - 16 - 4)

struct head {
	struct head *next; /* while free */
	unsigned size;
	unsigned magic;
};

static char *arena, *top;
static struct head *free_list;

static void heap_fail(const char *what)
{
	fprintf(stderr, "heap: %s\n", what);
	abort();
}

void *heap_get(size_t n)
{
	struct head *h;
	unsigned sz = (unsigned)n;
	if (n > ROOM)
		return NULL;
	if (free_list) {
		h = free_list;
		free_list = h->next;
	} else {
		if (!arena) {
			arena = mmap(NULL, 64 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (arena == MAP_FAILED)
				heap_fail("no arena");
			top = arena;
		}
		h = (struct head *)top;
		top += CHUNK;
	}
	h->size = sz;
	h->magic = 0x5eed;
	memcpy((char *)(h + 1) + n, &sz, sizeof sz);
	return h + 1;
}

void heap_put(void *p)
{
	struct head *h = (struct head *)p - 1;
	unsigned tail;
	if (!p)
		return;
	if (h->magic != 0x5eed)
		heap_fail("free of a block not allocated");
	memcpy(&tail, (char *)p + h->size, sizeof tail);
	if (tail != h->size)
		heap_fail("start and end sizes differ");
	h->magic = 0;
	h->next = free_list;
	free_list = h;
}

void *malloc(size_t n)
{
	return heap_get(n);
}

void free(void *p)
{
	heap_put(p);
}

void *calloc(size_t n, size_t m)
{
	void *p = n && m > ROOM / n ? NULL : heap_get(n * m);
	if (p)
		memset(p, 0, n * m);
	return p;
}

void *realloc(void *p, size_t n)
{
	void *q = heap_get(n);
	if (q && p) {
		size_t old = ((struct head *)p - 1)->size;
		memcpy(q, p, old < n ? old : n);
		heap_put(p);
	}
	return q;
}
