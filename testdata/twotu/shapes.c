#include "shapes.h"

double perimeter(const struct shape *s) { return s->sides * s->size; }

struct shape *square(double size) { return shape_new(4, size); }
