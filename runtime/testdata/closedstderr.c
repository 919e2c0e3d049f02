/* Closes its stderr, opens a data file (which takes descriptor 2),
   writes a line into it and leaks a block: the runtime's summary and
   messages must not end up in the program's file. */
#include "woven.h"
#include <fcntl.h>
#include <unistd.h>

FN(main);

int main(void)
{
	ENTER(main);
	void *p = W_MALLOC(main, 50);
	int fd;
	(void)p;
	p = 0;
	close(2);
	fd = open("data.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd != 2 || write(fd, "data\n", 5) != 5)
		return 2;
	return 0;
}
