/* A debugging allocator as libxml2 2.9's xmlmemory.c has: each block is
   malloc'd behind a header, the caller gets the address after it, and the
   header is what is freed. It is declared alloc_size, not malloc: it is no
   allocator for weave, whose totals must be memcheck's. Only the text
   around it says "malloc": a comment, a macro under -g3 (-dD), a string.
   With -DMALLOC_ATTR it is declared malloc too, an allocator for weave
   (TestHeaderAllocator): each block it records is freed through its
   header's address, which weave has no record of. */
#include <stdio.h>
#include <stdlib.h>

struct hdr {
	size_t size;
	size_t tag;
};

#ifdef MALLOC_ATTR
#define ALLOC_ATTRS __attribute__((malloc, alloc_size(1)))
#else
#define ALLOC_ATTRS __attribute__((alloc_size(1)))
#endif

void *dbg_malloc(size_t size) ALLOC_ATTRS;
void dbg_free(void *p);

static size_t in_use;
void *kept;

#define with_malloc(n) malloc(n)
static const char *what = "malloc";

/**
 * dbg_malloc:
 * a malloc() equivalent, with the block's size in a header
 */
ALLOC_ATTRS void *dbg_malloc(size_t size)
{
	struct hdr *h = with_malloc(sizeof *h + size);
	if (!h)
		return NULL;
	h->size = size;
	h->tag = 0x5a5a;
	in_use += size;
	return h + 1;
}

/* a free() equivalent */
void dbg_free(void *p)
{
	struct hdr *h = (struct hdr *)p - 1;
	in_use -= h->size;
	free(h);
}

int main(void)
{
	void *v[100];
	for (int round = 0; round < 50; round++) {
		for (int i = 0; i < 100; i++)
			v[i] = dbg_malloc(1 + (size_t)(i * 37 + round) % 200);
		for (int i = 0; i < 100; i++)
			dbg_free(v[i]);
	}
	kept = dbg_malloc(64);  /* possibly lost: only a pointer past its header */
	v[0] = dbg_malloc(24);  /* definitely lost */
	v[0] = NULL;
	printf("%s: %zu in use\n", what, in_use);
	return 0;
}
