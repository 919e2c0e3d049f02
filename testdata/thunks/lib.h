/* lib.h: lib.c's functions, which allocate; main.c calls each from a
   function framed at that call (weave/thunks.go). */
#include <setjmp.h>

struct list {
	int *v;
	int n, cap;
};
struct big {
	long a, b, c, d, e;
	char *tag; /* allocated */
};
struct pair {
	int x;
	char *p; /* allocated */
};
typedef int (*mapper)(int);

extern jmp_buf lib_recover;

void lib_push(struct list *l, int v);
struct big lib_big(int n);
struct pair lib_pair(int);
double lib_mean(const int a[], int n);
char lib_first(const char *s);
char *lib_name(int, mapper);
int lib_id(int x);
void lib_fail(const char *what, int x) __attribute__((noreturn));
void lib_failf(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
