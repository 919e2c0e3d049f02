//go:build ignore

/* ownstack.c: the runtime's deep work on a stack of its own. The exit
   writer (the leak scan, the profile, the summary: over 20 KiB of frames)
   and the control channel's opening (12 KiB) run in whatever thread of
   the program gets there: one whose stack is 16 KiB (PTHREAD_STACK_MIN),
   or a signal handler on an 8 KiB sigaltstack that calls exit or _exit,
   or the crash handler on such a stack. There they overflowed it: the
   program died of SIGSEGV instead of its own status, with no profile.
   rt_on_stack runs such work on a map of its own (256 KiB, as the control
   thread's stack, with a guard page below), listed as the runtime's (the
   leak scan does not read it), unmapped after. The caller's callee-saved
   registers are pushed on its own stack first and *sp is the stack
   pointer below them, where the leak scan starts reading the thread's
   stack (leakstack.c), as it read from the writer's frame before.
   x86-64 only, and not under a sanitizer (which tracks the stacks it
   knows); elsewhere rt_on_stack returns 0 and the caller runs the work on
   its own stack, as before. */

#include "internal.h"

#define OWN_STACK (256u << 10)
#define OWN_GUARD 4096u

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define OWN_SWITCH 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define OWN_SWITCH 0
#endif
#endif
#if !defined(OWN_SWITCH) && defined(__x86_64__) && !defined(__ILP32__)
#define OWN_SWITCH 1
/* __weave_stack_call(arg, fn, top, sp): pushes rbp, rbx, r12-r15, stores
   the stack pointer in *sp, calls fn(arg) with the stack pointer at top,
   and returns on the first stack. The instructions as bytes, so that the
   text assembles under -masm=intel too; the CFI (DWARF register numbers)
   lets a debugger unwind from fn to the caller. */
void __weave_stack_call(void *arg, void (*fn)(void *), void *top, uintptr_t *sp)
	__attribute__((visibility("hidden")));
__asm__(".text\n"
	".globl __weave_stack_call\n"
	".hidden __weave_stack_call\n"
	".type __weave_stack_call, @function\n"
	"__weave_stack_call:\n"
	"\t.cfi_startproc\n"
	"\t.byte 0xf3, 0x0f, 0x1e, 0xfa\n" /* endbr64 */
	"\t.byte 0x55\n"                   /* push %rbp */
	"\t.cfi_adjust_cfa_offset 8\n"
	"\t.cfi_rel_offset 6, 0\n"
	"\t.byte 0x53\n" /* push %rbx */
	"\t.cfi_adjust_cfa_offset 8\n"
	"\t.cfi_rel_offset 3, 0\n"
	"\t.byte 0x41, 0x54\n" /* push %r12 */
	"\t.cfi_adjust_cfa_offset 8\n"
	"\t.cfi_rel_offset 12, 0\n"
	"\t.byte 0x41, 0x55\n" /* push %r13 */
	"\t.cfi_adjust_cfa_offset 8\n"
	"\t.cfi_rel_offset 13, 0\n"
	"\t.byte 0x41, 0x56\n" /* push %r14 */
	"\t.cfi_adjust_cfa_offset 8\n"
	"\t.cfi_rel_offset 14, 0\n"
	"\t.byte 0x41, 0x57\n" /* push %r15 */
	"\t.cfi_adjust_cfa_offset 8\n"
	"\t.cfi_rel_offset 15, 0\n"
	"\t.byte 0x48, 0x89, 0x21\n" /* mov %rsp, (%rcx) */
	"\t.byte 0x48, 0x89, 0xe3\n" /* mov %rsp, %rbx */
	"\t.cfi_def_cfa_register 3\n"
	"\t.byte 0x48, 0x89, 0xd4\n" /* mov %rdx, %rsp */
	"\t.byte 0xff, 0xd6\n"       /* call *%rsi */
	"\t.byte 0x48, 0x89, 0xdc\n" /* mov %rbx, %rsp */
	"\t.cfi_def_cfa_register 7\n"
	"\t.byte 0x41, 0x5f\n" /* pop %r15 */
	"\t.cfi_adjust_cfa_offset -8\n"
	"\t.cfi_restore 15\n"
	"\t.byte 0x41, 0x5e\n" /* pop %r14 */
	"\t.cfi_adjust_cfa_offset -8\n"
	"\t.cfi_restore 14\n"
	"\t.byte 0x41, 0x5d\n" /* pop %r13 */
	"\t.cfi_adjust_cfa_offset -8\n"
	"\t.cfi_restore 13\n"
	"\t.byte 0x41, 0x5c\n" /* pop %r12 */
	"\t.cfi_adjust_cfa_offset -8\n"
	"\t.cfi_restore 12\n"
	"\t.byte 0x5b\n" /* pop %rbx */
	"\t.cfi_adjust_cfa_offset -8\n"
	"\t.cfi_restore 3\n"
	"\t.byte 0x5d\n" /* pop %rbp */
	"\t.cfi_adjust_cfa_offset -8\n"
	"\t.cfi_restore 6\n"
	"\t.byte 0xc3\n" /* ret */
	"\t.cfi_endproc\n"
	".size __weave_stack_call, .-__weave_stack_call\n");
#endif
#ifndef OWN_SWITCH
#define OWN_SWITCH 0
#endif

/* Runs fn(arg) on a stack of the runtime's and returns 1, *sp set (see
   the top); 0, having run nothing, when it cannot (no map, or not built
   to switch). errno as fn left it. */
static int rt_on_stack(void (*fn)(void *), void *arg, uintptr_t *sp)
{
#if OWN_SWITCH
	int e = errno;
	char *p = mmap(NULL, OWN_GUARD + OWN_STACK, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (p == MAP_FAILED) {
		errno = e;
		return 0;
	}
	/* An overflow faults on this page, not in the map below. Read-only,
	   not inaccessible: the exit's memory map would otherwise count the
	   runtime's stack as one of the program's thread stacks (vmmap.go's
	   threadStacks: an inaccessible page under a writable map). */
	mprotect(p, OWN_GUARD, PROT_READ);
	rt_own(p, OWN_GUARD + OWN_STACK);
	/* Under valgrind, a stack it knows (VALGRIND_STACK_REGISTER, then
	   DEREGISTER; natively nothing): a jump of the stack pointer to an
	   unknown map is a 'client switching stacks?' warning in memcheck's
	   output, which the plain build's has not. */
	unsigned long vg = rt_valgrind_request(0x1501, (long)(p + OWN_GUARD), (long)(p + OWN_GUARD + OWN_STACK - 1));
	errno = e;
	__weave_stack_call(arg, fn, p + OWN_GUARD + OWN_STACK, sp);
	e = errno;
	rt_valgrind_request(0x1502, (long)vg, 0);
	rt_unmap(p, OWN_GUARD + OWN_STACK);
	errno = e;
	return 1;
#else
	(void)fn, (void)arg, (void)sp;
	return 0;
#endif
}
