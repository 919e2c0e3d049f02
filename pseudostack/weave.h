/* weave.h: the interface between woven code and the weave runtime (ABI 2).

   The weaver pastes this file, unchanged, at the top of every woven
   translation unit, before its first linemarker (for the compiler alone,
   weave cc, with the inline fast paths the unit does not call blanked:
   pseudostack.Trim); the runtime includes it.
   Woven code is compiled with -x cpp-output, so this file must stay free of
   preprocessor directives and macros, and warning-free at -Wall -Wextra
   under gcc and clang.

   The ABI number above (pseudostack/abi.go) names a symbol the runtime
   defines and every woven x86-64 object references: raise it when a change
   here is not append-only, so that objects woven before fail to link.

   Per thread the runtime keeps cur, the calling-context-tree node of the
   innermost woven function. Each woven function body starts with

     struct __weave_frame __weave_f __attribute__((cleanup(__weave_leave), unused))
         = __weave_enter(&FNS[k]);

   __weave_enter moves cur to its child for that function (created on
   first use) and returns the node to go back to, which the guard holds
   (the frame, one word); the cleanup guard goes back on every return
   path, after the return value is computed. The calls that are on the
   way are the frames' own: the woven code keeps no stack of them (a
   frame is one store at its entry and one at its exit, and one register
   or stack word across the function). After setjmp returns (either time)
   the woven code calls __weave_setjmp_return so that cur re-synchronises
   to the frame that called setjmp. Allocation calls go to __weave_malloc
   & co. with a static site record.

   Timing (WEAVE_TIME; runtime/timing.c) and function tracepoints keep a
   stack of the frames they time, stack[1..depth] (stack[0] the thread's
   root): in exact mode the runtime sets the thread's timing byte, which
   sends every enter to __weave_enter_timed: the same move of cur, plus a
   slot with the node, its parent and an entry timestamp. Such a frame
   comes back tagged __WEAVE_TIMED, so that the untimed pop costs nothing
   more than before: only when its one test fails does it look for timed
   frames, which go to __weave_leave_timed. In sampled and off modes the
   fast paths take no timestamps, and the timing byte costs one
   predictable branch per enter. cur is stored with relaxed atomic
   stores, so that other threads may read it without a data race.

   The fast paths below are gnu_inline + always_inline: they are inlined into
   woven code and never emitted there; the runtime defines the same functions
   out of line (generated from this file: pseudostack.OutOfLine), so taking
   their address or building without inlining still links. */

typedef __typeof__(sizeof 0) __weave_size_t;

/* A woven function. One static record per function definition. */
struct __weave_fn {
	const char *name;
	const char *file; /* original source file, from the linemarkers */
	unsigned line;    /* line of the function's name */
	unsigned flags;   /* __WEAVE_FN_* */
};

/* __weave_fn.flags: woven without a frame (--frames auto found that it
   cannot be on an allocation chain); its time goes to its caller. */
enum { __WEAVE_FN_FRAMELESS = 1 };

/* __weave_fn.flags: framed around its calls that may allocate, not at its
   entry (--frames auto; the calls framed where they are made, at the end
   of this file); its calls counted are those calls. */
enum { __WEAVE_FN_CALLS = 2 };

/* A woven unit with frameless functions, or woven with a pointcut (weave
   --alloc, --exclude & co.), registers its function table from a
   constructor, so that the profile can count them and record the pointcut
   (the flags as text, or 0), which the runtime copies; the runtime keeps
   it, through next, until its destructor unregisters it (exit, dlclose). */
struct __weave_unit {
	const struct __weave_fn *fns;
	unsigned n;
	struct __weave_unit *next;
	const char *pointcut;
};
void __weave_register_unit(struct __weave_unit *u);
void __weave_unregister_unit(struct __weave_unit *u);

/* A woven main's entry and return (a cleanup's): the thread returning from
   the outermost main owns the way out, as one calling exit does, before
   the C library's exit (which the runtime cannot interpose there) runs
   the handlers. */
int __weave_main_enter(void);
void __weave_main_return(int *call);

/* Allocation operations, stored in __weave_site.op. */
enum __weave_op {
	__WEAVE_MALLOC = 1,
	__WEAVE_CALLOC,
	__WEAVE_REALLOC,
	__WEAVE_REALLOCARRAY,
	__WEAVE_FREE,
	__WEAVE_STRDUP,
	__WEAVE_STRNDUP,
	__WEAVE_ALIGNED_ALLOC,
	__WEAVE_POSIX_MEMALIGN,
	__WEAVE_MEMALIGN,
	__WEAVE_VALLOC,
	__WEAVE_PVALLOC,
	__WEAVE_POOL_ALLOC /* weave_pool_alloc (weave_api.h) */
};

