/* Leaks whose addresses the runtime keeps copies of, in memory of its own
   that is no root: blocks from an allocation site traced (WEAVE_TRACE=
   alloc:*, its events hold every block's address), and objects of a pool
   still alive (weave_api.h's pool API; its table maps each object to its
   pool) whose pointers the program drops. Built with -DVG_POOLS, the pool
   requests go to valgrind's VALGRIND_MEMPOOL_* instead, for memcheck's
   kinds of the same blocks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "weave_api.h"

#ifdef VG_POOLS
#include <valgrind/valgrind.h>
#undef weave_pool_alloc
#define weave_pool_alloc(pool, p, n) VALGRIND_MEMPOOL_ALLOC(pool, p, n)
#define pool_create(pool) VALGRIND_CREATE_MEMPOOL(pool, 0, 0)
#else
#define pool_create(pool) ((void)0)
#endif

struct node {
	struct node *next;
	char pad[24];
};

/* A pool of fixed-size objects carved from one backing block, kept by a
   global for the whole run. */
static struct {
	char *mem;
	size_t used;
} pool;

void *volatile kept; /* volatile: the compiler must keep every store */

static __attribute__((noinline)) struct node *pool_node(void)
{
	struct node *x = (struct node *)(pool.mem + pool.used);
	pool.used += sizeof *x;
	weave_pool_alloc(&pool, x, sizeof *x); /* site:pooled */
	memset(x, 0, sizeof *x);
	return x;
}

/* A list of n pool objects, its head dropped: 1 definitely lost, n-1
   indirectly lost. */
static __attribute__((noinline)) void lose_pooled(int n)
{
	struct node *h = NULL;
	for (int i = 0; i < n; i++) {
		struct node *x = pool_node();
		x->next = h;
		h = x;
	}
	kept = h;
	kept = NULL;
}

/* n malloc'd blocks, each dropped at once: n definitely lost. */
static __attribute__((noinline)) void lose_blocks(int n)
{
	for (int i = 0; i < n; i++) {
		kept = malloc(40); /* site:traced */
		kept = NULL;
	}
}

static __attribute__((noinline)) void scrub(void)
{
	volatile char buf[16384];
	memset((char *)buf, 0, sizeof buf);
}

int main(void)
{
	pool.mem = weave_pool_backing(malloc(64 * sizeof(struct node)));
	pool_create(&pool);
	lose_pooled(8);
	lose_blocks(5);
	scrub();
	puts("done");
	return 0;
}
