/* No allocations. With argument "clash", first creates the file the
   runtime would write its profile to, which it must not replace. */
#include "woven.h"
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

FN(main);

int main(int argc, char **argv)
{
	ENTER(main);
	if (argc > 1 && strcmp(argv[1], "clash") == 0) {
		char name[64] = "weave-empty.";
		int n = (int)strlen(name), pid = getpid(), d = 1, fd;
		while (d * 10 <= pid)
			d *= 10;
		for (; d; d /= 10)
			name[n++] = (char)('0' + pid / d % 10);
		strcpy(name + n, ".prof");
		fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0666);
		if (fd < 0 || write(fd, "mine\n", 5) != 5)
			return 2;
		close(fd);
	}
	return 0;
}