/* A call site of an allocation function. One static record per call. */
struct __weave_site {
	const struct __weave_fn *fn; /* enclosing function */
	const char *file;
	unsigned line, col;
	unsigned op;                 /* enum __weave_op */
	unsigned flags;              /* __WEAVE_SITE_* */
	const char *type;            /* T of sizeof(T) in the size argument, or 0 */
	__weave_size_t type_size;    /* sizeof(T), or 0 */
};

/* __weave_site.flags: fn is 0 and the blocks are charged to the caller's
   frame: the entry of a declared allocator defined in woven code (for its
   calls through pointers), or a site in a function excluded by --exclude &
   co. */
enum { __WEAVE_SITE_CALLER = 2 };

/* __weave_site.flags: the enclosing function fn has no frame (it is an
   allocation leaf: its only calls that may allocate are its own advised
   allocations); an allocation here makes fn's node, the child of the
   current one, as its entry would have, and records under it. */
enum { __WEAVE_SITE_FRAME = 1 };

/* The first fields of a context-tree node; the rest is private to the
   runtime. key is the __weave_fn (function nodes) or __weave_site (allocation
   leaves) the node stands for; cache is the child most recently entered from
   this node, never 0 (the runtime points it at a dummy node); up is the
   parent node (0 for a thread's root and the runtime's dummies). Nodes are
   per thread and never freed, so a node whose up is the current node cur
   is cur's child for its key: the x86-64 guard's site cache rests on
   that. */
struct __weave_node {
	const void *key;
	struct __weave_node *cache;
	unsigned long long calls;
	struct __weave_node *up;
};

/* One entry of the timed frames' stack (the runtime's: woven code does
   not read it): the frame's node, the node its pop goes back to, and its
   entry timestamp. */
struct __weave_slot {
	struct __weave_node *node;
	struct __weave_node *parent;
	unsigned long long t0;
};

/* The second-level child cache: per thread, direct-mapped by
   __weave_cc_index, (parent, function) -> child. It answers when a node's
   one-entry cache misses because the function calls several functions in
   turn (an interpreter loop, a tree builder calling itself and an
   allocator). Woven code reads child first, then the tags; the runtime
   writes an entry key first (to 0), then child and parent, then key, so an
   entry rewritten by a signal handler in between fails the tag check.
   A thread's first cache is small (its pages are resident memory of
   every thread); the runtime replaces it by one of __WEAVE_CC_SIZE
   entries once it keeps losing entries to others. Woven code reads the
   thread's ccmask before cc, and the runtime writes a larger cache before
   its mask: a signal handler's woven code that grows it in between leaves
   an index that is in range for either cache (the first stays mapped). */
struct __weave_cc {
	struct __weave_node *parent;
	const void *key;
	struct __weave_node *child;
};

enum { __WEAVE_CC_SIZE = 1024 }; /* the largest */

/* Per-thread state. lim == 0 until the thread is set up, which sends the
   first __weave_enter of every thread to the slow path. timing != 0 (set by
   the runtime in exact mode, and while function tracepoints are on) sends
   every enter to __weave_enter_timed. lim is what the fast paths test for
   both: 0 while the thread is not set up or timing is set, else not 0
   (cap - 1); whoever sets timing zeroes lim after it, and the owner's
   slow path sets it back (runtime/internal.h, lim_update). stack, depth
   and cap are the timed frames' stack (the runtime's). cc holds ccmask +
   1 entries, a power of two (one, empty, until the thread is set up). */
struct __weave_thread {
	struct __weave_node *cur;    /* the innermost frame's node */
	struct __weave_slot *stack;
	unsigned depth, cap;
	unsigned char timing;
	unsigned lim;
	struct __weave_cc *cc;
	unsigned ccmask;
};

/* The entry of (p, fn) in a cache of mask + 1 entries. */
extern __inline __attribute__((__gnu_inline__, __always_inline__)) unsigned
__weave_cc_index(const struct __weave_node *p, const struct __weave_fn *fn, unsigned mask)
{
	/* Nodes are 64-byte aligned, records 8-byte aligned. */
	__weave_size_t x = ((__weave_size_t)p >> 6) + ((__weave_size_t)fn >> 3) * 0x9e3779b1u;
	return (unsigned)(x ^ (x >> 10)) & mask;
}

/* What a woven function's guard holds, one word v:
   - a node (64-byte aligned: its low six bits, __WEAVE_TAGS, are 0): the
     enter moved cur from that node, and the pop moves it back;
   - __WEAVE_NOT_PUSHED set: the enter did not move cur (the runtime off
     or busy); v & ~__WEAVE_TAGS is cur as it found it (0 if unknown);
   - __WEAVE_TIMED set: a timed frame (exact mode, a traced function),
     whose slot is stack[(v >> __WEAVE_DEPTH_SHIFT) + 1]; its pop goes to
     __weave_leave_timed. Bit 2 is the runtime's (a traced frame).
   One word, so the pop is one store, and a signal handler's woven code
   between the enter's loads and its store leaves it right. */
