/* A woven library (dlclose_main.c loads it): one block the program frees,
   one it leaks, one kept by the library's static until it is unloaded. */
#include <stdlib.h>
#include <string.h>
static char *keep;
char *lib_make(int n)
{
	char *p = malloc(n);   /* freed by the program */
	memset(p, 1, n);
	keep = strdup("kept by the library"); /* still live when the library goes */
	return p;
}
