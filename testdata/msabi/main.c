/* Calls lib.c's ms_abi function, which calls back sum: prints its flags
   and the sum it wrote (7 106). */
#include <stdio.h>
#include <stdlib.h>

struct cif {
	int nargs, flags;
	const long *sizes;
};
typedef void (*fun_t)(const struct cif *, void *, void **, void *);
__attribute__((ms_abi)) int inner(const struct cif *cif, fun_t fun, void *user, long *frame);

static void sum(const struct cif *cif, void *rv, void **av, void *user)
{
	long s = 0;
	int i;
	for (i = 0; i < cif->nargs; i++)
		s += *(long *)av[i];
	*(long *)rv = s + *(long *)user;
	free(malloc(16));
}

int main(void)
{
	static const long sizes[] = {8, 8, 8};
	struct cif cif = {3, 7, sizes};
	long frame[3] = {1, 2, 3}, base = 100;
	int flags = inner(&cif, sum, &base, frame);
	printf("%d %ld\n", flags, frame[0]);
	return 0;
}