struct __weave_frame {
	__weave_size_t v;
};

enum { __WEAVE_NOT_PUSHED = 1, __WEAVE_TIMED = 2, __WEAVE_TAGS = 63, __WEAVE_DEPTH_SHIFT = 6 };

extern __thread struct __weave_thread __weave_tls;

struct __weave_frame __weave_enter_slow(const struct __weave_fn *fn);
struct __weave_frame __weave_enter_timed(const struct __weave_fn *fn);
void __weave_leave_timed(__weave_size_t v); /* a timed frame's word */

/* The guard as calls, for code compiled without optimisation (no
   __OPTIMIZE__: the weaver picks them, guardVariant). There the inline
   C below is inlined all the same (always_inline), each of its locals a
   slot of the woven function's frame: 144 bytes more a frame under gcc
   -O0, 176 under clang, where the guard alone is 16; a program recursing
   deep ran out of stack four times sooner than unwoven. The calls (to
   the same C, enter.c) leave only the guard in the frame. */
struct __weave_frame __weave_enter_call(const struct __weave_fn *fn);
void __weave_leave_call(struct __weave_frame *f);
struct __weave_frame __weave_enter_ptr_call(const struct __weave_fn *fn, __weave_size_t t);

extern __inline __attribute__((__gnu_inline__, __always_inline__)) struct __weave_frame
__weave_enter(const struct __weave_fn *fn)
{
	struct __weave_thread *t = &__weave_tls;
	struct __weave_node *p, *c;
	struct __weave_frame f;
	if (__builtin_expect(t->timing, 0))
		return __weave_enter_timed(fn);
	if (__builtin_expect(__atomic_load_n(&t->lim, 0 /* __ATOMIC_RELAXED */) == 0, 0))
		return __weave_enter_slow(fn);
	p = t->cur;
	c = p->cache;
	if (__builtin_expect(c->key != fn, 0)) {
		/* The mask before the cache (acquire: the compiler keeps the
		   order). */
		unsigned m = __atomic_load_n(&t->ccmask, 2 /* __ATOMIC_ACQUIRE */);
		struct __weave_cc *e = &t->cc[__weave_cc_index(p, fn, m)];
		c = e->child;
		__atomic_signal_fence(5 /* __ATOMIC_SEQ_CST */);
		if (e->parent != p || e->key != fn)
			return __weave_enter_slow(fn);
		p->cache = c;
	}
	c->calls++;
	__atomic_signal_fence(5 /* __ATOMIC_SEQ_CST */);
	__atomic_store_n(&t->cur, c, 0 /* __ATOMIC_RELAXED */);
	/* Hide from the optimiser that p is non-null here: otherwise it may
	   duplicate the rest of the woven function onto the fast and slow
	   paths (code growth, and calls from two return addresses). */
	__asm__("" : "+r"(p));
	f.v = (__weave_size_t)p;
	return f;
}

extern __inline __attribute__((__gnu_inline__, __always_inline__)) void
__weave_leave(struct __weave_frame *f)
{
	struct __weave_thread *t = &__weave_tls;
	if (__builtin_expect((f->v & __WEAVE_TAGS) == 0, 1)) {
		__atomic_store_n(&t->cur, (struct __weave_node *)f->v, 0 /* __ATOMIC_RELAXED */);
	} else if (f->v & __WEAVE_TIMED) {
		/* By value: the frame's address must not escape, or the
		   untimed path above would keep it in memory. */
		__weave_leave_timed(f->v);
	}
}

