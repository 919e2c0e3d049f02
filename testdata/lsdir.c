/* Lists the directory it runs in, sorted, as rsync's test suite runs its
   tls helper in each tree it then compares (profiledir_test.go). Each name
   is copied to the heap; the copies are not freed: the program leaks. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
	char *names[256];
	size_t n = 0;
	DIR *d = opendir(".");
	struct dirent *e;
	if (!d)
		return 1;
	while ((e = readdir(d)) != NULL && n < 256)
		if (e->d_name[0] != '.')
			names[n++] = strdup(e->d_name);
	closedir(d);
	qsort(names, n, sizeof names[0], by_name);
	for (size_t i = 0; i < n; i++)
		printf("%s\n", names[i]);
	return 0;
}
