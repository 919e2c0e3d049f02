/* A program's own allocation wrappers, in their own translation unit. */
#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
void xfree(void *p);
/* Recognised with no configuration, as glib's g_malloc is. */
void *gmalloc(size_t n) __attribute__((malloc, alloc_size(1)));
void *gmalloc_n(size_t count, size_t size) __attribute__((__malloc__, __alloc_size__(1, 2)));
/* Lua's convention: one function for everything, size 0 frees. */
void *l_alloc(void *ud, void *ptr, size_t osize, size_t nsize);
