#include "woven.h"
#include <pthread.h>
FN(main); FN(w);
static long counter;
static void *w(void *a) { ENTER(w); counter++; return a; }
int main(void) { ENTER(main); pthread_t t; pthread_create(&t, 0, w, 0); counter++; pthread_join(t, 0); return 0; }
