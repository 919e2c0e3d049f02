/* Chroots into argv[1] (which has a tmp/ and nothing else) and exits: no
   /proc there, nor the directory it started in. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	char *keep = malloc(33);
	(void)argc;
	if (chroot(argv[1]) != 0 || chdir("/") != 0) { perror("chroot"); return 2; }
	keep[0] = 'k';
	char *d = malloc(50);
	d[0] = 1;
	printf("ok %c\n", keep[0]);
	return 0;
}