/* __weave_enter and __weave_leave for x86-64 (LP64) under gcc >= 11 and
   clang >= 14 without AVX, which the weaver uses there. The same
   operations, in the same order, as one asm statement each, slow paths
   included: the inliner counts an `asm inline` statement as one
   instruction, so a framed function stays as small to it as the plain
   one and is inlined where the plain build inlines it; and gcc compiles
   an asm statement in next to no time (woven lapi.c of Lua compiled in
   twice the time of the plain one with the C fast paths). The asm
   addresses the thread's fields %fs-relative from the offset of
   __weave_tls from the thread pointer, o, which gcc and clang fold into
   the load of the initial-exec offset (gottpoff) in an executable, and
   compute from __tls_get_addr in a shared object. It has no memory
   operands (but the enter's function record, read only): one per field
   cost gcc 0.8 s of Lua's 4.8 s build, and one for the whole structure
   made gcc keep o twice across the function (a register more). No inline
   code of a woven unit reads the thread's fields or the nodes; the
   runtime's code that does runs in calls, which the compilers do not
   move across a volatile asm (a scheduling barrier).

   The enter differs from the C one in two ways. It tests lim alone, not
   the timing byte too. And it looks its node up in a site cache first:
   a word in .data per copy of the asm (per framed function, and per
   place it is inlined into), the node it entered last, which it takes
   when that node's up is cur: nodes are per thread and never freed, so
   that node is cur's child for this function, and a node of another
   thread never matches. One word, so threads need no lock to read it; it
   is written only while one thread runs (__weave_solo). It misses far
   less than the node's one-entry cache: Lua's interpreter enters many
   functions in turn from one node, each of which is mostly entered from
   one node (alloc.lua: 23% misses against 48%).

   The rare paths (timing byte set, all caches missed, stack full; a
   timed leave) are out of the way, in a section of their own,
   .text.unlikely.__weave, which the linker puts with the cold code: not
   .text.unlikely itself, where gcc puts cold functions and the cold parts
   of functions, so that an asm placed there is never followed by its
   rare paths (it would fall into them: an endless loop). They call the
   runtime's __weave_enter_stub and __weave_leave_stub from the asm, below
   the red zone: they keep every
   register but rax (the enter's result) and the vector
   registers xmm0-15, which is all that code compiled without AVX keeps
   in registers (the weaver takes the C fast paths under __AVX__). The
   enter's rare path saves rax itself, so that the compiler may
   put the frame in any register: pinned to rax (the stub's
   result), it was moved out of it in most framed functions (sqlite3
   and Lua: two instructions more a call). Not
   declared here: they are the runtime's, with attributes (enter.c) that
   only their definitions need.

   The offsets in the templates are the x86-64 layout of the structures
   above, which enter.c checks (fewer operands: 0.2 s less of Lua's
   build). o comes from __builtin_thread_pointer: gcc >= 11, clang
   >= 14 (older ones take the C fast paths). */

extern unsigned char __weave_solo;

/* The offset of the thread's __weave_tls from the thread pointer tp, in
   unsigned arithmetic: under -ftrapv a pointer difference is a call of
   __subvdi3, which gcc 12 with -fPIC passes without its second argument
   (every framed function of openssh's openbsd-compat then crashed). The
   compiler folds it as before into the load of __weave_tls's offset. */
extern __inline __attribute__((__gnu_inline__, __always_inline__)) __weave_size_t
__weave_tls_offset(const void *tp)
{
	return (__weave_size_t)&__weave_tls - (__weave_size_t)tp;
}


extern __inline __attribute__((__gnu_inline__, __always_inline__)) struct __weave_frame
__weave_enter_x64o(const struct __weave_fn *fn, __weave_size_t o)
{
	struct __weave_node *p, *c;
	__weave_size_t x, y;
	struct __weave_frame f;
	__asm__ volatile __inline__(
		/* the site cache (5:), first a pseudo-node whose up (at 24) is
		   the slot itself */
		".pushsection .data\n\t"
		".balign 8\n"
		"5:\n\t"
		".quad 5b-24\n\t"
		".popsection\n\t"
		"movq %%fs:0(%[o]), %[p]\n\t"
		"cmpl $0, %%fs:28(%[o])\n\t"
		"je 8f\n\t"
		"movq 5b(%%rip), %[c]\n\t"
		"cmpq %[p], 24(%[c])\n\t"
		"jne 7f\n"
		/* the move */
		"1:\n\t"
		"incq 16(%[c])\n\t"
		"movq %[c], %%fs:0(%[o])\n"
		"9:\n\t"
		".pushsection .text.unlikely.__weave,\"ax\",@progbits\n"
		/* out of the way: p's one-entry cache */
		"7:\n\t"
		"movq 8(%[p]), %[c]\n\t"
		"leaq %[fn], %[y]\n\t"
		"cmpq %[y], 0(%[c])\n\t"
		"jne 6f\n"
		/* c found: the site caches it if it is p's own child (not
		   a recursion folded to an ancestor) while one thread runs
		   (so that threads do not take the cache line in turn) */
		"4:\n\t"
		"cmpq %[p], 24(%[c])\n\t"
		"jne 1b\n\t"
		"movq __weave_solo@GOTPCREL(%%rip), %[x]\n\t"
		"cmpb $0, (%[x])\n\t"
		"je 1b\n\t"
		"movq %[c], 5b(%%rip)\n\t"
		"jmp 1b\n"
		/* the second-level cache, __weave_cc_index(p, fn, ccmask) */
		"6:\n\t"
		"movq %[p], %[x]\n\t"
		"shrq $6, %[x]\n\t"
		"shrq $3, %[y]\n\t"
		"movl $0x9e3779b1, %k[c]\n\t"
		"imulq %[c], %[y]\n\t"
		"addq %[y], %[x]\n\t"
		"movq %[x], %[y]\n\t"
		"shrq $10, %[y]\n\t"
		"xorl %k[y], %k[x]\n\t"
		"andl %%fs:40(%[o]), %k[x]\n\t"
		"imulq $24, %[x], %[x]\n\t"
		"addq %%fs:32(%[o]), %[x]\n\t"
		"movq 16(%[x]), %[c]\n\t"
		"cmpq %[p], 0(%[x])\n\t"
		"jne 8f\n\t"
		"leaq %[fn], %[y]\n\t"
		"cmpq %[y], 8(%[x])\n\t"
		"jne 8f\n\t"
		"movq %[c], 8(%[p])\n\t"
		"jmp 4b\n"
		/* the rare paths: __weave_enter_stub(fn), its result (rax)
		   moved to p through the stack after the registers it may
		   change are back, whichever p is */
		"8:\n\t"
		"leaq -128(%%rsp), %%rsp\n\t"
		"pushq %%rax\n\t"
		"pushq %%rdi\n\t"
		"leaq %[fn], %%rdi\n\t"
		"call __weave_enter_stub@PLT\n\t"
		"pushq %%rax\n\t"
		"movq 8(%%rsp), %%rdi\n\t"
		"movq 16(%%rsp), %%rax\n\t"
		"movq (%%rsp), %[p]\n\t"
		"leaq 152(%%rsp), %%rsp\n\t"
		"jmp 9b\n\t"
		".popsection"
		: [p] "=&r"(p), [c] "=&r"(c), [x] "=&r"(x), [y] "=&r"(y)
		: [fn] "m"(*fn), [o] "r"(o)
		: "cc");
	f.v = (__weave_size_t)p;
	return f;
}

