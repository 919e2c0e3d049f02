/* TestFramePointcutDlclose: loads lib.so (its frameless libtick), calls
   it and creates "opened"; once the file "close" exists in the current
   directory unloads it and creates "closed"; then runs until "stop"
   exists. tick is frameless, work framed. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int tick(int i) { return i + 1; }

__attribute__((noinline)) void *work(int n) { return malloc(n); }

static void wait_for(const char *name)
{
	for (int i = 0; i < 2000 && access(name, F_OK) != 0; i++) {
		free(work(8));
		usleep(5000);
	}
}

int main(void)
{
	void *h = dlopen("./lib.so", RTLD_NOW);
	int (*f)(int) = h ? (int (*)(int))dlsym(h, "libtick") : 0;
	int s = f ? f(3) : -1;
	close(open("opened", O_CREAT | O_WRONLY, 0600));
	wait_for("close");
	if (h)
		dlclose(h);
	close(open("closed", O_CREAT | O_WRONLY, 0600));
	wait_for("stop");
	for (int i = 0; i < 10; i++)
		s += tick(i);
	printf("%d\n", s);
	return 0;
}
