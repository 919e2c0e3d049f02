//go:build ignore

/* picture.c: the heap picture at exit, KBDB's (Serrano and Boehm): every
   live block's address, size and allocation context, from the side table,
   never a copy of the heap. The report draws it a pixel per granule. */

#include "internal.h"

/* At most this many blocks are written (about 30 bytes each); a heap with
   more gets M picture_skipped instead. */
#define PICTURE_MAX (1u << 17)

struct picture {
	struct writer *w;
	u64 blocks;
};

/* The A node id of a side-table value, or 0 when the block has none in
   this profile (inherited from the parent of a fork, or allocated under
   a node newer than the writer's snapshot). */
RT_RARE static u32 picture_node(struct writer *w, u64 val)
{
	u32 i = (u32)(val & NODE_MASK);
	if (!i || i >= w->nids || node_at(i)->kind != KIND_A || w->ids[i] == NO_ID)
		return 0;
	return w->ids[i];
}

RT_RARE static void picture_count(uintptr_t a, u64 val, u32 gen, void *arg)
{
	struct picture *p = arg;
	(void)a, (void)gen;
	if (picture_node(p->w, val))
		p->blocks++;
}

RT_RARE static void picture_block(uintptr_t a, u64 val, u32 gen, void *arg)
{
	struct picture *p = arg;
	struct out *o = p->w->o;
	(void)gen;
	u32 id = picture_node(p->w, val);
	if (!id)
		return;
	out_ch(o, 'X');
	out_field(o, (u64)a);
	out_field(o, val_size(a, val));
	out_field(o, id);
	out_ch(o, '\n');
	o->records++;
}

/* The X records (or M picture_skipped); after the N records. live: the
   blocks in use by the heap counters (the H records'), which the side
   table's own count differs from only by blocks of threads still running:
   far over the limit (a heap of leaks, widgets'), that number is given
   without a walk of the side table. */
RT_RARE static void write_picture(struct writer *w, u64 live)
{
	struct picture p = {.w = w, .blocks = live};
	if (live <= 2 * PICTURE_MAX) {
		p.blocks = 0;
		side_each(picture_count, &p);
	}
	if (p.blocks > PICTURE_MAX) {
		out_str(w->o, "M picture_skipped");
		out_field(w->o, p.blocks);
		out_ch(w->o, '\n');
		w->o->records++;
		return;
	}
	side_each(picture_block, &p);
}
