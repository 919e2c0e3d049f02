//go:build ignore

/* known.c: the woven functions known not to allocate, for the calls
   framed where they are made (weave.h, __weave_known_fn). Each unit
   registers, from a constructor, the frameless functions (--frames auto)
   whose address it takes, and unregisters them from a destructor (a
   library dlclosed: another may be loaded where its code was). A call
   through a pointer to one of them pushes no frame; any other target
   (a function that may allocate, one of an unwoven library, one that did
   not fit) gets its caller's frame, which is always right. Registration
   may run on any thread, before the runtime is set up: each slot is
   claimed by a compare-and-swap from 0, and never written otherwise. */

#include "internal.h"

wsize __weave_known[__WEAVE_KNOWN_SIZE] RT_LARGE; /* read by woven code; written only where a unit registers */

void __weave_register_known(void (*const *fns)(void), unsigned n)
{
	unsigned k, j;
	for (k = 0; k < n; k++) {
		wsize p = (wsize)fns[k], want;
		unsigned i = __weave_known_index(p);
		for (j = i; j < i + 2; j++) {
			want = 0;
			if (__atomic_load_n(&__weave_known[j], __ATOMIC_RELAXED) == p ||
			    __atomic_compare_exchange_n(&__weave_known[j], &want, p, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
				break;
		}
	}
}

RT_RARE void __weave_unregister_known(void (*const *fns)(void), unsigned n)
{
	unsigned k, j;
	for (k = 0; k < n; k++) {
		wsize p = (wsize)fns[k];
		unsigned i = __weave_known_index(p);
		for (j = i; j < i + 2; j++) {
			wsize want = p;
			__atomic_compare_exchange_n(&__weave_known[j], &want, 0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		}
	}
}
