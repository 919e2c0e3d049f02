//go:build ignore

/* pseudostack.h: the pseudo-stack and calling-context tree's types and
   what its parts (cct.c, enter.c, known.c, timed.c) offer the
   rest of the runtime. The woven-code side of the same structures is
   weave.h (struct __weave_node, __weave_slot, __weave_thread); a node is
   a struct rt_node whose first member is the public struct __weave_node.
   Included by runtime/internal.h after its types (u32, u64, wsize). */

#ifndef WEAVE_PSEUDOSTACK_H
#define WEAVE_PSEUDOSTACK_H

struct heapc;     /* an allocation leaf's counters: the runtime's (internal.h) */
struct rt_thread; /* a thread known to the runtime (internal.h) */
struct rt_local;

#define NODE_BITS 28
#define MAX_NODES (1u << NODE_BITS)
#define NODE_MASK (MAX_NODES - 1)
#define CHUNK_BITS 16
#define CHUNK_NODES (1u << CHUNK_BITS)
#define NCHUNKS (MAX_NODES >> CHUNK_BITS)
#define NODE_BATCH 256u
#define SIZE_BITS (64 - NODE_BITS)
#define SIZE_SAT ((1ull << SIZE_BITS) - 1)
#define CHASH_INIT 32u   /* first child hash: from the shared arena */
#define CHASH_ARENA 256u /* child hashes this large or smaller come from the arena; larger ones are mmap'd */
#define STACK_INIT 4096u
#define MAX_DEPTH (1u << 20)

enum { KIND_R, KIND_F, KIND_A };

struct rt_node {
	struct __weave_node pub; /* key, cache, calls, up (the parent): see weave.h */
	union {
		struct rt_node *acache; /* R, F: the A child used last */
		struct heapc *heap;     /* A: its counters */
	} u;
	u32 self;       /* own index */
	u32 next;       /* next node created by the same thread; 0 at the end */
	u32 thread : 28; /* owner's number (the profile's T id) */
	u32 kind : 2;
	/* Tracepoints (tracepoints/trace.c): selected now; ever selected.
	   Written under g_lock, or by the owner at creation. */
	u32 traced : 1;
	u32 seen : 1;
	/* Exact mode: the depth of the node's outermost open activation, or 0
	   (owner thread). Recursion folding puts one node on the pseudo-stack
	   at several depths; only the outermost activation's time counts, or
	   nested activations would count twice. */
	u32 tdepth;
	/* Timing (pseudostack/timed.c, runtime/timing.c): exact mode, inclusive ticks (owner); sampled
	   mode, CPU ns charged by the owner's signal handler. Relaxed atomic
	   loads and stores. Never initialised: chunks are fresh zeroed mmaps and
	   node indices are never reused. */
	u64 time;
};
/* 64 bytes: nodes are 64-byte aligned (__weave_cc_index, cache lines). */
_Static_assert(sizeof(struct rt_node) == 64, "struct rt_node is 64 bytes");

/* The index of n's parent; 0 for a root. */
static inline u32 node_parent(const struct rt_node *n)
{
	return n->pub.up ? ((const struct rt_node *)(const void *)n->pub.up)->self : 0;
}

/* The word of a frame whose slot is stack[d + 1] (weave.h). */
static inline __weave_size_t time_word(unsigned d)
{
	return (__weave_size_t)d << __WEAVE_DEPTH_SHIFT | __WEAVE_TIMED;
}

/* pseudostack/cct.c */
static struct rt_node *node_new(struct rt_thread *T, const struct rt_node *parent, const void *key, int kind);
static int chash_grow(struct rt_thread *T, int locked);
static struct rt_node *child(struct rt_thread *T, struct rt_node *p, const void *key, int kind);

/* pseudostack/enter.c */
static inline __attribute__((always_inline)) struct __weave_node *fn_child(struct rt_thread *T, struct __weave_node *p, const struct __weave_fn *fn);
static u64 frameless_count(void);

/* pseudostack/timed.c */
static int time_exact(void);
static void time_push(struct rt_thread *T, struct __weave_thread *t, struct __weave_node *p, struct __weave_node *c,
		      struct __weave_frame *f);
static void time_drop(struct __weave_thread *t, unsigned d);

#endif
