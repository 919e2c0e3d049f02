/* sigsafe.c: a shared library for the signal test: malloc, free, calloc
   and realloc that hold every signal off while the C library's allocator
   runs, so that a handler may allocate whatever it interrupts.

   glibc's malloc is not async-signal-safe: a handler that allocates while
   the interrupted code is inside malloc corrupts its tcache, woven or not
   (the plain build has the same undefined behaviour, only a smaller
   window). Linked before the C library, these are the allocator the
   runtime finds behind its own interposed functions (dlsym RTLD_NEXT), so
   the test exercises the runtime's re-entry alone: a signal landing in
   the runtime's bookkeeping before or after the real call. */
#include <signal.h>
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

#define HELD(expr)                                        \
	sigset_t all, old;                                \
	sigfillset(&all);                                 \
	sigprocmask(SIG_BLOCK, &all, &old);               \
	expr;                                             \
	sigprocmask(SIG_SETMASK, &old, NULL)

void *malloc(size_t n)
{
	void *p;
	HELD(p = __libc_malloc(n));
	return p;
}

void free(void *p)
{
	HELD(__libc_free(p));
}

void *calloc(size_t n, size_t m)
{
	void *p;
	HELD(p = __libc_calloc(n, m));
	return p;
}

void *realloc(void *q, size_t n)
{
	void *p;
	HELD(p = __libc_realloc(q, n));
	return p;
}
