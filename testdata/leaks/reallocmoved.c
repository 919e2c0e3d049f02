/* realloc moves an array of pointers; glibc frees the old chunk inside
   realloc, unscrubbed, into its tcache, and a block of the same size
   reuses it, the pointers it does not write intact: memcheck (which reads
   only defined words) calls the dropped blocks definitely lost, and so
   must the leak scan of the native heap (probe21: flac's vc_resize_). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
void *g_keep[2];
int main(void)
{
	char **a = malloc(4 * sizeof *a), *hold;
	int i;
	for (i = 0; i < 4; i++)
		a[i] = malloc(1);
	hold = malloc(1); /* the next chunk is in use: realloc must move */
	a = realloc(a, 64 * sizeof *a); /* old 32-byte chunk -> tcache, pointers intact */
	for (i = 0; i < 4; i++)
		a[i] = NULL; /* drop them: 4 blocks lost */
	g_keep[0] = a;
	g_keep[1] = malloc(4 * sizeof(char *)); /* reuses the old chunk, unwritten but its first 16 bytes (tcache's) */
	((char *)g_keep[1])[0] = 1;
	free(hold);
	printf("done\n");
	return 0;
}