extern __inline __attribute__((__gnu_inline__, __always_inline__)) void
__weave_leave_x64o(struct __weave_frame *f, __weave_size_t o)
{
	__asm__ volatile __inline__(
		"testb %[tags], %b[v]\n\t"
		"jnz 1f\n\t"
		"movq %[v], %%fs:0(%[o])\n"
		"2:\n\t"
		/* out of the way: not pushed; a timed frame: __weave_leave_stub(v) */
		".pushsection .text.unlikely.__weave,\"ax\",@progbits\n"
		"1:\n\t"
		"testb %[timed], %b[v]\n\t"
		"jz 2b\n\t"
		"leaq -128(%%rsp), %%rsp\n\t"
		"pushq %%rdi\n\t"
		"movq %[v], %%rdi\n\t"
		"call __weave_leave_stub@PLT\n\t"
		"popq %%rdi\n\t"
		"leaq 128(%%rsp), %%rsp\n\t"
		"jmp 2b\n\t"
		".popsection"
		:
		: [v] "r"(f->v), [o] "r"(o), [tags] "i"(__WEAVE_TAGS), [timed] "i"(__WEAVE_TIMED)
		: "cc");
}

/* The guard's entry points, by how they get o, the thread's offset from
   the thread pointer. _x64: __builtin_thread_pointer (gcc >= 11, clang
   >= 14), which the compiler folds into the load of __weave_tls's offset.
   _fsx64, for gcc 9 and 10 and clang 11 to 13: the thread pointer read
   from %fs:0, where the x86-64 TLS ABI keeps it (an instruction or two
   more per function). The weaver picks one (guardVariant). */
extern __inline __attribute__((__gnu_inline__, __always_inline__)) struct __weave_frame
__weave_enter_x64(const struct __weave_fn *fn)
{
	return __weave_enter_x64o(fn, __weave_tls_offset(__builtin_thread_pointer()));
}

extern __inline __attribute__((__gnu_inline__, __always_inline__)) void
__weave_leave_x64(struct __weave_frame *f)
{
	__weave_leave_x64o(f, __weave_tls_offset(__builtin_thread_pointer()));
}

extern __inline __attribute__((__gnu_inline__, __always_inline__)) struct __weave_frame
__weave_enter_fsx64(const struct __weave_fn *fn)
{
	char *tp;
	__asm__("{movq %%fs:0, %0|mov %0, QWORD PTR fs:0}" : "=r"(tp));
	return __weave_enter_x64o(fn, __weave_tls_offset(tp));
}

extern __inline __attribute__((__gnu_inline__, __always_inline__)) void
__weave_leave_fsx64(struct __weave_frame *f)
{
	char *tp;
	__asm__("{movq %%fs:0, %0|mov %0, QWORD PTR fs:0}" : "=r"(tp));
	__weave_leave_x64o(f, __weave_tls_offset(tp));
}

