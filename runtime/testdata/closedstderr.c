/* Closes its stderr, opens a data file (which takes descriptor 2),
   writes a line into it and leaks a block: the runtime's summary and
   messages must not end up in the program's file. With an argument it
   closes its stdout and stderr and leaves them closed, as gnulib's
   close_stdout and bc's dc do: the WEAVE_LOG file (or the profile) then
   takes descriptor 2. */
#include "woven.h"
#include <fcntl.h>
#include <unistd.h>

FN(main);

int main(int argc, char **argv)
{
	ENTER(main);
	void *p = W_MALLOC(main, 50);
	int fd;
	(void)argv;
	(void)p;
	p = 0;
	if (argc > 1) {
		close(1);
		close(2);
		return 0;
	}
	close(2);
	fd = open("data.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd != 2 || write(fd, "data\n", 5) != 5)
		return 2;
	return 0;
}
