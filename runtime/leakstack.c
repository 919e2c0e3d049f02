//go:build ignore

/* leakstack.c: where the live part of each thread's stack begins, for the
   leak scan (leakscan.c reads each stack from there up).

   memcheck reads a stack from its thread's stack pointer up: the frames
   below are dead (memory it no longer calls addressable), and the slots of
   frames made since that nothing wrote hold bytes it calls undefined,
   which it never reads as pointers. A scan that read lower down would take
   stale words for roots (a returned function's locals, main's after main
   returned, both lying under the exit path's frames): blocks memcheck
   calls definitely lost would look reachable. So:
   - the exiting thread is read from the stack pointer of the call that
     began the exit: exit, quick_exit, _exit or _Exit, called directly, or
     through a PLT entry or a GOT slot, by the program, a library or the C
     library itself (main's return is its call to exit). That call's return
     address is the lowest one above the exit writer's frame whose call
     instruction calls one of them (ls_exit_sp). The exit path's frames
     below (atexit handlers, destructors, the writer) are not read, but for
     the registers that the exit function and the function it calls push
     first (glibc's __run_exit_handlers pushes all six callee-saved ones):
     the caller's registers, where memcheck finds a pointer that a live
     frame kept in one (ls_saved_regs). Not found (exit called through a
     pointer, or by a tail jump): read from the writer's frame.
     exit called from a signal handler on another stack (sigaltstack):
     the interrupted stack is read from the stack pointer in the signal
     frame above the handler, with the interrupted registers
     (ls_signal_frame); otherwise it would be read whole. The mapping
     holding the alternate stack is then no stack read from sp up: it
     is read whole but for the alternate stack's dead part, for it may
     hold more (gnulib's c-stack keeps its alternate stack in the
     program's data, beside the globals; an array in main's frame lies
     above the frames the signal interrupted).
   - a thread stopped for the scan (leakstop.c): from its stack pointer
     at the stop, less the 128-byte red zone where it was stopped in its
     own code (a leaf function may keep data there, which memcheck reads
     too), with its general registers, both read by ptrace (lt_stopped)
     or from the signal context (ls_on_signal; the signal frame below,
     with the vector registers, is not read); ls_task_regs marks from
     them. A thread stopped in a system call (blocked in poll, read, a
     futex wait: most threads at an exit) is read from its stack pointer
     (ls_stop_sp): what lies below it is dead, the frames of what the
     calling function called before (its return address, the registers
     it pushed: values still in the registers or in the frames above)
     and older ones, where memcheck finds bytes it calls undefined; a
     compiler keeps data in the red zone only in a leaf function, and
     the C library's blocking calls are no leaves (a cancellation point
     calls __pthread_enable_asynccancel first). clang -O2 put a dead
     frame's pointers there (testdata/leaks/redzone.c): read, they made
     blocks memcheck calls definitely lost still reachable.
   - a thread that ended: from the stack pointer of the C library's thread
     start when it called the function that ran the thread-exit hook
     (ls_thread_exit): the start routine's frames, dead, are not read; the
     thread descriptor and TLS above are, as memcheck reads them. */

#include "internal.h"

#define LS_REDZONE 128   /* the x86-64 ABI's red zone below the stack pointer */
#define LS_SEARCH 16384u /* words searched above a frame for a return address */

/* Where a stopped thread's live stack begins (see the top): its stack
   pointer sp, less the red zone unless it was stopped in a system call
   (in_call). */
RT_RARE static uintptr_t ls_stop_sp(uintptr_t sp, int in_call)
{
	return in_call ? sp : sp - LS_REDZONE;
}

/* Whether a thread a signal stopped at rip was in a system call: the
   instruction at rip is syscall (the kernel set rip back to restart it)
   or ends just before rip (the call returned, or ended with EINTR). */
RT_RARE static int ls_at_syscall(uintptr_t rip)
{
#if defined(__x86_64__)
	const unsigned char *c = (const unsigned char *)rip;
	if (rip % 4096 != 4095 && c[0] == 0x0f && c[1] == 0x05)
		return 1;
	return rip % 4096 >= 2 && c[-2] == 0x0f && c[-1] == 0x05; /* not across a page */
#else
	(void)rip;
	return 0;
#endif
}