/* A function that calls setjmp enters through __weave_enter_slot, which
   also gives its frame a slot on the timed frames' stack (a timed frame's
   word, whether timed or not), and calls __weave_setjmp_return with
   setjmp's result and its guard f; it returns v. It re-synchronises cur
   and the stack's depth after a longjmp dropped frames: the caller is
   again the innermost frame. */
struct __weave_frame __weave_enter_slot(const struct __weave_fn *fn);
int __weave_setjmp_return(struct __weave_frame *f, int v);

/* Allocation advice. Each behaves exactly like the library function it
   stands for (same result, same errno), and records the block. They carry
   the library's size and alignment attributes: the compiler knows the
   block's size as it knows malloc's, for _FORTIFY_SOURCE's checks of heap
   buffers and its warnings. Not the malloc attribute: gcc would then
   drop stores into a block it sees no later read of (a leaked cycle's
   links), and a leak's kind would be the optimiser's, not the source's,
   as the counts are the source's. gcc's deallocators: adviceAttributes
   (weave/weave.go). */
void *__weave_malloc(const struct __weave_site *s, __weave_size_t n)
	__attribute__((__alloc_size__(2)));
void *__weave_calloc(const struct __weave_site *s, __weave_size_t n, __weave_size_t size)
	__attribute__((__alloc_size__(2, 3)));
void *__weave_realloc(const struct __weave_site *s, void *p, __weave_size_t n)
	__attribute__((__alloc_size__(3)));
void *__weave_reallocarray(const struct __weave_site *s, void *p, __weave_size_t n, __weave_size_t size)
	__attribute__((__alloc_size__(3, 4)));
void __weave_free(const struct __weave_site *s, void *p);
char *__weave_strdup(const struct __weave_site *s, const char *str);
char *__weave_strndup(const struct __weave_site *s, const char *str, __weave_size_t n);
void *__weave_aligned_alloc(const struct __weave_site *s, __weave_size_t align, __weave_size_t n)
	__attribute__((__alloc_align__(2), __alloc_size__(3)));
int __weave_posix_memalign(const struct __weave_site *s, void **p, __weave_size_t align, __weave_size_t n);
void *__weave_memalign(const struct __weave_site *s, __weave_size_t align, __weave_size_t n)
	__attribute__((__alloc_align__(2), __alloc_size__(3)));
void *__weave_valloc(const struct __weave_site *s, __weave_size_t n)
	__attribute__((__alloc_size__(2)));
void *__weave_pvalloc(const struct __weave_site *s, __weave_size_t n);
/* weave_pool_alloc(pool, p, n) of weave_api.h, woven (runtime/pool.c). */
void __weave_weave_pool_alloc(const struct __weave_site *s, const void *pool, const void *p, __weave_size_t n);

/* Declared allocators (weave --alloc/--calloc/--realloc/--free, or
   __attribute__((malloc, alloc_size))): a call F(args) is woven as

     __extension__ ({ struct __weave_outer __wo
             __attribute__((cleanup(__weave_outer_left))) = __weave_outer_begin(&SITE);
         __auto_type __wr = F(..., __weave_outer_ptr(&__wo, P), ..., __weave_outer_size(&__wo, S));
         __wr = (__typeof__(__wr))__weave_outer_ret(&__wo, __wr); __wo.state = 0; __wr; })

   (a free-style F: no __wr, and __weave_outer_end the cleanup). While the
   outermost such call runs, the thread's allocations are not recorded (the
   wrapper's own malloc, woven or not); its end records the returned block
   once, at SITE, with the size argument, and a free-style or realloc-style
   call forgets its pointer argument before F runs. The block's pointer
   goes from F's result through __weave_outer_ret's and is kept nowhere
   else: the compiler needs no callee-saved register for it across a call
   of the runtime's (left there until exit, in main's frame, it kept the
   block reachable, where the plain program held no pointer to it), and
   the cleanup, which sees state 0, calls nothing. It ends a call that
   left its statement expression otherwise (a return in an argument). */
struct __weave_outer {
	const struct __weave_site *site;
	const void *ret;
	__weave_size_t size, count;
	unsigned long long old_addr, old_val; /* runtime's */
	int state;                            /* runtime's */
};
struct __weave_outer __weave_outer_begin(const struct __weave_site *s);
void *__weave_outer_ptr(struct __weave_outer *o, const void *p);
void __weave_outer_end(struct __weave_outer *o);
void *__weave_outer_ret(struct __weave_outer *o, const void *ret);

