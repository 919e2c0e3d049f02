/* A generator on a ucontext coroutine (makecontext/swapcontext): the
   generator and its consumer allocate between the switches, each under
   its own chain. The consumer resumes the generator from two depths
   (drive, and drive's resume_deep), the generator ends through uc_link.
   Every other item is produced 20 calls deep (descend): in exact mode
   each is a timed frame with a slot on the thread's timed stack, more
   than the 16 that swapcontext's save keeps in its frame; the consumer
   pushes its own over the lower ones (tick, tock), and the generator's
   tally after descend returns must still be charged under the generator. */
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

struct item {
	struct item *next;
	int v;
};

static ucontext_t caller, coro;
static struct item *items; /* the generator's blocks: still reachable */
static int value, finished;

__attribute__((noinline)) static void *item(size_t n)
{
	return malloc(n);
}

__attribute__((noinline)) static void yield(int v)
{
	value = v;
	swapcontext(&coro, &caller);
}

__attribute__((noinline)) static void produce(int i)
{
	struct item *it = item(sizeof *it);
	it->v = i;
	it->next = items;
	items = it;
	yield(i * i);
}

__attribute__((noinline)) static void descend(int k, int i)
{
	if (k)
		descend(k - 1, i);
	else
		produce(i);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

__attribute__((noinline)) static void tally(int i)
{
	struct item *it = item(sizeof *it);
	it->v = -i;
	it->next = items;
	items = it;
}

static void generator(void)
{
	for (int i = 0; i < 6; i++) {
		if (i % 2)
			descend(20, i);
		else
			produce(i);
		tally(i);
	}
	finished = 1;
}

__attribute__((noinline)) static int consume(int v)
{
	char *p = item(1000); /* dropped: definitely lost */
	p[0] = (char)v;
	return p[0];
}

__attribute__((noinline)) static void *tock(void)
{
	return item(8);
}

__attribute__((noinline)) static void tick(void)
{
	free(tock());
}

__attribute__((noinline)) static void resume_deep(void)
{
	swapcontext(&caller, &coro);
}

__attribute__((noinline)) static int drive(void)
{
	static char stack[65536];
	int sum = 0, round = 0;
	getcontext(&coro);
	coro.uc_stack.ss_sp = stack;
	coro.uc_stack.ss_size = sizeof stack;
	coro.uc_link = &caller;
	makecontext(&coro, generator, 0);
	for (;;) {
		if (round++ % 2)
			resume_deep();
		else
			swapcontext(&caller, &coro);
		if (finished)
			break;
		sum += consume(value);
		tick();
	}
	return sum;
}

int main(void)
{
	int n = 0;
	printf("sum %d\n", drive());
	for (struct item *it = items; it; it = it->next)
		n++;
	printf("items %d\n", n);
	return 0;
}
