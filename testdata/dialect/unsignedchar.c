/* Under -funsigned-char plain char is unsigned, which constant
   expressions (here an array size) can depend on. */
#include <stdio.h>
#include <stdlib.h>

char char_is_unsigned[(char)-1 > 0 ? 1 : -1];

int main(void)
{
	char *c = malloc(1);
	if (c == NULL)
		return 1;
	*c = (char)200;
	printf("%d %d\n", *c > 0, (int)sizeof char_is_unsigned);
	free(c);
	return 0;
}