extern __inline __attribute__((__gnu_inline__, __always_inline__)) void
__weave_outer_left(struct __weave_outer *o)
{
	if (o->state)
		__weave_outer_end(o);
}

extern __inline __attribute__((__gnu_inline__, __always_inline__)) __weave_size_t
__weave_outer_size(struct __weave_outer *o, __weave_size_t n)
{
	o->size = n;
	return n;
}

extern __inline __attribute__((__gnu_inline__, __always_inline__)) __weave_size_t
__weave_outer_count(struct __weave_outer *o, __weave_size_t n)
{
	o->count = n;
	return n;
}

/* Calls framed where they are made (--frames auto). A function that can
   be on an allocation chain only through its calls of function pointers,
   of other such functions, on cold paths, or through one call outside
   loops (weave/frames.go) has no guard at its entry: its frame is pushed
   around those calls alone, as

     __extension__ ({ __auto_type __weave_pN = (CALLEE);
         struct __weave_frame __weave_cN __attribute__((cleanup(__weave_leave), unused))
             = __weave_enter_ptr(&FNS[k], (__weave_size_t)__weave_pN);
         __weave_pN(ARGS); })

   (a direct call of another such function: the enter alone), so that the
   chains below are those of a framed function. __weave_known holds the
   addresses of woven functions that cannot allocate (frameless, whose
   address their unit takes), which each unit registers from a
   constructor (__weave_register_known; known.c): a call of one needs no
   frame. Direct-mapped by __weave_known_index, each function in one of
   two neighbouring slots; a slot, once set, changes only when its unit
   is unloaded. */
enum { __WEAVE_KNOWN_SIZE = 4096 };
extern __weave_size_t __weave_known[__WEAVE_KNOWN_SIZE];
void __weave_register_known(void (*const *fns)(void), unsigned n);
void __weave_unregister_known(void (*const *fns)(void), unsigned n);

extern __inline __attribute__((__gnu_inline__, __always_inline__)) unsigned
__weave_known_index(__weave_size_t p)
{
	return (unsigned)((p * 0x9e3779b97f4a7c15ull) >> 52) & (__WEAVE_KNOWN_SIZE - 2);
}

extern __inline __attribute__((__gnu_inline__, __always_inline__)) int
__weave_known_fn(__weave_size_t p)
{
	unsigned i = __weave_known_index(p);
	return __atomic_load_n(&__weave_known[i], 0 /* __ATOMIC_RELAXED */) == p ||
	       __atomic_load_n(&__weave_known[i + 1], 0 /* __ATOMIC_RELAXED */) == p;
}

extern __inline __attribute__((__gnu_inline__, __always_inline__)) struct __weave_frame
__weave_no_frame(void)
{
	struct __weave_frame f;
	f.v = __WEAVE_NOT_PUSHED;
	return f;
}

/* The enter of a call through pointer t framed where it is made: no frame
   when t is a function known not to allocate, else __weave_enter(fn). */
extern __inline __attribute__((__gnu_inline__, __always_inline__)) struct __weave_frame
__weave_enter_ptr(const struct __weave_fn *fn, __weave_size_t t)
{
	return __weave_known_fn(t) ? __weave_no_frame() : __weave_enter(fn);
}

/* The same with the x86-64 guard: the lookup in __weave_known
   (__weave_known_index, both slots) as one `asm inline goto` statement,
   which the inliner counts as one instruction, as it does the enter's
   asm: in C it made a small function that calls through a pointer (a
   method wrapper, sqlite's sqlite3OsRead) too big to be inlined where the
   plain build inlines it. r10 and r11 are its scratch registers (an asm
   goto may have no outputs before gcc 11). The table's address comes
   from the GOT (the linker makes it a lea in an executable): as an
   operand, it was a PC-relative reference that a -shared link of an
   object compiled with the compiler's defaults (PIE) rejects. A word in
   .data per copy of the asm holds the last target the lookup did not
   find (written while one thread runs, as the enter's site cache): a
   call of it again takes the frame after one compare, not the lookup's
   nine instructions (Lua's luaM_free_ calls l_alloc through g->frealloc
   every time). A target found stays looked up each call: a word holding
   one could outlive its unit (dlclose, another function loaded at its
   address), and the frame it skipped would be lost from the chains; a
   stale word here only pushes a frame. */
