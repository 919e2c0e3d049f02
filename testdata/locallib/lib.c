/* A library that calls the allocator through pointers it took to malloc,
   free, realloc and strdup, as libcurl's Curl_cmalloc & co.: built with
   everything but its API hidden (-fvisibility=hidden, a version script),
   those names are bound inside it. */
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

static void *(*lmalloc)(size_t) = malloc;
static void (*lfree)(void *) = free;
static void *(*lrealloc)(void *, size_t) = realloc;
static char *(*lstrdup)(const char *) = strdup;

API void lib_init(void)
{
	lmalloc = malloc;
	lfree = free;
	lrealloc = realloc;
	lstrdup = strdup;
}

API char *lib_dup(const char *s) { return lstrdup(s); }
API void *lib_alloc(size_t n) { return lmalloc(n); }
API void *lib_grow(void *p, size_t n) { return lrealloc(p, n); }
API void lib_free(void *p) { lfree(p); }
