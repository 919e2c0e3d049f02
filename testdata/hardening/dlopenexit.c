/* exit while another thread is in dlopen: the dynamic linker holds its
   lock while it loads (and runs the object's constructors), and may
   malloc meanwhile (lbzip2 2.5: a worker's pthread_exit loading libgcc_s
   for the unwinder, its path strdup'd, while main called _exit). Built
   with -DLIB it is that object, whose constructor says so on descriptor
   9, sleeps a second holding the lock, then allocates at a site of its
   own; without, the program: a thread dlopens argv[1], main exits as
   soon as the constructor has begun, by _exit (exit would wait for the
   lock, in _dl_fini). The plain program prints "exiting" and exits 0 at
   once. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef LIB
static void *volatile kept; /* not a malloc the compiler may drop */

__attribute__((constructor)) static void slow_init(void)
{
	char c = 1;
	if (write(9, &c, 1) != 1)
		abort();
	sleep(1);
	kept = malloc(16);
	free(kept);
}
#else
#include <dlfcn.h>
#include <pthread.h>

static void *opener(void *lib)
{
	return dlopen(lib, RTLD_NOW);
}

int main(int argc, char **argv)
{
	int fd[2];
	pthread_t t;
	char c;
	if (argc < 2 || pipe(fd) || dup2(fd[1], 9) < 0)
		return 2;
	if (pthread_create(&t, NULL, opener, argv[1]))
		return 2;
	if (read(fd[0], &c, 1) != 1)
		return 2;
	puts("exiting");
	fflush(stdout);
	_exit(0); /* exit would wait for the lock in _dl_fini */
}
#endif
