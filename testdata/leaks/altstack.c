/* exit or _exit from a signal handler running on an alternate signal
   stack (sigaltstack, SA_ONSTACK), as gnulib's c-stack does on a stack
   overflow ("grep: stack overflow": grep, diff, m4 and others). The leak
   scan reads the alternate stack from the exit's stack pointer up, the
   stack the signal interrupted from its stack pointer up, and whatever
   else the mapping holding either of them holds, whole. argv[1] says
   where the alternate stack lies:
     data  - a static array in the program's data, between two arrays of
             pointers to blocks (still reachable: data is a root, but for
             the alternate stack's dead part); the handler calls _exit;
     local - an array in main's frame, above the frames the signal
             interrupted (their pointers keep blocks reachable); exit;
     mmap  - a mapping of its own; exit.
   In each, the blocks of the data arrays and of the interrupted frames
   are still reachable, and those of a function that returned before the
   signal (buried under the interrupted frames) definitely lost, as
   memcheck says. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define N 16
#define ALT (64 * 1024)

/* below lies past the data's first page (its bss, an anonymous mapping
   of its own, as the alternate stack's). */
static struct {
	char pad[8192];
	void *volatile below[N];
	char stack[ALT] __attribute__((aligned(64)));
	void *volatile above[N];
} g;

static int use_exit;

/* N blocks of size, size + 1, ... into a. */
static __attribute__((noinline)) void fill(void *volatile *a, size_t size)
{
	for (size_t i = 0; i < N; i++)
		a[i] = malloc(size + i);
}

/* Drops its N blocks when it returns. */
static __attribute__((noinline)) int drop(void)
{
	void *volatile dropped[N];
	fill(dropped, 24);
	return dropped[0] != NULL;
}

/* drop 16 KiB below the frames the signal interrupts: raise's lie over
   the top of its dead frames. */
static __attribute__((noinline)) int buried(void)
{
	volatile char pad[16384];
	pad[0] = 1;
	__asm__ volatile("" : : "r"(pad) : "memory"); /* all of it: clang keeps only pad[0] otherwise */
	return drop() + pad[0];
}

static void on_usr1(int sig)
{
	(void)sig;
	if (use_exit)
		exit(0);
	_exit(0);
}

static __attribute__((noinline)) void interrupted(void)
{
	void *volatile a[N];
	fill(a, 56);
	buried();
	raise(SIGUSR1);
	__asm__ volatile("" : : "r"(a) : "memory");
}

static __attribute__((noinline)) int run(void *alt)
{
	stack_t ss = {.ss_sp = alt, .ss_size = ALT};
	struct sigaction sa;
	if (sigaltstack(&ss, NULL))
		return 2;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	if (sigaction(SIGUSR1, &sa, NULL))
		return 2;
	interrupted();
	return 3;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "data";
	fill(g.below, 16);
	fill(g.above, 32);
	if (!strcmp(mode, "data"))
		return run(g.stack);
	use_exit = 1;
	if (!strcmp(mode, "local")) {
		char alt[ALT] __attribute__((aligned(64)));
		return run(alt);
	}
	if (!strcmp(mode, "mmap")) {
		void *alt = mmap(NULL, ALT, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		return alt == MAP_FAILED ? 2 : run(alt);
	}
	return 2;
}
