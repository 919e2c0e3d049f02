/* Not woven: calls the woven dsolib.c, then leaves by argv[1]: quick_exit
   (after a handler that allocates through the library), exit or return. */
#include <stdlib.h>
#include <string.h>

void *lib_keep(size_t n);
void lib_churn(void);

static void *keep[4];

static void quick(void)
{
	keep[1] = lib_keep(81); /* made after main: counted only if the
				   runtime's handler runs after this one */
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "return";
	keep[0] = lib_keep(10);
	lib_churn();
	if (!strcmp(how, "quick_exit")) {
		at_quick_exit(quick);
		quick_exit(7);
	}
	if (!strcmp(how, "exit"))
		exit(3);
	return 0;
}
