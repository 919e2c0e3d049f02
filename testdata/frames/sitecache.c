/* Call patterns for the x86-64 guard's site cache (weave.h): one function
   entered from several parents in turn, a site inlined into several
   callers, recursion folded to an ancestor, a second thread. The program
   counts its own calls of every caller -> callee arc and prints them; the
   profile's graph must hold the same numbers (TestFramesSiteCache). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* the program's own count of each arc, per thread, summed at the end */
enum { WORK_A, WORK_B, WORK_C, WORK_REC, A_MID, A_C, B_MID, REC_REC, NARCS };
static const char *const arcs[NARCS] = {"work a", "work b", "work c", "work rec", "a mid", "a c", "b mid", "rec rec"};
static __thread unsigned long cnt[NARCS];
static unsigned long total[NARCS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *volatile sink;

__attribute__((noinline)) static void *leaf(int k)
{
	void *p = malloc((unsigned)k);
	sink = p;
	return p;
}

/* small: inlined into a and b, with its own guard (it allocates) */
static inline void *mid(int k)
{
	return leaf(k + 1);
}

__attribute__((noinline)) static void c(int k)
{
	free(leaf(k));
}

__attribute__((noinline)) static void a(int k)
{
	cnt[A_MID]++;
	free(mid(k));
	if (k & 1) {
		cnt[A_C]++;
		c(k);
	}
}

__attribute__((noinline)) static void b(int k)
{
	cnt[B_MID]++;
	free(mid(k + 2));
}

__attribute__((noinline)) static void rec(int n)
{
	if (n == 0) {
		free(leaf(3));
		return;
	}
	cnt[REC_REC]++;
	rec(n - 1);
}

static void work(unsigned seed, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		seed = seed * 1103515245u + 12345u;
		switch ((seed >> 16) % 4) {
		case 0: cnt[WORK_A]++; a(i & 15); break;
		case 1: cnt[WORK_B]++; b(i & 15); break;
		case 2: cnt[WORK_C]++; c(i & 15); break;
		default: cnt[WORK_REC]++; rec((int)((seed >> 20) % 6)); break;
		}
	}
	pthread_mutex_lock(&lock);
	for (int j = 0; j < NARCS; j++)
		total[j] += cnt[j], cnt[j] = 0;
	pthread_mutex_unlock(&lock);
}

static void *thread(void *arg)
{
	work((unsigned)(unsigned long)arg, 20000);
	return 0;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 0;
	pthread_t t;
	work(1, 50000);
	if (threads && pthread_create(&t, 0, thread, (void *)7ul) == 0) {
		work(2, 20000);
		pthread_join(t, 0);
	}
	for (int j = 0; j < NARCS; j++)
		printf("%s %lu\n", arcs[j], total[j]);
	return 0;
}
