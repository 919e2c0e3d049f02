/* Allocation sites in functions whose bodies were never entered through
   __weave_enter (as if the guard were missing), in the main thread and in
   a thread that never runs woven code: charged to the threads' roots. */
#include "woven.h"
#include <pthread.h>
#include <stdlib.h>

FN(main);
FN(start);

static void *start(void *arg)
{
	void *p = W_MALLOC(start, 300); /* leaked */
	W_FREE(start, arg);             /* main's block, freed here */
	return p;
}

int main(void)
{
	pthread_t th;
	void *p = W_MALLOC(main, 100), *r;
	void *q = W_MALLOC(main, 200); /* leaked */
	(void)q;
	pthread_create(&th, NULL, start, p);
	pthread_join(th, &r);
	return 0;
}
