/* The leak scan with helper threads (WEAVE_LEAK_THREADS): lost lists and
   cycles whose blocks are allocated in turn, so that their pointers cross
   the slices the blocks are cut into; blocks kept by a global, by a
   thread still running at exit and by an interior pointer. The process
   forks: the child loses lists of its own and exits (its summary, on a
   closed stderr, goes nowhere; its profile is written as usual). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct node {
	struct node *next;
	char pad[40];
};

enum { LISTS = 8, LEN = 200 };

struct node *global_list; /* not static: kept whatever the optimiser sees */
char *interior;
static int ready[2];

static struct node *push(struct node *head)
{
	struct node *x = malloc(sizeof *x); /* site:node */
	memset(x->pad, 'x', sizeof x->pad);
	x->next = head;
	return x;
}

/* LISTS lists of LEN blocks, allocated in turn; the odd ones closed into
   cycles. Each is one block definitely lost and LEN - 1 indirectly. */
static __attribute__((noinline)) void lose(struct node *(*alloc)(struct node *))
{
	struct node *head[LISTS] = {0}, *tail[LISTS] = {0};
	int i, k;
	for (i = 0; i < LEN; i++)
		for (k = 0; k < LISTS; k++) {
			head[k] = alloc(head[k]);
			if (!tail[k])
				tail[k] = head[k];
		}
	for (k = 1; k < LISTS; k += 2)
		tail[k]->next = head[k];
	memset(head, 0, sizeof head);
	memset(tail, 0, sizeof tail);
	__asm__ volatile("" ::"r"(head), "r"(tail) : "memory");
}

static struct node *push_child(struct node *head)
{
	struct node *x = malloc(sizeof *x); /* site:child */
	x->next = head;
	return x;
}

/* Keeps a list of 100 blocks in a local, and waits for the end. */
static void *keeper(void *arg)
{
	struct node *volatile mine = NULL;
	int i;
	char c = 1;
	(void)arg;
	for (i = 0; i < 100; i++) {
		struct node *x = malloc(sizeof *x); /* site:thread */
		x->next = mine;
		mine = x;
	}
	if (write(ready[1], &c, 1) != 1)
		abort();
	for (;;)
		pause();
	return mine;
}

static __attribute__((noinline)) void wipe(void)
{
	volatile char junk[8192];
	for (int i = 0; i < (int)sizeof junk; i++)
		junk[i] = 0;
}

int main(void)
{
	pthread_t t;
	pid_t pid;
	int st, i;
	char c;
	for (i = 0; i < 50; i++) {
		struct node *x = malloc(sizeof *x); /* site:global */
		x->next = global_list;
		global_list = x;
	}
	interior = (char *)malloc(64) + 8; /* site:interior */
	if (pipe(ready) || pthread_create(&t, NULL, keeper, NULL) || read(ready[0], &c, 1) != 1)
		return 1;
	lose(push);
	if ((pid = fork()) == 0) {
		lose(push_child);
		wipe();
		close(2);
		exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || st)
		return 1;
	wipe();
	return 0;
}