/* Readable mappings (or loaded segments), sorted by address. */
struct ls_rmap {
	uintptr_t lo, hi;
	int exec;
};
struct ls_rmaps {
	struct ls_rmap *m;
	u32 n, cap;
};

/* Whether [a, a + n) lies in one readable mapping (executable: exec). */
static int ls_readable(const struct ls_rmaps *r, uintptr_t a, u64 n, int exec)
{
	u32 lo = 0, hi = r->n;
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;
		if (r->m[mid].hi <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n && r->m[lo].lo <= a && a + n <= r->m[lo].hi && (!exec || r->m[lo].exec);
}

#if defined(__x86_64__)
static int32_t ls_rel32(const unsigned char *c)
{
	int32_t v;
	memcpy(&v, c, sizeof v);
	return v;
}

/* What a PLT entry at t jumps to (its GOT slot's address): t itself when
   t is not one ([endbr64] [bnd] jmp *rel32(%rip)). */
static uintptr_t ls_through_plt(const struct ls_rmaps *r, uintptr_t t)
{
	const unsigned char *c = (const unsigned char *)t;
	uintptr_t slot;
	if (!ls_readable(r, t, 12, 1))
		return t;
	if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
		c += 4;
	if (c[0] == 0xf2)
		c++;
	if (c[0] != 0xff || c[1] != 0x25)
		return t;
	slot = (uintptr_t)(c + 6) + (uintptr_t)(intptr_t)ls_rel32(c + 2);
	return ls_readable(r, slot, 8, 0) ? *(const uintptr_t *)slot : t;
}

/* The function that the call returning to ret called: direct (e8) or
   through a GOT slot (ff 15), then through a PLT entry; 0 when the bytes
   before ret are not such a call. */
static uintptr_t ls_callee(const struct ls_rmaps *r, uintptr_t ret)
{
	const unsigned char *c = (const unsigned char *)ret;
	uintptr_t slot;
	if (!ls_readable(r, ret - 6, 6, 1))
		return 0;
	if (c[-5] == 0xe8)
		return ls_through_plt(r, ret + (uintptr_t)(intptr_t)ls_rel32(c - 4));
	if (c[-6] == 0xff && c[-5] == 0x15) {
		slot = ret + (uintptr_t)(intptr_t)ls_rel32(c - 4);
		if (ls_readable(r, slot, 8, 0))
			return ls_through_plt(r, *(const uintptr_t *)slot);
	}
	return 0;
}

/* The stack pointer of the lowest call above from, below top, whose callee
   is one of fns[0..nfns), or (near) starts at most 4 KiB before near: the
   address above its return address; 0 when there is none. */
static uintptr_t ls_call_sp(const struct ls_rmaps *r, uintptr_t from, uintptr_t top, const uintptr_t *fns, u32 nfns,
			    uintptr_t near, uintptr_t *callee)
{
	const uintptr_t *p = (const uintptr_t *)((from + 7) & ~(uintptr_t)7);
	u32 k, i;
	for (k = 0; k < LS_SEARCH && (uintptr_t)(p + 1) <= top; k++, p++) {
		uintptr_t t;
		if (!ls_readable(r, *p - 6, 6, 1) || !(t = ls_callee(r, *p)))
			continue;
		*callee = t;
		if (near && t <= near && near - t < 4096)
			return (uintptr_t)(p + 1);
		for (i = 0; i < nfns; i++)
			if (fns[i] && t == fns[i])
				return (uintptr_t)(p + 1);
	}
	return 0;
}
#endif

/* How many registers the prologue at f pushes before anything but a
   register move ([endbr64], push %rbx, %rbp, %r12-%r15, mov between
   registers): gcc's and clang's way of saving the callee-saved ones. */
RT_RARE static u32 ls_pushes(const struct ls_rmaps *r, uintptr_t f)
{
	const unsigned char *c = (const unsigned char *)f;
	u32 k = 0, i = 0;
	if (!ls_readable(r, f, 40, 1))
		return 0;
	if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
		i = 4;
	while (i < 36 && k < 6) {
		if (c[i] == 0x41 && c[i + 1] >= 0x54 && c[i + 1] <= 0x57)
			k++, i += 2;
		else if (c[i] == 0x55 || c[i] == 0x53)
			k++, i++;
		else if ((c[i] & 0xf0) == 0x40 && c[i + 1] == 0x89 && (c[i + 2] & 0xc0) == 0xc0)
			i += 3;
		else if (c[i] == 0x89 && (c[i + 1] & 0xc0) == 0xc0)
			i += 2;
		else
			break;
	}
	return k;
}

/* The registers the exit function f (called from the return slot below
   sp) and its callee pushed: ranges in g_ls.saved. */
RT_RARE static void ls_saved_regs(const struct ls_rmaps *r, uintptr_t sp, uintptr_t self_sp, uintptr_t f)
{
	const uintptr_t *p = (const uintptr_t *)(sp - 8);
	u32 k = ls_pushes(r, f);
	g_ls.saved[0].lo = sp - 8 - 8 * k, g_ls.saved[0].hi = sp - 8;
	/* f's call: the first return address into f below. */
	for (p--; (uintptr_t)p >= self_sp; p--) {
		uintptr_t t;
		if (*p < f || *p - f >= 4096 || !ls_readable(r, *p - 6, 6, 1) || !(t = ls_callee(r, *p)))
			continue;
		k = ls_pushes(r, t);
		g_ls.saved[1].lo = (uintptr_t)p - 8 * k, g_ls.saved[1].hi = (uintptr_t)p;
		return;
	}
}

/* Whether sp lies on this thread's alternate signal stack, which it
   reads into alt. */
RT_RARE static int sp_on_altstack(uintptr_t sp, stack_t *alt)
{
	return sigaltstack(NULL, alt) == 0 && sp >= (uintptr_t)alt->ss_sp && sp < (uintptr_t)alt->ss_sp + alt->ss_size;
}

/* The signal frame above sp, below top, when its interrupted stack
   pointer lies in another mapping than sp, or off the alternate signal
   stack that sp is on (a handler on sigaltstack, whose stack may lie in
   the interrupted stack's mapping: an array in main's frame):
   g_ls.sig_uc. At a handler's entry its return address is the restorer
   (mov $15, %rax; syscall), the ucontext just above, its fpregs pointing
   above that. */
RT_RARE static void ls_signal_frame(const struct ls_rmaps *r, uintptr_t sp, uintptr_t lo, uintptr_t top)
{
	static const unsigned char restorer[] = {0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05};
	const uintptr_t *p = (const uintptr_t *)((sp + 7) & ~(uintptr_t)7);
	stack_t alt;
	u32 k;
	if (sp_on_altstack(sp, &alt))
		lo = (uintptr_t)alt.ss_sp, top = lo + alt.ss_size;
	for (k = 0; k < 4096 && (uintptr_t)(p + 1) + sizeof(ucontext_t) <= top; k++, p++) {
		const ucontext_t *uc = (const ucontext_t *)(p + 1);
		uintptr_t isp, fp;
		if (!ls_readable(r, *p, sizeof restorer, 1) || memcmp((const void *)*p, restorer, sizeof restorer))
			continue;
		isp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
		fp = (uintptr_t)uc->uc_mcontext.fpregs;
		if (fp > (uintptr_t)uc && fp < top && (isp < lo || isp >= top))
			g_ls.sig_uc = uc;
		return;
	}
}

/* Whether the exiting thread's stack pointer sp lies on its alternate
   signal stack alt, a handler there having called exit (g_ls.sig_uc). */
RT_RARE static int ls_on_altstack(uintptr_t sp, stack_t *alt)
{
	return g_ls.sig_uc && sp_on_altstack(sp, alt);
}

/* The functions that begin an exit, noted at start-up (real_resolve):
   the next object's (the C library's), found by sym, the runtime's own
   _exit and _Exit, and in an executable's copy exit and quick_exit as it
   links them (a static program's; a library's copy must not name them). */
#define LS_NEXIT 8
static uintptr_t g_ls_exit_fns[LS_NEXIT];

static void ls_note_exit_fns(void *(*sym)(const char *))
{
	g_ls_exit_fns[0] = (uintptr_t)sym("exit");
	g_ls_exit_fns[1] = (uintptr_t)sym("quick_exit");
	g_ls_exit_fns[2] = (uintptr_t)sym("_exit");
	g_ls_exit_fns[3] = (uintptr_t)sym("_Exit");
	g_ls_exit_fns[4] = (uintptr_t)&_exit;
	g_ls_exit_fns[5] = (uintptr_t)&_Exit;
#ifndef WEAVE_SHARED_OBJECT
	g_ls_exit_fns[6] = (uintptr_t)&exit;
	g_ls_exit_fns[7] = (uintptr_t)&quick_exit;
#endif
}

/* Where the exiting thread's live stack begins (see the top): maps is
   /proc/self/maps, self_sp the exit writer's frame. */
RT_RARE static uintptr_t ls_exit_sp(struct tmpmem *tm, const char *maps, u64 len, uintptr_t self_sp)
{
#if defined(__x86_64__)
	struct ls_rmaps r = {.n = 0};
	struct vm_map m;
	const char *cur;
	uintptr_t lo = 0, top = 0, sp, fns[LS_NEXIT], f = 0;
	stack_t alt;
	u32 i;
	for (cur = maps; vm_next_map(&cur, maps + len, &m);)
		r.cap++;
	if (!(r.m = tmp_alloc(tm, ((u64)r.cap + 1) * sizeof *r.m)))
		return self_sp;
	for (cur = maps; vm_next_map(&cur, maps + len, &m) && r.n < r.cap;) {
		if (m.perms[0] == 'r')
			r.m[r.n++] = (struct ls_rmap){m.start, m.end, m.perms[2] == 'x'};
		if (self_sp >= m.start && self_sp < m.end)
			lo = m.start, top = m.end;
	}
	for (i = 0; i < LS_NEXIT; i++) /* a non-PIE executable's exit is its PLT entry */
		fns[i] = g_ls_exit_fns[i] ? ls_through_plt(&r, g_ls_exit_fns[i]) : 0;
	sp = top ? ls_call_sp(&r, self_sp, top, fns, LS_NEXIT, 0, &f) : 0;
	if (!sp)
		return self_sp;
	if (f == rt_exit_wrapper() && g_real.exit_full) /* it jumped to the C library's, stack as it was */
		f = ls_through_plt(&r, (uintptr_t)g_real.exit_full);
	ls_saved_regs(&r, sp, self_sp, f);
	ls_signal_frame(&r, sp, lo, top);
	if (ls_on_altstack(sp, &alt))
		/* The alternate stack may lie in a mapping read whole (the
		   program's data, main's frame): its dead part, with the exit
		   path's frames and this scan's, is not a root. */
		ls_exclude(alt.ss_sp, sp - (uintptr_t)alt.ss_sp);
	return sp;
#else
	(void)tm, (void)maps, (void)len;
	return self_sp;
#endif
}

#if defined(__x86_64__)
/* dl_iterate_phdr's callback for ls_dead_sp: the loaded segments of the
   object whose code holds the address r->m[0].lo. */
static int ls_object_segs(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ls_rmaps *r = arg;
	uintptr_t want = r->m[0].lo;
	int i, mine = 0;
	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		mine |= ph->p_type == PT_LOAD && want >= lo && want < lo + ph->p_memsz;
	}
	if (!mine)
		return 0;
	r->n = 0;
	for (i = 0; i < info->dlpi_phnum && r->n < r->cap; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R))
			r->m[r->n++] = (struct ls_rmap){lo, lo + ph->p_memsz, !!(ph->p_flags & PF_X)};
	}
	return 1;
}
#endif

/* Where an ending thread's live stack begins: the hook's frame at hook,
   its return address ret (into the C library's function that calls the
   thread-exit hooks); see the top. hook when not found. */
static uintptr_t ls_dead_sp(uintptr_t hook, uintptr_t ret)
{
#if defined(__x86_64__)
	struct ls_rmap seg[16] = {{ret, ret, 0}};
	struct ls_rmaps r = {seg, 0, 16};
	uintptr_t top = (uintptr_t)pthread_self(), sp, callee;
	if (!dl_iterate_phdr(ls_object_segs, &r) || top <= hook)
		return hook;
	sp = ls_call_sp(&r, hook, top, NULL, 0, ret, &callee);
	return sp ? sp : hook;
#else
	(void)ret;
	return hook;
#endif
}
