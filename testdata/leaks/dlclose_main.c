/* Loads a woven library, calls it, unloads it (dlclose) before exit: the
   exit writer must not read the unloaded library's records. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argc > 1 ? argv[1] : "./libw.so", RTLD_NOW);
	char *(*make)(int);
	if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
	make = (char *(*)(int))dlsym(h, "lib_make");
	char *p = make(40);
	free(p);
	(void)make(24); /* leaked */
	if (dlclose(h) != 0) { fprintf(stderr, "dlclose: %s\n", dlerror()); return 1; }
	puts("closed");
	return 0;
}
