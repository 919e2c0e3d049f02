/* kv: a table of key=value pairs read from text. */
#ifndef KV_H
#define KV_H
#include <stdio.h>

struct kv;

struct kv *kv_new(void);
void kv_free(struct kv *t);
/* Reads key=value lines ('#' starts a comment) into t: a later value of a
   key replaces the earlier one. Problems are reported on stderr as
   "kvtool: NAME:LINE: what"; returns -1 on a line without '=', else 0. */
int kv_read(struct kv *t, FILE *f, const char *name);
/* Writes the pairs sorted by key. */
void kv_print(const struct kv *t, FILE *out);
#endif
