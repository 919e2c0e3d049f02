/* Allocation sites whose size expressions name a type, or none: the
   report's types must be each site's own (TestSiteTypes). */
#include <stdio.h>
#include <stdlib.h>

struct entry {
	char *key;
	int value;
	struct entry *next;
};

struct hdr {
	long len;
	char data[];
};

/* No sizeof: 16 bytes of no type, the size of another site's char *[2]. */
void *sizeless(void) { return malloc(16); }

/* A constant count: char *[4]; and one of 2, sizeof expr form. */
char **vec4(void) { return malloc(4 * sizeof(char *)); }
char **vec2(void) { char **v = malloc(2 * sizeof *v); return v; }

struct entry *entry(void) { return malloc(sizeof(struct entry)); }

/* A run-time count, and a header with what follows it. */
unsigned char *bytes(int n) { return calloc(n, sizeof(unsigned char)); }
struct hdr *header(int n) { return malloc(sizeof(struct hdr) + n); }

/* A pointer to an array. */
int (*row(void))[3] { int (*r)[3] = malloc(sizeof *r); return r; }

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100, calls = 0;
	for (int i = 0; i < n; i++) {
		free(sizeless());
		free(vec4());
		free(entry());
		calls += 3;
		if (i % 10 == 0) {
			free(vec2());
			free(bytes(i + 1));
			free(header(i));
			free(row());
			calls += 4;
		}
	}
	printf("%d allocations, %d of 16 bytes without sizeof\n", calls, n);
	return 0;
}