extern __inline __attribute__((__gnu_inline__, __always_inline__)) struct __weave_frame
__weave_enter_ptr_x64o(const struct __weave_fn *fn, __weave_size_t t, __weave_size_t o)
{
	__asm__ __inline__ goto(/* the site's word (5:): its last target
				   not known, which needs no lookup */
				".pushsection .data\n\t"
				".balign 8\n"
				"5:\n\t"
				".quad 0\n\t"
				".popsection\n\t"
				"cmpq %[t], 5b(%%rip)\n\t"
				"je 2f\n\t"
				"movq __weave_known@GOTPCREL(%%rip), %%r10\n\t"
				"movabsq $0x9e3779b97f4a7c15, %%r11\n\t"
				"imulq %[t], %%r11\n\t"
				"shrq $52, %%r11\n\t"
				"andl %[mask], %%r11d\n\t"
				"cmpq %[t], (%%r10,%%r11,8)\n\t"
				"je %l[known]\n\t"
				"cmpq %[t], 8(%%r10,%%r11,8)\n\t"
				"je %l[known]\n\t"
				"movq __weave_solo@GOTPCREL(%%rip), %%r11\n\t"
				"cmpb $0, (%%r11)\n\t"
				"je 2f\n\t"
				"movq %[t], 5b(%%rip)\n"
				"2:"
				:
				: [t] "r"(t), [mask] "i"(__WEAVE_KNOWN_SIZE - 2)
				: "r10", "r11", "cc"
				: known);
	return __weave_enter_x64o(fn, o);
known:
	return __weave_no_frame();
}

extern __inline __attribute__((__gnu_inline__, __always_inline__)) struct __weave_frame
__weave_enter_ptr_x64(const struct __weave_fn *fn, __weave_size_t t)
{
	return __weave_enter_ptr_x64o(fn, t, __weave_tls_offset(__builtin_thread_pointer()));
}

extern __inline __attribute__((__gnu_inline__, __always_inline__)) struct __weave_frame
__weave_enter_ptr_fsx64(const struct __weave_fn *fn, __weave_size_t t)
{
	char *tp;
	__asm__("{movq %%fs:0, %0|mov %0, QWORD PTR fs:0}" : "=r"(tp));
	return __weave_enter_ptr_x64o(fn, t, __weave_tls_offset(tp));
}

/* The x86-64 guard's other variants, _lex64 (local-exec) and _iex64
   (initial-exec, o loaded in the asm), are generated from the _x64o
   functions above and pasted after this header (variants.go says how
   and why): edit _x64o, never a copy. */
/* A function framed at its calls that one run may make several of (in a
   loop, or two on one path: weave/frames.go) has a guard at its entry
   that pushes nothing (__weave_no_frame); the first of those calls that
   runs pushes the function's frame into it (if not __weave_pushed), and
   it stays until the function returns: one push an activation at most,
   and none when no such call runs (sqlite's vdbeSorterMerge compared
   through a pointer a dozen times an activation, each a push). A guard
   is pushed unless tagged __WEAVE_NOT_PUSHED (its word is its parent
   node, or a timed frame's); one that the enter did not push (runtime
   off or busy) is tried again. */
extern __inline __attribute__((__gnu_inline__, __always_inline__)) int
__weave_pushed(const struct __weave_frame *f)
{
	return (f->v & __WEAVE_NOT_PUSHED) == 0;
}

/* The same for the x86-64 guards, as one `asm inline goto`, which the
   inliner counts as one instruction, as it does the enter. */
extern __inline __attribute__((__gnu_inline__, __always_inline__)) int
__weave_pushed_x64(const struct __weave_frame *f)
{
	__asm__ __inline__ goto("testb %[no], %b[v]\n\t"
				"jz %l[yes]"
				:
				: [v] "r"(f->v), [no] "i"(__WEAVE_NOT_PUSHED)
				: "cc"
				: yes);
	return 0;
yes:
	return 1;
}

/* A call of swapcontext in woven code, as

     __extension__ ({ struct __weave_ctx __wc; __weave_ctx_save(&__wc);
         __weave_ctx_restore(&__wc, swapcontext(O, U)); })

   The pseudo-stack is the thread's, but the context that swapcontext
   suspends keeps its own frames: the context resumed pushes and pops
   over the same slots, and comes back to this call with its own cur and
   depth. The save, on the suspended context's stack, keeps the caller's
   cur and the timed stack's depth and top slots (the slots below the top
   __WEAVE_CTX_SLOTS - 1 in a map of the runtime's, enter.c); the restore, when a swapcontext or
   setcontext of another context resumes this one, puts them back, so the
   calls and allocations that follow are charged under this context's
   chain, not under the other's (TestUcontext). A context resumed on
   another thread is left as that thread has it. */
enum { __WEAVE_CTX_SLOTS = 16 };
struct __weave_ctx {
	struct __weave_thread *t;
	struct __weave_node *cur;
	unsigned depth, n;
	struct __weave_slot slot[__WEAVE_CTX_SLOTS];
};
void __weave_ctx_save(struct __weave_ctx *c);
int __weave_ctx_restore(struct __weave_ctx *c, int v);
