/* The descriptor table's size (FDSize in /proc/self/status) before the
   program's second thread starts and after it has run. Grown while
   threads share the table, the kernel waits for an RCU grace period in
   the thread that grows it (10-26 ms here): a woven program's second
   thread must not be the one to grow it (the control channel's descriptor
   is numbered near the top of the limit). Prints whether it grew. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long fd_size(void)
{
	char line[256];
	long n = -1;
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "FDSize:", 7) == 0)
			n = atol(line + 7);
	fclose(f);
	return n;
}

static void *work(void *arg)
{
	char *p = malloc(32);
	snprintf(p, 32, "%s", (const char *)arg);
	free(p);
	return arg;
}

int main(void)
{
	pthread_t th;
	long before = fd_size(), after;
	if (before < 0 || pthread_create(&th, NULL, work, "second") != 0 || pthread_join(th, NULL) != 0)
		return 1;
	after = fd_size();
	printf("descriptor table %s while the program had threads\n", after == before ? "kept its size" : "grew");
	return 0;
}
