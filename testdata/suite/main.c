/* kvtool [-f] [-l] FILE...: prints each file's key=value pairs sorted by
   key. -f reads each file in a child process (fork); -l keeps the tables
   (a leak, for the tests of leak checking). Exit status: 1 if a file
   could not be read or has a line without '='. */
#include "kv.h"
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int keep;

static int one(const char *path)
{
	const char *base = strrchr(path, '/');
	FILE *f = fopen(path, "r");
	struct kv *t;
	int rc;
	if (!f) {
		fprintf(stderr, "kvtool: cannot open %s\n", base ? base + 1 : path);
		return 1;
	}
	t = kv_new();
	rc = kv_read(t, f, base ? base + 1 : path);
	fclose(f);
	if (rc == 0)
		kv_print(t, stdout);
	if (!keep)
		kv_free(t);
	return rc != 0;
}

int main(int argc, char **argv)
{
	int fork_each = 0, status = 0, i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-f") == 0)
			fork_each = 1;
		else if (strcmp(argv[i], "-l") == 0)
			keep = 1;
	}
	for (; i < argc; i++) {
		if (fork_each) {
			int st;
			pid_t pid;
			fflush(stdout);
			pid = fork();
			if (pid == 0) {
				int rc = one(argv[i]);
				fflush(stdout);
				exit(rc);
			}
			if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
				status = 1;
		} else {
			status |= one(argv[i]);
		}
	}
	return status;
}
