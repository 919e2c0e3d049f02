//go:build ignore

/* vmwrite.c: the memory records of the profile (Y, V, L, P and M
   heap_peak, peak_snapshot; see profile/format.go), from what vmmap.c
   recorded. */

#include "internal.h"

/* ---------------------------------------------------------------- output */

RT_RARE static void out_i64(struct out *o, long long v)
{
	if (v < 0) {
		out_str(o, " -1");
		return;
	}
	out_field(o, (u64)v);
}

/* Writes a snapshot's maps, a piece at a time (vm_unpack), as V records:
   a line each, empty ones left out. */
struct vm_lines {
	struct out *o;
	const char *name;
	int in_line;
};

RT_RARE static void vm_write_piece(void *arg, const char *s, wsize n)
{
	struct vm_lines *w = arg;
	const char *end = s + n;
	while (s < end) {
		const char *eol = memchr(s, '\n', (wsize)(end - s));
		const char *stop = eol ? eol : end;
		if (stop > s && !w->in_line) {
			out_str(w->o, "V ");
			out_str(w->o, w->name);
			out_ch(w->o, ' ');
			w->in_line = 1;
		}
		out_mem(w->o, s, (wsize)(stop - s));
		if (eol && w->in_line) {
			out_ch(w->o, '\n');
			w->o->records++;
			w->in_line = 0;
		}
		s = eol ? eol + 1 : end;
	}
}

RT_RARE static void vm_write_snap(struct out *o, const struct vm_snap *s)
{
	struct vm_lines w = {o, s->name, 0};
	if (!s->taken)
		return;
	out_str(o, "Y ");
	out_str(o, s->name);
	out_field(o, s->ns);
	out_field(o, s->bytes);
	out_field(o, s->blocks);
	out_i64(o, s->vm);
	out_i64(o, s->rss);
	out_ch(o, '\n');
	o->records++;
	if (s->err || !s->maps.p)
		return;
	if (s->packed)
		vm_unpack(&s->maps, vm_write_piece, &w);
	else
		vm_write_piece(&w, s->maps.p, s->maps.n);
	if (w.in_line)
		vm_write_piece(&w, "\n", 1);
}

/* Writes the memory records (M, Y, V, L, P) at exit: takes the exit
   snapshot, a last point, and a last peak snapshot if the heap is at its
   peak. ids maps node indices to profile ids. g_lock held, in_rt set. */
RT_RARE static void vm_write(struct out *o, const u32 *ids)
{
	char exe[4096], path[300];
	const struct vm_snap *snaps[3] = {&g_vm.at_start, &g_vm.at_peak, &g_vm.at_exit};
	u64 b;
	ssize_t k;
	u32 i;
	int err = 0, locked;

	/* From a crash handler the thread may hold the lock: give up waiting
	   after a while and write what is there. */
	for (i = 0; (locked = !__atomic_exchange_n(&g_vm.lock, 1, __ATOMIC_ACQUIRE)) == 0 && i < 1u << 24; i++)
		cpu_relax();
	b = vm_bytes();
	vm_peak_raise(b);
	if (b == vm_load(&g_vm.peak) && b != g_vm.snap_bytes && b)
		vm_peak_take(b);
	vm_snap_take(&g_vm.at_exit);
	vm_point(b, 1);

	out_str(o, "M page_size");
	out_field(o, (u64)getauxval(AT_PAGESZ));
	out_ch(o, '\n');
	o->records++;
	vm_path(path, sizeof path, "self/exe");
	if ((k = readlink(path, exe, sizeof exe - 1)) > 0 && !memchr(exe, '\n', (wsize)k)) {
		out_str(o, "M exe ");
		out_mem(o, exe, (wsize)k);
		out_ch(o, '\n');
		o->records++;
	}
	out_str(o, "M heap_peak");
	out_field(o, vm_load(&g_vm.peak));
	out_field(o, vm_peak_blocks());
	out_field(o, g_vm.peak_ns);
	out_str(o, "\nM peak_snapshot");
	out_field(o, g_vm.snap_bytes);
	out_field(o, g_vm.snap_blocks);
	out_field(o, g_vm.snap_ns);
	out_str(o, " 0.0625\n"); /* 1 >> VM_TOL_SHIFT */
	o->records += 2;
	for (i = 0; i < 3; i++)
		if (snaps[i]->taken && snaps[i]->err && !err)
			err = snaps[i]->err;
	if (err) {
		out_str(o, "M maps_error reading ");
		vm_path(path, sizeof path, "self/maps");
		out_str(o, path);
		out_str(o, ": ");
		out_str(o, errdesc(err));
		out_ch(o, '\n');
		o->records++;
	}
	for (i = 0; i < 3; i++)
		vm_write_snap(o, snaps[i]);
	for (i = 0; i < g_vm.npts; i++) {
		const struct vm_point *p = &g_vm.pts[i];
		out_ch(o, 'L');
		out_field(o, p->ns);
		out_field(o, p->bytes);
		out_field(o, p->blocks);
		out_field(o, p->allocs);
		out_field(o, p->frees);
		out_i64(o, p->vm);
		out_i64(o, p->rss);
		out_ch(o, '\n');
		o->records++;
	}
	/* P records by node id: the leaves were taken in the writer's order. */
	for (i = 0; i < g_vm.nleaves; i++) {
		if (ids[g_vm.leaves[i].node] == ~0u) /* not in the profile (profile.c's keep_nodes) */
			continue;
		out_ch(o, 'P');
		out_field(o, ids[g_vm.leaves[i].node]);
		out_field(o, g_vm.leaves[i].bytes);
		out_field(o, g_vm.leaves[i].blocks);
		out_ch(o, '\n');
		o->records++;
	}
	if (locked)
		spin_unlock(&g_vm.lock);
}
