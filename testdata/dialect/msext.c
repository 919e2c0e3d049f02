/* -fms-extensions: a struct member of a tagged or typedef'd struct type
   without a name makes its members the outer struct's. */
#include <stdio.h>
#include <stdlib.h>

struct point {
	int x, y;
};
typedef struct point point_t;

struct tagged {
	struct point;
	int z;
};

struct typed {
	point_t;
	int w;
};

int main(void)
{
	struct tagged *t = malloc(sizeof *t);
	struct typed u;
	if (t == NULL)
		return 1;
	t->x = 1;
	t->y = 2;
	t->z = 3;
	u.x = 4;
	u.w = 5;
	printf("%d %d %d %d %d\n", t->x, t->y, t->z, u.x, u.w);
	free(t);
	return 0;
}
