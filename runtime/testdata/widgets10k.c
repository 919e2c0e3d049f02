/* mprof's producer/consumer example: 10,000 widgets, the red ones leak. */
#include "woven.h"

struct widget {
	char body[200];
	int color;
};

FN(make_widget);
FN(make_red_widget);
FN(make_blue_widget);
FN(consume);
FN(main);

static struct widget *make_widget(int color)
{
	ENTER(make_widget);
	struct widget *w = W_MALLOC_T(make_widget, struct widget);
	w->color = color;
	return w;
}

static struct widget *make_red_widget(void)
{
	ENTER(make_red_widget);
	return make_widget(1);
}

static struct widget *make_blue_widget(void)
{
	ENTER(make_blue_widget);
	return make_widget(2);
}

static void consume(struct widget *w)
{
	ENTER(consume);
	if (w->color == 2)
		W_FREE(consume, w);
}

int main(void)
{
	ENTER(main);
	int i;
	for (i = 0; i < 10000; i++)
		consume(i % 2 ? make_red_widget() : make_blue_widget());
	return 0;
}
