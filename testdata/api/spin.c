/* Regions in the time tables: busy does 30 times the work of idle, long
   enough (about 75 ms) for sampled time to have a few dozen samples
   however late a busy machine lets the sampler read them. */
#include <stdio.h>
#include "weave_api.h"

static volatile unsigned long sink;

static void spin(long n)
{
	for (long i = 0; i < n; i++)
		sink += i;
}

int main(void)
{
	WEAVE_REGION("busy") {
		spin(300000000);
	}
	weave_region_begin("idle");
	spin(10000000);
	weave_region_end();
	printf("%d\n", sink > 0);
	return 0;
}
