/* Marks and regions (weave_api.h): built woven and plain, it must behave
   the same. The sites' comments name what the tests expect of them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "weave_api.h"

static char *keep[100];

static char *work(int n)
{
	char *p = malloc(n); /* site:work */
	memset(p, 1, n);
	return p;
}

static void parse(void)
{
	int i;
	WEAVE_REGION("parse") {
		for (i = 0; i < 5; i++)
			keep[i] = work(100);
		WEAVE_REGION("inner") {
			keep[10] = calloc(7, 1); /* site:inner */
		}
		if (keep[0][0] == 1)
			return; /* leaves both regions */
		keep[11] = malloc(9);
	}
}

int main(int argc, char **argv)
{
	int i, j;
	long sum = 0;
	(void)argv;
	for (i = 0; i < 10; i++)
		free(work(16));
	WEAVE_MARK("start");
	parse();
	for (j = 0; j < 3; j++) {
		WEAVE_REGION("loop") {
			if (j == 1)
				break; /* ends this region's pass, not the for loop */
			keep[20 + j] = calloc(33, 1); /* site:loop */
		}
	}
	weave_region_end(); /* no begin: ignored */
	weave_region_begin("manual");
	keep[30] = work(1000);
	weave_region_end();
	WEAVE_MARK(argc > 5 ? "many" : "end");
	for (i = 0; i < 100; i++)
		if (keep[i])
			sum += keep[i][0];
	printf("j=%d sum=%ld\n", j, sum);
	return 3;
}
