/* mprof's producer/consumer example (Zorn & Hilfinger, Figure 1): two
   producers allocate widgets through make_widget, the consumer frees them,
   but consume_widget has a bug and never frees red widgets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct widget {
	int color;
	int id;
	char name[196];
} widget;

enum { RED, BLUE };

static unsigned long long seed = 42;

/* random_flip returns 1 or 0 with equal probability (a fixed LCG, so runs
   are reproducible). */
static int random_flip(void)
{
	seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return (int)(seed >> 63);
}

static widget *make_widget(int color, int id)
{
	widget *w = malloc(sizeof(widget));
	if (w == NULL) {
		perror("malloc");
		exit(1);
	}
	w->color = color;
	w->id = id;
	snprintf(w->name, sizeof w->name, "%s widget %d", color == RED ? "red" : "blue", id);
	return w;
}

static widget *make_red_widget(int id) { return make_widget(RED, id); }

static widget *make_blue_widget(int id) { return make_widget(BLUE, id); }

static void consume_widget(widget *w)
{
	if (w->color == RED)
		return; /* the bug: red widgets are never freed */
	free(w);
}

int main(int argc, char **argv)
{
	static char outbuf[BUFSIZ]; /* stdio allocates nothing: every heap block is the program's */
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	long n = argc > 1 ? atol(argv[1]) : 10000;
	long red = 0, blue = 0;
	for (long i = 0; i < n; i++) {
		widget *w;
		if (random_flip()) {
			w = make_red_widget((int)i);
			red++;
		} else {
			w = make_blue_widget((int)i);
			blue++;
		}
		consume_widget(w);
	}
	printf("%ld widgets: %ld red, %ld blue\n", n, red, blue);
	return 0;
}
