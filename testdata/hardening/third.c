/* A third-party library, built without weave: its allocations are hidden
   ones, and it frees and grows blocks the woven program allocated. */
#include <stdlib.h>
#include <string.h>

struct third_rec {
	char *name;
	int n;
};

void *third_cache; /* not static: the malloc stays */

/* Runs before the program's constructors, and the runtime's. */
__attribute__((constructor)) static void third_init(void)
{
	third_cache = malloc(123);
}

struct third_rec *third_new(const char *name)
{
	struct third_rec *r = malloc(sizeof *r);
	r->name = strdup(name);
	r->n = 0;
	return r;
}

void third_free(struct third_rec *r)
{
	free(r->name);
	free(r);
}

/* Frees a block it did not allocate. */
void third_drop(void *p) { free(p); }

/* Grows a block it did not allocate. */
char *third_grow(char *p, size_t n) { return realloc(p, n); }

/* Leaves a block to the caller, who frees it. */
char *third_copy(const char *s) { return strdup(s); }
