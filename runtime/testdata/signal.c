/* A SIGPROF handler running woven code that allocates, interrupting a
   loop that allocates: whatever the handler manages to record, nothing may
   leak, deadlock or crash. Built with sigsafe.c's allocator (see there):
   malloc in a handler is undefined behaviour with glibc's alone. */
#include "woven.h"
#include <stdlib.h>
#include <unistd.h>

FN(main);
FN(handler);
FN(work);

static volatile sig_atomic_t handled;
static char msg[] = "handled 000\n";

static void handler(int sig)
{
	ENTER(handler);
	void *p = W_MALLOC(handler, 40);
	(void)sig;
	W_FREE(handler, p);
	handled++;
}

static void work(long i)
{
	ENTER(work);
	void *p = W_MALLOC(work, (size_t)(i % 100));
	W_FREE(work, p);
}

int main(void)
{
	ENTER(main);
	long i;
	sigprof_every(handler, 200);
	for (i = 0; i < 50000000 && handled < 100; i++)
		work(i);
	sigprof_every(handler, 0);
	msg[8] = (char)('0' + handled / 100 % 10);
	msg[9] = (char)('0' + handled / 10 % 10);
	msg[10] = (char)('0' + handled % 10);
	return write(1, msg, sizeof msg - 1) < 0;
}
