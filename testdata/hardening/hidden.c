/* Library allocations: the C library's (fopen's FILE and buffer, getline,
   qsort's temporary array, asprintf, strdup called inside a library) and a
   third-party library's (libthird.so, not woven). Blocks cross between the
   woven program and the libraries both ways. argv[1] is a text file. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct third_rec;
struct third_rec *third_new(const char *name);
void third_free(struct third_rec *r);
void third_drop(void *p);
char *third_grow(char *p, size_t n);
char *third_copy(const char *s);

static char *lines[64];

static int read_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	int n = 0;
	if (!f)
		return -1;
	while (n < 64 && getline(&line, &cap, f) > 0) {
		lines[n++] = line; /* getline's buffer: kept */
		line = NULL;
		cap = 0;
	}
	free(line);
	fclose(f);
	return n;
}

static int cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static long sort_numbers(void)
{
	int n = 50000, *a = malloc(n * sizeof *a);
	long s = 0;
	for (int i = 0; i < n; i++)
		a[i] = (i * 7919) % 100003;
	qsort(a, n, sizeof *a, cmp); /* glibc's merge sort: a temporary array */
	for (int i = 0; i < n; i += 1000)
		s += a[i];
	free(a);
	return s;
}

static char *describe(int n)
{
	char *s;
	return asprintf(&s, "%d lines", n) < 0 ? NULL : s;
}

static void use_library(void)
{
	struct third_rec *r = third_new("widget");
	char *mine = malloc(40), *grown, *copy;
	strcpy(mine, "woven");
	grown = third_grow(mine, 4000); /* the library reallocs a woven block */
	copy = third_copy("made by the library");
	third_drop(malloc(48));           /* the library frees a woven block */
	free(copy);                       /* woven code frees a library block */
	third_free(r);
	lines[63] = grown;                /* kept */
	third_copy("kept, by the library"); /* leaked */
}

int main(int argc, char **argv)
{
	int n = read_lines(argc > 1 ? argv[1] : "/etc/hostname");
	long s = sort_numbers();
	char *d = describe(n);
	use_library();
	printf("%s, %ld\n", d, s);
	free(d);
	return 0;
}
