#include "kv.h"
#include <stdlib.h>
#include <string.h>

struct pair {
	char *key, *value;
	struct pair *next;
};

struct kv {
	struct pair *head;
	size_t n;
};

struct kv *kv_new(void)
{
	return calloc(1, sizeof(struct kv));
}

void kv_free(struct kv *t)
{
	struct pair *p = t->head;
	while (p) {
		struct pair *next = p->next;
		free(p->key);
		free(p->value);
		free(p);
		p = next;
	}
	free(t);
}

static void kv_set(struct kv *t, const char *key, const char *value)
{
	struct pair *p;
	for (p = t->head; p; p = p->next) {
		if (strcmp(p->key, key) == 0) {
			free(p->value);
			p->value = strdup(value);
			return;
		}
	}
	p = malloc(sizeof *p);
	p->key = strdup(key);
	p->value = strdup(value);
	p->next = t->head;
	t->head = p;
	t->n++;
}

int kv_read(struct kv *t, FILE *f, const char *name)
{
	char *line = NULL;
	size_t cap = 0;
	int n = 0, rc = 0;
	while (getline(&line, &cap, f) > 0) {
		char *eq, *end = line + strcspn(line, "\n");
		n++;
		*end = 0;
		if (line[0] == '#' || line[0] == 0)
			continue;
		eq = strchr(line, '=');
		if (!eq) {
			fprintf(stderr, "kvtool: %s:%d: no '=' in \"%s\"\n", name, n, line);
			rc = -1;
			break;
		}
		*eq = 0;
		if (eq == line) {
			fprintf(stderr, "kvtool: %s:%d: empty key ignored\n", name, n);
			continue;
		}
		kv_set(t, line, eq + 1);
	}
	free(line);
	return rc;
}

static int by_key(const void *a, const void *b)
{
	return strcmp((*(struct pair *const *)a)->key, (*(struct pair *const *)b)->key);
}

void kv_print(const struct kv *t, FILE *out)
{
	struct pair **v = malloc((t->n + 1) * sizeof *v), *p;
	size_t i = 0;
	for (p = t->head; p; p = p->next)
		v[i++] = p;
	qsort(v, t->n, sizeof *v, by_key);
	for (i = 0; i < t->n; i++)
		fprintf(out, "%s=%s\n", v[i]->key, v[i]->value);
	free(v);
}
