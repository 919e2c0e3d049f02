/* Extended identifiers: universal character names and UTF-8, which gcc's
   -E writes as \UXXXXXXXX and clang's as UTF-8. */
#include <stdio.h>
#include <stdlib.h>

struct \u00e9l\u00e8ve {
	char *nom;
	int note;
};

static struct \u00e9l\u00e8ve *cr\u00e9er(const char *nom, int note)
{
	struct \U000000e9l\U000000e8ve *\u00e9 = malloc(sizeof(struct élève));
	if (\u00e9 == NULL)
		exit(1);
	\u00e9->nom = (char *)nom;
	\u00e9->note = note;
	return é;
}

static double привет(int n)
{
	double сумма = 0;
	for (int i = 1; i <= n; i++)
		сумма += 1.0 / i;
	printf("%s\n", __func__);
	return сумма;
}

int main(void)
{
	struct élève *e = créer("Zoé", 17);
	printf("%s %d %.3f\n", e->nom, e->note, привет(4));
	free(e);
	return 0;
}
