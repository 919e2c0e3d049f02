/* A thread blocked at exit in a system call, with the only pointers to N
   blocks in the dead frame of a function that had returned, right below
   its blocking call's stack pointer: in the 128 bytes (the x86-64 red
   zone) that a stack scan from the stack pointer less the red zone reads.
   memcheck calls them definitely lost: the frame went out of scope (the
   stack pointer rose more than 128 bytes above it: memcheck no longer
   calls it addressable), and when the blocking call's frames were made
   over it nothing wrote those bytes again (undefined, never read as
   pointers). The worker finds its call's stack pointer first (its first
   read, made the same way from the same frame), then drops the blocks
   there and blocks again. clang -O2 made blocked.c's dead frame land
   there (it shrank the 16 KiB pad meant to keep it far below), and the
   scan said one of them still reachable in some runs. x86-64 only (the
   stack pointer is read by an instruction). argv[1]: "all", or
   "all-nodump" (ptrace refused: stopped by a signal). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define N 8
#define REDZONE 128

static int fds[2];
static uintptr_t call_sp; /* the blocking read's stack pointer: its caller's, less the return address */
static int dropped;

static __attribute__((noinline)) void fill(void *volatile *a, int n, int size)
{
	for (int i = 0; i < n; i++)
		a[i] = malloc((size_t)size + (size_t)i); /* site:fill */
}

/* Reads a byte from the pipe, by syscall(): glibc's is a few
   instructions that move no stack pointer, so the read's is this frame's
   less the return address. The frame is over 128 bytes, all written: its
   caller's stack pointer is that far above the red zone, and no slot of
   it keeps what lay there before. */
static __attribute__((noinline)) void wait_byte(void)
{
	char buf[256];
	uintptr_t sp;
	memset(buf, 0, sizeof buf);
	__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
	if (!call_sp)
		__atomic_store_n(&call_sp, sp - 8, __ATOMIC_RELEASE);
	else if (call_sp != sp - 8)
		abort(); /* not the first read's frame */
	while (syscall(SYS_read, fds[0], buf, 1) != 1)
		;
	__asm__ volatile("" : : "r"(buf) : "memory");
}

/* Drops N blocks whose only pointers lie in [call_sp - 128, call_sp),
   in memory of its own frame (alloca), which dies when it returns. */
static __attribute__((noinline)) void drop(void)
{
	char here;
	uintptr_t lo = call_sp - REDZONE, need = (uintptr_t)&here - lo + 256;
	char *p = __builtin_alloca(need);
	if ((uintptr_t)p > lo || (uintptr_t)p + need < call_sp)
		abort(); /* the red zone not in this frame */
	fill((void *volatile *)lo, N, 40);
	__asm__ volatile("" : : "r"(p) : "memory");
}

static void *worker(void *arg)
{
	(void)arg;
	wait_byte(); /* notes call_sp; main writes the byte */
	drop();
	/* No call of the C library's here: a first call through the PLT
	   (lazy binding) would write over the red zone. */
	__atomic_store_n(&dropped, 1, __ATOMIC_RELEASE);
	wait_byte(); /* blocked here at exit */
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "all";
	pthread_t t;
	if (strcmp(mode, "all") && strcmp(mode, "all-nodump"))
		return 2;
	if (!strcmp(mode, "all-nodump"))
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (pipe(fds) || pthread_create(&t, NULL, worker, NULL))
		return 2;
	while (!__atomic_load_n(&call_sp, __ATOMIC_ACQUIRE))
		usleep(1000);
	if (write(fds[1], "x", 1) != 1)
		return 2;
	while (!__atomic_load_n(&dropped, __ATOMIC_ACQUIRE))
		usleep(1000);
	usleep(50000); /* into its read */
	puts("done");
	return 0;
}
