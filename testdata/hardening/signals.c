/* Signals. argv[1]:
   handler  a woven SIGPROF handler that allocates, frees and calls woven
            functions interrupts a loop that allocates, frees and calls (so
            it lands mid-push and mid-allocation, often); afterwards a block
            allocated in a known calling context must be charged to it.
            It allocates only when it interrupted the executable (the
            woven code and the runtime), not the C library: glibc's malloc
            is not reentrant (a handler's malloc in the middle of the
            loop's corrupted its tcache, a SIGSEGV in 4% of runs; the
            plain build never calls it, gcc drops the unused malloc/free
            pairs).
   segv     a null pointer store: SIGSEGV.
   bus      a store beyond the end of a mapped file: SIGBUS.
   kill     SIGSEGV sent with kill, not a fault.
   handled  the program's own SIGSEGV handler: writes "caught" and exits 3.
   Each keeps a 64-byte block first (allocated in main). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <ucontext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t handled;
static void *keep[4];

static void *in_handler(size_t n) { return malloc(n); }

extern char __executable_start[], etext[];

/* Whether the signal interrupted the executable's code. */
static int in_exe(void *uc)
{
#if defined(__x86_64__)
	char *pc = (char *)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	char *pc = (char *)((ucontext_t *)uc)->uc_mcontext.pc;
#else
	char *pc = NULL;
	(void)uc;
#endif
	return pc >= __executable_start && pc < etext;
}

static void on_prof(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	if (in_exe(uc)) {
		void *p = in_handler(40);
		free(p);
		free(malloc(24));
	}
	handled++;
}

static void leaf(long i)
{
	void *p = malloc((size_t)(i % 100 + 1));
	free(p);
}

static void middle(long i) { leaf(i); }

static void marker(void) { keep[1] = malloc(555); } /* marker <- after <- main */
static void after(void) { marker(); }

static void on_segv(int sig)
{
	(void)sig;
	write(1, "caught\n", 7);
	_exit(3);
}

static int run_handler(void)
{
	struct sigaction sa;
	struct itimerval it = {{0, 100}, {0, 100}};
	long i;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_RESTART | SA_SIGINFO;
	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	for (i = 0; i < 100000000 && handled < 100; i++)
		middle(i);
	memset(&it, 0, sizeof it);
	setitimer(ITIMER_PROF, &it, NULL);
	after();
	printf("done\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "handler";
	keep[0] = malloc(64);
	if (!strcmp(how, "handler"))
		return run_handler();
	if (!strcmp(how, "segv")) {
		volatile int *p = NULL;
		*p = 1;
	}
	if (!strcmp(how, "bus")) {
		char path[] = "/tmp/weave-busXXXXXX";
		int fd = mkstemp(path);
		volatile char *m;
		unlink(path);
		if (fd < 0 || ftruncate(fd, 1) != 0)
			return 1;
		m = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			return 1;
		m[4096] = 1;
	}
	if (!strcmp(how, "kill"))
		kill(getpid(), SIGSEGV);
	if (!strcmp(how, "handled")) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_segv;
		sigaction(SIGSEGV, &sa, NULL);
		*(volatile int *)NULL = 1;
	}
	return 9;
}
