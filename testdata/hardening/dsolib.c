/* A woven library used by a program that is not woven (dsolib_main.c):
   its copy of the runtime is the active one. It must need no symbol of the
   exit family (libpq's build checks that with nm -u), yet quick_exit still
   writes the profile after the program's at_quick_exit handlers. */
#include <stdlib.h>

void *lib_keep(size_t n)
{
	return malloc(n);
}

void lib_churn(void)
{
	free(malloc(30));
}
