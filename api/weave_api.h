/* weave_api.h: the weave API (marks and regions) for C programs.

   A program includes it and builds both ways:
   - woven (weave cc, or weave -o): weave preprocesses every file it weaves
     with -D__WEAVE__=1 and finds this header by itself; the macros below
     call the weave runtime that weave links in;
   - not woven (any compiler, after `weave api -o DIR` and -I DIR): they
     compile to nothing and need no runtime. Defining WEAVE_API_OFF does
     the same in a woven build.

   Marks and regions:
     WEAVE_MARK("label");             a point in the profile: its time, the
                                      heap then, and a new generation for the
                                      blocks allocated after it (weave report
                                      --between A B)
     WEAVE_REGION("label") { ... }    everything inside is charged to a
                                      pseudo-function named label (C99: the
                                      block is the body of a one-pass for
                                      loop in both builds, so a break or
                                      continue directly in it leaves the
                                      region, not an enclosing loop)
     weave_region_begin("label");     the same, as a pair of calls in one
     weave_region_end();              function; an end without a begin is
                                      ignored
   A label is any string; the runtime copies it.

   Pools (a program's own allocator: an arena, a free list; valgrind's
   VALGRIND_MEMPOOL_* requests, with no create):
     weave_pool_alloc(pool, p, size); p, carved out of pool, is a block of
                                      size bytes: an allocation at this
                                      call's site (the type of a sizeof in
                                      size), in the current call chain
     weave_pool_free(pool, p);        p is freed
     weave_pool_destroy(pool);        every block of pool still allocated is
                                      freed
     weave_pool_backing(expr)         expr's value; the blocks it allocates
                                      (the pool's malloc of the memory it
                                      carves blocks from) are not counted,
                                      so that the totals count the pool's
                                      blocks, not their memory twice
   pool is any pointer that names the pool (its address).

   The header is one part per feature, each defining its macros in both
   branches below; an added part keeps to that shape. */

#ifndef WEAVE_API_H
#define WEAVE_API_H

#define WEAVE_API_VERSION 1

#define WEAVE_API_CAT_(a, b) a##b
#define WEAVE_API_CAT(a, b) WEAVE_API_CAT_(a, b)
#ifdef __COUNTER__
#define WEAVE_API_UNIQUE(name) WEAVE_API_CAT(name, __COUNTER__)
#else
#define WEAVE_API_UNIQUE(name) WEAVE_API_CAT(name, __LINE__)
#endif

#if defined(__WEAVE__) && !defined(WEAVE_API_OFF)

#ifdef __cplusplus
extern "C" {
#endif

/* Marks and regions (runtime/marks.c, runtime/regions.c). */
void __weave_mark(const char *label);
int __weave_region_begin(const char *label);
void __weave_region_end(void);
void __weave_region_guard(int *level);

/* Pools (runtime/pool.c); the weaver makes each weave_pool_alloc call a
   site. */
void weave_pool_alloc(const void *pool, const void *p, __SIZE_TYPE__ size);
void weave_pool_free(const void *pool, const void *p);
void weave_pool_destroy(const void *pool);
int __weave_pool_backing_begin(void);
void __weave_pool_backing_end(int began);

#ifdef __cplusplus
}
#endif

#define WEAVE_MARK(label) __weave_mark(label)
#define weave_region_begin(label) ((void)__weave_region_begin(label))
#define weave_region_end() __weave_region_end()
#define WEAVE_REGION(label) WEAVE_REGION_(label, WEAVE_API_UNIQUE(__weave_region_open_))
#define WEAVE_REGION_(label, open)                                                       \
	for (int open __attribute__((__cleanup__(__weave_region_guard))) =              \
		     __weave_region_begin(label);                                           \
	     open > 0; open = -open)

#define weave_pool_backing(expr) __extension__ ({ int __weave_pb = __weave_pool_backing_begin(); \
	__auto_type __weave_pr = (expr); __weave_pool_backing_end(__weave_pb); __weave_pr; })

#else /* not woven: nothing */

#define WEAVE_MARK(label) ((void)sizeof(label))
#define weave_region_begin(label) ((void)sizeof(label))
#define weave_region_end() ((void)0)
#define WEAVE_REGION(label) WEAVE_REGION_(label, WEAVE_API_UNIQUE(__weave_region_open_))
#define WEAVE_REGION_(label, open) \
	for (int open = ((void)sizeof(label), 1); open > 0; open = -open)

#define weave_pool_alloc(pool, p, size) ((void)sizeof(pool), (void)sizeof(p), (void)sizeof(size))
#define weave_pool_free(pool, p) ((void)sizeof(pool), (void)sizeof(p))
#define weave_pool_destroy(pool) ((void)sizeof(pool))
#define weave_pool_backing(expr) (expr)

#endif

#endif /* WEAVE_API_H */
