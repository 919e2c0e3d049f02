/* Loads a woven library, calls it, unloads it (dlclose) before exit: the
   exit writer must not read the unloaded library's records. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* Overwrites the dead stack below main's frame, where a stale copy of the
   leaked pointer (a spilled register) would make it look reachable to a
   conservative scan, depending on how much stack the frames used. */
static __attribute__((noinline)) void scrub(void)
{
	volatile char buf[16384];
	memset((char *)buf, 0, sizeof buf);
}

int main(int argc, char **argv)
{
	void *h = dlopen(argc > 1 ? argv[1] : "./libw.so", RTLD_NOW);
	char *(*make)(int);
	if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
	make = (char *(*)(int))dlsym(h, "lib_make");
	char *p = make(40);
	free(p);
	(void)make(24); /* leaked */
	scrub();
	if (dlclose(h) != 0) { fprintf(stderr, "dlclose: %s\n", dlerror()); return 1; }
	puts("closed");
	return 0;
}
