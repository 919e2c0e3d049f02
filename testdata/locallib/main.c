/* Blocks allocated on one side (the program, the C library, the library
   through its pointers) and freed on the other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *lib_dup(const char *s);
void *lib_alloc(size_t n);
void *lib_grow(void *p, size_t n);
void lib_free(void *p);
void lib_init(void);

int main(void)
{
	size_t sum = 0;
	int i;
	lib_init();
	for (i = 0; i < 10; i++) {
		char *a = lib_dup("hello");      /* the C library's malloc */
		char *b = lib_alloc(100 + i);    /* the library's pointer */
		char *c = malloc(10 + i);        /* woven */
		char *d = strdup("abc");         /* the C library's, from woven code */
		b = lib_grow(b, 1000 + i);
		sum += strlen(a) + strlen(d) + (b != NULL) + (c != NULL);
		lib_free(a);
		lib_free(c);
		free(b);
		lib_free(d);
	}
	printf("%zu\n", sum);
	return 0;
}
