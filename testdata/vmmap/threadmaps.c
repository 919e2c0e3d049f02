/* threadmaps.c: NT threads wait at a barrier (their stacks mapped), a
   file at a long path (argv[1]) is mapped, then the heap climbs past any
   earlier peak with one block, and the program writes /proc/self/maps as
   it reads it then to argv[2]: the woven runtime's copy at the peak must
   be the same text, line for line. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef NT
#define NT 64
#endif

static pthread_barrier_t in, out;
static char maps[1 << 20];

static void *worker(void *arg)
{
	char *p = malloc(64 + (size_t)arg);
	pthread_barrier_wait(&in);
	pthread_barrier_wait(&out);
	free(p);
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t t[NT];
	size_t n = 0, i;
	ssize_t k;
	int fd;
	char *big, *file;
	if (argc < 3)
		return 2;
	pthread_barrier_init(&in, 0, NT + 1);
	pthread_barrier_init(&out, 0, NT + 1);
	for (i = 0; i < NT; i++)
		pthread_create(&t[i], 0, worker, (void *)i);
	pthread_barrier_wait(&in);
	if ((fd = open(argv[1], O_RDONLY)) < 0 || (file = mmap(0, 4096, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED)
		return 3;
	close(fd);
	big = malloc(64 << 20); /* the heap's peak, its copy of the maps */
	if ((fd = open("/proc/self/maps", O_RDONLY)) < 0)
		return 4;
	while (n < sizeof maps && (k = read(fd, maps + n, sizeof maps - n)) > 0)
		n += (size_t)k;
	close(fd);
	big[0] = file[0];
	free(big);
	if ((fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0 || write(fd, maps, n) != (ssize_t)n)
		return 5;
	close(fd);
	pthread_barrier_wait(&out);
	for (i = 0; i < NT; i++)
		pthread_join(t[i], 0);
	printf("threads %d\n", NT);
	return 0;
}
