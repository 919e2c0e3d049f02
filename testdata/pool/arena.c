/* A program with its own arena allocator, annotated with weave_api.h's pool
   API: its objects are allocations with call chains and types, destroying
   an arena frees them all, and the blocks the arena carves them from are
   not counted (weave_pool_backing). Built with -DVG_POOLS, the same
   requests go to valgrind's VALGRIND_MEMPOOL_* instead; with
   -DCOUNT_BACKING the backing blocks are counted as malloc's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "weave_api.h"

#ifdef VG_POOLS
#include <valgrind/valgrind.h>
#undef weave_pool_alloc
#undef weave_pool_free
#undef weave_pool_destroy
#define weave_pool_alloc(pool, p, n) VALGRIND_MEMPOOL_ALLOC(pool, p, n)
#define weave_pool_free(pool, p) VALGRIND_MEMPOOL_FREE(pool, p)
#define weave_pool_destroy(pool) VALGRIND_DESTROY_MEMPOOL(pool)
#define pool_create(pool) VALGRIND_CREATE_MEMPOOL(pool, 0, 0)
#else
#define pool_create(pool) ((void)0)
#endif
#ifdef COUNT_BACKING
#undef weave_pool_backing
#define weave_pool_backing(expr) (expr)
#endif

enum { CHUNK = 4000 };

struct chunk {
	struct chunk *next;
	_Alignas(16) char mem[CHUNK];
};

struct arena {
	struct chunk *chunks;
	size_t used;
};

static void arena_init(struct arena *a)
{
	a->chunks = NULL;
	a->used = CHUNK;
	pool_create(a);
}

/* Carves n bytes (rounded up to 16) out of the arena's chunks. */
static void *arena_alloc(struct arena *a, size_t n)
{
	void *p;
	n = (n + 15) & ~(size_t)15;
	if (a->used + n > CHUNK) {
		struct chunk *c = weave_pool_backing(malloc(sizeof *c));
		if (!c)
			exit(2);
		c->next = a->chunks;
		a->chunks = c;
		a->used = 0;
	}
	p = a->chunks->mem + a->used;
	a->used += n;
	return p;
}

/* A new T in the arena: the site is the caller's, of type T. */
#define ARENA_NEW(a, T) __extension__ ({ T *p_ = arena_alloc(a, sizeof(T)); weave_pool_alloc(a, p_, sizeof(T)); p_; })

static char *arena_strdup(struct arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = arena_alloc(a, n);
	memcpy(p, s, n);
	weave_pool_alloc(a, p, n);
	return p;
}

static void arena_destroy(struct arena *a)
{
	weave_pool_destroy(a);
	while (a->chunks) {
		struct chunk *c = a->chunks;
		a->chunks = c->next;
		free(c);
	}
	a->used = CHUNK;
}

struct node {
	struct node *next;
	char *name;
	long value;
};

struct pair {
	struct pair *next;
	int k, v;
};

static char *make_name(struct arena *a, int i)
{
	char buf[32];
	snprintf(buf, sizeof buf, "node-%d", i);
	return arena_strdup(a, buf);
}

static struct node *build_list(struct arena *a, int n)
{
	struct node *head = NULL;
	for (int i = 0; i < n; i++) {
		struct node *x = ARENA_NEW(a, struct node);
		x->name = make_name(a, i);
		x->value = i * 7 % 13;
		x->next = head;
		head = x;
	}
	return head;
}

static struct arena keep;
static struct pair *kept;

static void remember(int k, int v)
{
	struct pair *p = ARENA_NEW(&keep, struct pair);
	p->k = k;
	p->v = v;
	p->next = kept;
	kept = p;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	struct arena a;
	long sum = 0, len = 0;
	arena_init(&a);
	arena_init(&keep);
	struct node *list = build_list(&a, n);
	/* Unlink and free every tenth node's name. */
	for (struct node *x = list; x; x = x->next) {
		if (x->value == 0) {
			weave_pool_free(&a, x->name);
			x->name = NULL;
		}
	}
	for (struct node *x = list; x; x = x->next) {
		sum += x->value;
		len += x->name ? (long)strlen(x->name) : 0;
		if (x->value == 12)
			remember((int)x->value, (int)sum);
	}
	char *buf = malloc(64);
	snprintf(buf, 64, "%ld %ld", sum, len);
	printf("sum %s kept %d\n", buf, kept ? kept->v : -1);
	free(buf);
	arena_destroy(&a);
	return 0;
}
