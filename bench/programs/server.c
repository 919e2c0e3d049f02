/* server: a server-like allocation load. T threads each handle N
   messages: a message of 16-271 bytes is made two calls down (handle ->
   make_msg -> malloc), written, and kept in the thread's ring of R slots,
   replacing (and freeing) the one there; every 64th message is handed to
   the next thread instead, which frees it (with one thread, the program's
   own, itself). Nothing leaks.
   Usage: server T N [R] (defaults 2, 1000000, 1024). Events: 2*T*N. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct msg {
	struct msg *next; /* in a mailbox */
	uint32_t len, seq;
	unsigned char body[];
};

/* A thread's mailbox: messages other threads hand it. */
struct mailbox {
	pthread_mutex_t lock;
	struct msg *head;
} __attribute__((aligned(64)));

struct worker {
	int id, nthreads;
	long n, ring;
	struct mailbox *boxes;
	uint64_t sum; /* of the bytes of every message made */
	pthread_t th;
} __attribute__((aligned(64)));

/* A message of size bytes (16 or more: the header, then the body). */
__attribute__((noinline)) static struct msg *make_msg(uint32_t size, uint32_t seq)
{
	struct msg *m = malloc(size);
	if (!m)
		abort();
	m->next = NULL;
	m->len = size - (uint32_t)sizeof *m;
	m->seq = seq;
	if (m->len)
		memset(m->body, (int)seq, m->len < 16 ? m->len : 16);
	return m;
}

__attribute__((noinline)) static struct msg *handle(uint32_t *rng, uint32_t seq)
{
	*rng = *rng * 1103515245u + 12345u;
	return make_msg(16 + (*rng >> 16) % 256, seq);
}

/* Frees what other threads handed this one. */
static void drain(struct mailbox *b)
{
	struct msg *m, *next;
	pthread_mutex_lock(&b->lock);
	m = b->head;
	b->head = NULL;
	pthread_mutex_unlock(&b->lock);
	for (; m; m = next) {
		next = m->next;
		free(m);
	}
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct msg **ring = calloc((size_t)w->ring, sizeof *ring);
	struct mailbox *next = &w->boxes[(w->id + 1) % w->nthreads];
	uint32_t rng = 12345u + (uint32_t)w->id * 7919u;
	long i;
	if (!ring)
		abort();
	for (i = 0; i < w->n; i++) {
		struct msg *m = handle(&rng, (uint32_t)i);
		w->sum += sizeof *m + m->len;
		if (i % 64 == 63) {
			pthread_mutex_lock(&next->lock);
			m->next = next->head;
			next->head = m;
			pthread_mutex_unlock(&next->lock);
			drain(&w->boxes[w->id]);
			continue;
		}
		free(ring[i % w->ring]);
		ring[i % w->ring] = m;
	}
	for (i = 0; i < w->ring; i++)
		free(ring[i]);
	free(ring);
	return NULL;
}

int main(int argc, char **argv)
{
	int t, nt = argc > 1 ? atoi(argv[1]) : 2;
	long n = argc > 2 ? atol(argv[2]) : 1000000, ring = argc > 3 ? atol(argv[3]) : 1024;
	struct worker *ws;
	struct mailbox *boxes;
	uint64_t sum = 0;
	if (nt < 1 || n < 1 || ring < 1) {
		fprintf(stderr, "usage: server THREADS MESSAGES [RING]\n");
		return 2;
	}
	ws = aligned_alloc(64, sizeof *ws * (size_t)nt);
	boxes = aligned_alloc(64, sizeof *boxes * (size_t)nt);
	if (!ws || !boxes)
		abort();
	memset(ws, 0, sizeof *ws * (size_t)nt);
	for (t = 0; t < nt; t++) {
		pthread_mutex_init(&boxes[t].lock, NULL);
		boxes[t].head = NULL;
		ws[t] = (struct worker){.id = t, .nthreads = nt, .n = n, .ring = ring, .boxes = boxes};
	}
	if (nt == 1)
		work(&ws[0]); /* one thread: the program's own */
	for (t = 0; nt > 1 && t < nt; t++)
		if (pthread_create(&ws[t].th, NULL, work, &ws[t]))
			abort();
	for (t = 0; t < nt; t++) {
		if (nt > 1)
			pthread_join(ws[t].th, NULL);
		sum += ws[t].sum;
	}
	for (t = 0; t < nt; t++)
		drain(&boxes[t]);
	printf("%d threads, %ld messages each, %llu bytes\n", nt, n, (unsigned long long)sum);
	free(ws);
	free(boxes);
	return 0;
}
