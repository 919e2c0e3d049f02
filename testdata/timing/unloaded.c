/* unloaded: an unwoven program that loads a woven library (built from
   this file with -DLIB), runs its work, unloads it and goes on working:
   the library's copy of the runtime is the active one, and its sampler
   must be gone before dlclose unmaps its code.
   Usage: unloaded LIB */
#include <stdio.h>

static volatile unsigned long long sink;

#ifdef LIB
void lib_work(long n)
{
	unsigned long long x = sink;
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}
#else
#include <dlfcn.h>

int main(int argc, char **argv)
{
	void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
	void (*work)(long);
	if (!h) {
		fprintf(stderr, "unloaded: %s\n", argc > 1 ? dlerror() : "usage: unloaded LIB");
		return 2;
	}
	*(void **)&work = dlsym(h, "lib_work");
	work(200000000);
	dlclose(h);
	unsigned long long x = sink;
	for (long i = 0; i < 300000000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
	printf("ok\n");
	return 0;
}
#endif
