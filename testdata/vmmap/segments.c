/* A program with known segments: a 1 MiB array in bss, 256 KiB of
   initialized data, a thread with an 8 MiB stack, a 64 MiB anonymous map.
   It prints where they are ("name address size", hex address, decimal
   size), then, with an argument, waits for a line on stdin before exiting
   (so a test can read its maps meanwhile); the thread is still running
   when the process exits. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char zeros[1 << 20];                    /* bss */
char initialized[256 << 10] = {1, 2, 3};       /* data */
static int ready[2];

static void *idle(void *arg)
{
	pthread_attr_t a;
	void *addr;
	size_t size, guard;
	char c;
	(void)arg;
	pthread_getattr_np(pthread_self(), &a);
	pthread_attr_getstack(&a, &addr, &size);
	pthread_attr_getguardsize(&a, &guard);
	printf("thread_stack %p %zu\nthread_guard %zu\n", addr, size, guard);
	fflush(stdout);
	pthread_attr_destroy(&a);
	c = 1;
	if (write(ready[1], &c, 1) != 1)
		abort();
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_attr_t a;
	pthread_t t;
	char *m, c, line[16];
	size_t i;
	for (i = 0; i < sizeof zeros; i += 4096)
		zeros[i] = (char)i;
	for (i = 0; i < sizeof initialized; i += 4096)
		initialized[i] += 1;
	m = mmap(NULL, 64 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	memset(m, 1, 1 << 20);
	printf("bss %p %zu\ndata %p %zu\nmmap %p %d\n", (void *)zeros, sizeof zeros,
	       (void *)initialized, sizeof initialized, (void *)m, 64 << 20);
	fflush(stdout);
	if (pipe(ready) != 0)
		return 1;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 8 << 20);
	if (pthread_create(&t, &a, idle, NULL) != 0)
		return 1;
	if (read(ready[0], &c, 1) != 1)
		return 1;
	if (argc > 1 && !fgets(line, sizeof line, stdin))
		return 1;
	printf("sum %d\n", zeros[4096] + initialized[0] + m[0]);
	return 0;
}
