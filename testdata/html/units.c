/* units: one block of 1 MiB less one byte, allocated and freed: the
   report's sizes that round up to the next unit. */
#include <stdlib.h>

int main(void)
{
	volatile char *p = malloc((1 << 20) - 1);
	if (!p)
		return 1;
	p[0] = 0;
	free((void *)p);
	return p == NULL;
}
