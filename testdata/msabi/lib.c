/* An ms_abi function (libffi's ffi_closure_win64_inner) in a shared
   object: it reads its arguments after the frame's guard. */
#include <stddef.h>

struct cif {
	int nargs, flags;
	const long *sizes;
};
typedef void (*fun_t)(const struct cif *, void *, void **, void *);

__attribute__((ms_abi)) int inner(const struct cif *cif, fun_t fun, void *user, long *frame)
{
	void **av = __builtin_alloca(cif->nargs * sizeof(void *));
	int i;
	for (i = 0; i < cif->nargs; i++)
		av[i] = cif->sizes[i] <= 8 ? (void *)&frame[i] : (void *)frame[i];
	fun(cif, frame, av, user);
	return cif->flags;
}
