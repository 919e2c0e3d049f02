/* In ISO C modes (-std=c99, -ansi) and under -fno-asm, asm and typeof are
   ordinary identifiers; in C89, inline is one too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct insn {
	char *asm;
	int typeof;
};

static int typeof_of(const struct insn *asm)
{
	return asm->typeof * 2;
}

#if !defined(__STDC_VERSION__) || __STDC_VERSION__ < 199901L
static int inline = 3;
#else
static int in_line = 3;
#define inline in_line
#endif

int main(void)
{
	struct insn *asm = malloc(sizeof *asm);
	int typeof;
	if (asm == NULL)
		return 1;
	asm->asm = malloc(8);
	strcpy(asm->asm, "nop");
	asm->typeof = inline;
	typeof = typeof_of(asm);
	printf("%s %d\n", asm->asm, typeof);
	free(asm->asm);
	free(asm);
	return typeof - 6;
}
