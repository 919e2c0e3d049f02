/* woven.h: helpers for the hand-written "woven-style" test programs.

   They expand to what the weaver emits: a static struct __weave_fn per
   function, a guard opening each function body, and a static struct
   __weave_site per allocation call. */

#include "weave.h"
#include <signal.h>
#include <string.h>
#include <sys/time.h>

#define FN(name) static const struct __weave_fn fn_##name = {#name, __FILE__, __LINE__, 0}

/* The C guard, or with -DWOVEN_X64 the x86-64 asm one the weaver emits
   there (weave.h's __weave_enter_x64). */
#ifdef WOVEN_X64
#define ENTER(name)                                                                        \
	struct __weave_frame __weave_f __attribute__((cleanup(__weave_leave_x64), unused)) = \
		__weave_enter_x64(&fn_##name)
#else
#define ENTER(name)                                                                    \
	struct __weave_frame __weave_f __attribute__((cleanup(__weave_leave), unused)) = \
		__weave_enter(&fn_##name)
#endif

#define SITE_(fname, op, ty, tysz)                                                  \
	({                                                                          \
		static const struct __weave_site s_ = {&fn_##fname, __FILE__, __LINE__, \
						       0, op, 0, ty, tysz};        \
		&s_;                                                                \
	})
#define SITE(fname, op) SITE_(fname, op, 0, 0)

#define W_MALLOC(f, n) __weave_malloc(SITE(f, __WEAVE_MALLOC), n)
#define W_MALLOC_T(f, T) ((T *)__weave_malloc(SITE_(f, __WEAVE_MALLOC, #T, sizeof(T)), sizeof(T)))
#define W_CALLOC(f, n, s) __weave_calloc(SITE(f, __WEAVE_CALLOC), n, s)
#define W_REALLOC(f, p, n) __weave_realloc(SITE(f, __WEAVE_REALLOC), p, n)
#define W_REALLOCARRAY(f, p, n, s) __weave_reallocarray(SITE(f, __WEAVE_REALLOCARRAY), p, n, s)
#define W_FREE(f, p) __weave_free(SITE(f, __WEAVE_FREE), p)
#define W_STRDUP(f, s) __weave_strdup(SITE(f, __WEAVE_STRDUP), s)
#define W_STRNDUP(f, s, n) __weave_strndup(SITE(f, __WEAVE_STRNDUP), s, n)
#define W_ALIGNED_ALLOC(f, a, n) __weave_aligned_alloc(SITE(f, __WEAVE_ALIGNED_ALLOC), a, n)
#define W_POSIX_MEMALIGN(f, pp, a, n) __weave_posix_memalign(SITE(f, __WEAVE_POSIX_MEMALIGN), pp, a, n)
#define W_MEMALIGN(f, a, n) __weave_memalign(SITE(f, __WEAVE_MEMALIGN), a, n)
#define W_VALLOC(f, n) __weave_valloc(SITE(f, __WEAVE_VALLOC), n)
#define W_PVALLOC(f, n) __weave_pvalloc(SITE(f, __WEAVE_PVALLOC), n)

/* Runs h on SIGPROF every usec microseconds of the process's CPU time
   (SA_RESTART), or stops the timer (usec 0). */
static inline void sigprof_every(void (*h)(int), long usec)
{
	struct sigaction sa;
	struct itimerval it = {{0, usec}, {0, usec}};
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = h;
	sa.sa_flags = SA_RESTART;
	if (usec)
		sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
}
