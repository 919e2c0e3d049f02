//go:build ignore

/* init.c: the runtime's start-up: the environment, one-time set-up, the
   memory it never frees, and which copy of the runtime is the active one.

   Several copies. The driver links the runtime into every executable and
   shared object it links; the dynamic linker binds all references to
   __weave_* to the first copy in lookup order (see rt_is_active). The
   other copies are inactive: their constructor, destructor and exit paths
   do nothing, and their interposed functions only forward.

   Environment, read once at start-up
   ----------------------------------
   WEAVE_OUT      profile path; "%p" is replaced by the pid. A directory
                  (an existing one, or a path ending in '/', made if
                  absent): each process writes weave-<prog>.<pid>.<random>.prof
                  there, a name of its own (save.c). An existing
                  regular file of that name that this user owns is replaced
                  (atomically); a link, or anything else, is not: the next
                  free name.<n>.prof is taken. Nor is a profile another
                  process of this run wrote (a forked parent or child that
                  wrote first): this one's name gets its pid,
                  name.<pid>.prof (save.c). Set but empty: no profile is
                  written. Unset: weave-<prog>.<pid>.prof in the current
                  directory, never replacing an existing file
                  (weave-<prog>.<pid>.<n>.prof is tried next). Files are
                  created as safefile.c says.
   WEAVE_SUMMARY  the heap summary at exit: "1" always, "0" never; by
                  default when stderr is a terminal, or when there is
                  something to report (definitely or indirectly lost
                  blocks no suppression matched, a profile not written),
                  so that test suites comparing stderr see nothing.
   WEAVE_LOG      the summary goes to this file instead of stderr, always
                  (but WEAVE_SUMMARY=0); "%p" is the pid; created as
                  profiles are, never replacing a file (name.1 ... next).
   WEAVE_LEAKS    number of leak contexts in the summary (default 5).
   WEAVE_STATS    "1": add a line with the runtime's own memory use.
   WEAVE_TIME     "sampled" (default), "exact" or "off": how function time
                  is measured; see timing.c.
   WEAVE_TIME_CLOCK  "tsc" or "monotonic": exact mode's clock (default: tsc
                  where the TSC is invariant, else monotonic).
   WEAVE_HIDDEN   "0": do not record library (hidden) allocations; the
                  interposed functions still forward. Default on, so that
                  the totals are the process's, as valgrind counts them.
   WEAVE_SIGNALS  "0": install no crash signal handlers.
   WEAVE_LEAK_SCAN, WEAVE_LEAK_EXITCODE, WEAVE_SUPPRESSIONS: see
                  leakscan.c and leakreport.c; WEAVE_QUARANTINE: scrub.c.
   WEAVE_CHECKPOINT  seconds between checkpoints: see checkpoint.c.
   WEAVE_REDACT   "argv": the profile's M argv holds the program name only,
                  for runs whose arguments carry secrets.

   Every WEAVE_* variable is read through rt_env, which ignores them all in
   a secure process (AT_SECURE: setuid, setgid, file capabilities), as
   glibc ignores LD_PRELOAD; such a process writes no profile unless the
   runtime was built with -DWEAVE_SECURE_PROFILE (then at the default name,
   never at a path from the environment), and says so once on stderr if a
   WEAVE_* variable was set.
   runtime/config.go lists the configurations the benchmarks run. */

#include "internal.h"

/* The never-freed memory of thread records, first child hashes and heap
   counters: g_lock. */
static struct bump g_arena;

/* Asks for the n bytes at p in small pages (advice MADV_NOHUGEPAGE),
   errno kept (EINVAL without THP in the kernel). The runtime's maps are
   in small pages (but the leak scan's tables for a heap of 256 MiB or
   more, leakmark.c): where the kernel gives huge pages unasked (THP
   "always"), a map of 2 MiB or more that the runtime touches in a few
   places (a side table's slab, a node chunk, a pseudo-stack) took 2 MiB
   of memory each, and a program of 1.4 MB took 12 MB woven. Smaller maps
   too: neighbours with the same flags merge into one mapping that can
   hold a huge page. */
static void rt_small_pages(void *p, wsize n)
{
	int e = errno;
	madvise(p, n, MADV_NOHUGEPAGE);
	errno = e;
}

static void *rt_map(wsize n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	rt_own(p, n);
	return p;
}

/* clock_gettime from the kernel's vDSO, called directly (x86-64): the C
   library's clock_gettime, a few instructions that call the same, lies
   on a page of its code that most programs never run, and the kernel
   maps a file's pages 64 KiB around each fault: with address
   randomisation that window cost a woven program about 20 KiB of RSS.
   The symbol is looked up once in the vDSO's own dynamic symbols (its
   ELF image at AT_SYSINFO_EHDR); without one (valgrind hides it), or
   elsewhere, the C library's. g_vdso_clock: 0 not looked up yet, 1 none,
   else the function. */
static uintptr_t g_vdso_clock;

__attribute__((noinline, cold)) static uintptr_t vdso_clock_find(void)
{
#if defined(__x86_64__) && defined(__LP64__)
	const ElfW(Ehdr) *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	const ElfW(Phdr) *ph;
	const ElfW(Dyn) *d = NULL;
	const ElfW(Sym) *sym = NULL;
	const char *str = NULL;
	const u32 *hash = NULL;
	uintptr_t bias = 0;
	int i, load = 0;
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return 1;
	ph = (const void *)((const char *)eh + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !load++)
			bias = (uintptr_t)eh + ph[i].p_offset - ph[i].p_vaddr;
		else if (ph[i].p_type == PT_DYNAMIC)
			d = (const void *)((const char *)eh + ph[i].p_offset);
	}
	for (; d && load && d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_SYMTAB)
			sym = (const void *)(bias + d->d_un.d_ptr);
		else if (d->d_tag == DT_STRTAB)
			str = (const void *)(bias + d->d_un.d_ptr);
		else if (d->d_tag == DT_HASH)
			hash = (const void *)(bias + d->d_un.d_ptr);
	}
	for (u32 k = 0; sym && str && hash && k < hash[1]; k++)
		if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC && sym[k].st_shndx != SHN_UNDEF &&
		    strcmp(str + sym[k].st_name, "__vdso_clock_gettime") == 0)
			return bias + sym[k].st_value;
#endif
	return 1;
}

/* clock_gettime(id, ts), errno as it sets it (the vDSO's returns minus
   the error, as its system call: glibc sets errno from it). */
static int rt_clock_gettime(clockid_t id, struct timespec *ts)
{
	uintptr_t f = __atomic_load_n(&g_vdso_clock, __ATOMIC_RELAXED);
	int r;
	if (!f) {
		f = vdso_clock_find();
		__atomic_store_n(&g_vdso_clock, f, __ATOMIC_RELAXED);
	}
	if (f == 1)
		return clock_gettime(id, ts);
	r = ((int (*)(clockid_t, struct timespec *))f)(id, ts); /* 0, or minus an errno */
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return r;
}

/* fstat as the system call glibc's fstat makes (newfstatat(fd, "",
   AT_EMPTY_PATH), x86-64), with the runtime's own "": the kernel reads
   the path's first byte, and the C library's "" lies on a page of its
   read-only data that a program which never prints does not touch, 64
   KiB of fault-around with it (threads 1, RSS at exit: -64 KiB at a fixed
   layout). */
static int rt_fstat(int fd, struct stat *st)
{
#if defined(__x86_64__) && defined(__LP64__) && defined(SYS_newfstatat)
	static const char empty[1];
	return (int)syscall(SYS_newfstatat, fd, empty, st, AT_EMPTY_PATH);
#else
	return fstat(fd, st);
#endif
}

/* The runtime's rare work on a program's thread (a heap peak's copy of
   /proc, the control channel opened at the program's second thread, the
   exit writer, a trace flush) makes system calls that are cancellation
   points (open, read, close, write, connect): a pthread_cancel pending on
   the thread was acted on there, before the program's own cancellation
   point, in a malloc that has none in the plain build, its locks held
   (the program's mutex around the malloc, g_vm.lock): the program hung
   (testdata/hardening/cancel.c). rt_nocancel turns cancellation off
   around such work; rt_cancel_restore turns it back as it was. */
static int rt_nocancel(void)
{
	int old = PTHREAD_CANCEL_DISABLE;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return old;
}

static void rt_cancel_restore(int old)
{
	if (old != PTHREAD_CANCEL_DISABLE)
		pthread_setcancelstate(old, &old);
}

static u64 now_ns(void)
{
	struct timespec ts;
	rt_clock_gettime(CLOCK_REALTIME, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

static u64 parse_u64(const char *s, u64 def)
{
	u64 v = 0;
	if (!s || !*s)
		return def;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return def;
		v = v * 10 + (u64)(*s - '0');
		if (v > 1000000)
			return 1000000;
	}
	return v;
}

/* The number after key (a whole line's start, e.g. "\nUmask:") in
   /proc/self/status, read in the given base; dflt if the file or the
   field cannot be read. Plain system calls into a stack buffer: callable
   at exit and from any thread. */
static u64 rt_status_number(const char *key, int base, u64 dflt)
{
	char b[4096];
	const char *u;
	ssize_t n = 0, k;
	u64 v = 0;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC), any = 0;
	if (fd < 0)
		return dflt;
	while (n < (ssize_t)sizeof b - 1 && (k = read(fd, b + n, sizeof b - 1 - (wsize)n)) > 0)
		n += k;
	close(fd);
	b[n] = 0;
	u = strstr(b, key);
	if (!u)
		return dflt;
	for (u += strlen(key); *u == ' ' || *u == '\t'; u++)
		;
	for (; *u >= '0' && *u < '0' + base; u++, any = 1)
		v = v * (u64)base + (u64)(*u - '0');
	return any ? v : dflt;
}

/* atomic: the program called prctl(PR_SET_SECCOMP) (exit.c's prctl):
   from then on the runtime makes no system call malloc would not make
   (side.c's rt_limited; the exit paths: exit.c). */
static int g_filter_set;

/* atomic: the program restricted itself with a landlock ruleset (the
   syscall interposer: sampler.c), which may refuse the runtime's opens of
   /proc/self as a filter would (exit.c's rt_filters tells them apart). */
static int g_landlock_set;

/* Whether the calling thread is under a seccomp filter (or /proc cannot
   tell): a filter may kill the process for a clone, or for any system
   call, instead of refusing it, so the runtime starts no thread there. */
static int rt_under_seccomp(void)
{
	return __atomic_load_n(&g_filter_set, __ATOMIC_ACQUIRE) || rt_status_number("\nSeccomp:", 10, 1) != 0;
}

/* A client request to valgrind (valgrind.h's magic sequence: four
   rotations of %rdi that leave it as it was, then xchg %rbx,%rbx, which
   valgrind recognises); natively the result is 0. x86-64 only. */
static unsigned long rt_valgrind_request(unsigned long req, long arg, long arg2)
{
#if defined(__x86_64__)
	volatile unsigned long args[6] = {req, (unsigned long)arg, (unsigned long)arg2, 0, 0, 0};
	unsigned long r = 0;
	__asm__ volatile("{rolq $3, %%rdi ; rolq $13, %%rdi|rol rdi, 3 ; rol rdi, 13}\n\t"
			 "{rolq $61, %%rdi ; rolq $51, %%rdi|rol rdi, 61 ; rol rdi, 51}\n\t"
			 "{xchgq %%rbx, %%rbx|xchg rbx, rbx}" /* either -masm */
			 : "=d"(r)
			 : "a"(&args[0]), "0"(r)
			 : "cc", "memory");
	return r;
#else
	(void)req, (void)arg, (void)arg2;
	return 0;
#endif
}

/* Whether the program runs under valgrind (RUNNING_ON_VALGRIND). */
static int rt_on_valgrind(void) { return rt_valgrind_request(0x1001, 0, 0) != 0; }

/* rt_env is getenv for the runtime's own variables: NULL in a secure
   process (see g_secure), as glibc ignores LD_PRELOAD there. Every WEAVE_*
   variable must be read through it. */
static const char *rt_env(const char *name)
{
	return g_secure ? NULL : getenv(name);
}

/* In a secure process, says once on stderr that WEAVE_* variables were
   set and are ignored. */
static void secure_notice(void)
{
	static const char msg[] = "secure execution (setuid, setgid or capabilities): "
				  "WEAVE_* variables ignored"
#ifndef WEAVE_SECURE_PROFILE
				  ", no profile written"
#endif
				  "\n";
	for (char **e = environ; e && *e; e++) {
		if (strncmp(*e, "WEAVE_", 6) == 0) {
			rt_warn(msg);
			return;
		}
	}
}

/* Keeps the path s in slot k (PATH_*), cut to 4095 bytes; returns where:
   its small slot (internal.h), among the small statics, whose pages the
   runtime writes anyway, unless it is longer. Each path had a 4 KiB array
   of its own, whose page it alone made resident: the start directory's in
   every run, WEAVE_OUT's wherever it is set (4-8 KiB). */
static char *path_keep(int k, const char *s)
{
	wsize n = strlen(s);
	char *dst = n < PATH_SMALL ? g_path_small[k] : g_path_large[k];
	if (n >= sizeof g_path_large[k])
		n = sizeof g_path_large[k] - 1;
	memcpy(dst, s, n);
	dst[n] = 0;
	return dst;
}

/* Whether the signal work of the set-up (the crash handlers, the sampler,
   which asks which signal is free) waits for the constructor: the set-up
   runs in a sanitizer's start-up, before its sigaction interceptor is
   ready. clang's static UBSan runtime calls malloc from .preinit_array
   (its symbolizer's dlsym): sigaction then printed "Warning:
   REAL(sigaction_symname) == nullptr" twice and failed, leaving no
   sampler and no crash handlers. Only with a sanitizer: another
   library's constructor may start threads before ours runs, which would
   then get no timer. */
static int g_ctor_ran, g_sig_deferred;
extern void __sanitizer_print_stack_trace(void) __attribute__((weak));
static int rt_sig_wait(void)
{
	return !__atomic_load_n(&g_ctor_ran, __ATOMIC_ACQUIRE) && &__sanitizer_print_stack_trace != 0;
}

/* Reads the environment (see the top comment), once it is there: the
   first allocation may come before the C library set environ up, then
   the constructor reads it. */
static void rt_config(void)
{
	const char *s;
	if (__atomic_load_n(&g_cfg_loaded, __ATOMIC_ACQUIRE) || !environ)
		return;
	g_secure = getauxval(AT_SECURE) != 0;
	if (!g_stderr_id)
		g_stderr_id = fd_ident(2);
	if (g_secure) {
		secure_notice();
#ifndef WEAVE_SECURE_PROFILE
		g_cfg_out_set = 1; /* set but empty: no profile */
		g_cfg_out[0] = 0;
#endif
	}
	s = rt_env("WEAVE_OUT");
	if (s)
		g_cfg_out = path_keep(PATH_OUT, s), g_cfg_out_set = 1;
	s = rt_env("WEAVE_SUMMARY");
	g_cfg_summary = !s ? -1 : strcmp(s, "0") == 0 ? 0 : strcmp(s, "1") == 0 ? 1 : -1;
	if (s && *s && g_cfg_summary < 0)
		rt_warn("WEAVE_SUMMARY: want 1 (always) or 0 (never); printing it when there is something to report\n");
	s = rt_env("WEAVE_LOG");
	if (s && *s)
		g_cfg_log = path_keep(PATH_LOG, s), g_cfg_log_set = 1;
	g_cfg_leaks = (u32)parse_u64(rt_env("WEAVE_LEAKS"), 1u << 31);
	if (g_cfg_leaks == 1u << 31) {
		if ((s = rt_env("WEAVE_LEAKS")) && *s)
			rt_warn("WEAVE_LEAKS: want a number; using 5\n");
		g_cfg_leaks = 5;
	}
	if (g_cfg_leaks > 1000)
		g_cfg_leaks = 1000;
	s = rt_env("WEAVE_STATS");
	g_cfg_stats = s && strcmp(s, "1") == 0;
	s = rt_env("WEAVE_HIDDEN");
	g_cfg_hidden = !(s && strcmp(s, "0") == 0);
	s = rt_env("WEAVE_SIGNALS");
	g_cfg_signals = !(s && strcmp(s, "0") == 0);
	s = rt_env("WEAVE_REDACT");
	g_cfg_redact_argv = s && strstr(s, "argv") != NULL;
	ls_config();
	__atomic_store_n(&g_cfg_loaded, 1, __ATOMIC_RELEASE);
	if (g_cfg_signals && rt_is_active() && !rt_sig_wait())
		rt_crash_install();
}

/* The directory the process started in (its absolute path, "" if it had
   none) and its identity. A program that changes directory (a daemon's
   chdir("/"), a test working in a directory of its own) still leaves its
   profile and log where it was run, under the name its summary gives
   (out.c: sb_start_dir). */
static char *g_start_dir = g_path_small[PATH_START];
static u64 g_start_dir_dev, g_start_dir_ino;

/* Notes the directory the process starts in (rt_global_init): in its
   small slot (path_keep) unless longer. */
static void start_dir_note(void)
{
	struct stat st;
	int e = errno;
	char *d = g_path_small[PATH_START];
	if (syscall(SYS_getcwd, d, (wsize)PATH_SMALL) <= 0 && errno == ERANGE)
		d = g_path_large[PATH_START], d[0] = 0, syscall(SYS_getcwd, d, sizeof g_path_large[PATH_START]);
	if (d[0] != '/' || stat(".", &st) != 0)
		d[0] = 0;
	else
		g_start_dir_dev = (u64)st.st_dev, g_start_dir_ino = (u64)st.st_ino;
	g_start_dir = d;
	errno = e;
}

/* glibc's first fork-handler registration in a process (__register_atfork,
   from pthread_atfork in rt_global_init) reads a 16-byte constant of the C
   library's read-only data, and the kernel maps a file's cached pages 64
   KiB around each fault: a window that a program with no thread (whose
   pthread_create reads a neighbour of it) and no fork handler of its own
   never has (server 1: 64 KiB of RSS at exit at a fixed layout). The
   pages that call made present are clean pages of the file (pagemap, read
   before and after it: present, and a file's): they are dropped from the
   page tables again (MADV_DONTNEED), and whatever the program reads later
   faults back in as it would have. The C library is the object holding
   __register_atfork, its read-only data its read-only segments past the
   first (headers and symbols) of up to RO_PAGES pages. */
#define RO_PAGES 256u
extern int __register_atfork(void (*)(void), void (*)(void), void (*)(void), void *) __attribute__((weak));
extern void *__dso_handle __attribute__((weak, visibility("hidden")));

struct ro_seg {
	uintptr_t a; /* page-aligned, 0: none */
	u32 n;       /* pages */
	u64 had[RO_PAGES / 64]; /* present before */
};

static int ro_find(struct dl_phdr_info *i, size_t sz, void *arg)
{
	struct ro_seg *s = arg;
	uintptr_t f = (uintptr_t)&__register_atfork;
	int k, mine = 0, m = 0;
	(void)sz;
	for (k = 0; k < i->dlpi_phnum; k++)
		mine |= i->dlpi_phdr[k].p_type == PT_LOAD && (i->dlpi_phdr[k].p_flags & PF_X) &&
			f - (i->dlpi_addr + i->dlpi_phdr[k].p_vaddr) < i->dlpi_phdr[k].p_memsz;
	for (k = 0; mine && k < i->dlpi_phnum && m < 2; k++) {
		const ElfW(Phdr) *ph = &i->dlpi_phdr[k];
		uintptr_t a = (i->dlpi_addr + ph->p_vaddr + 4095) & ~(uintptr_t)4095;
		uintptr_t e = (i->dlpi_addr + ph->p_vaddr + ph->p_filesz) & ~(uintptr_t)4095;
		if (ph->p_type == PT_LOAD && ph->p_flags == PF_R && ph->p_offset && e > a && e - a <= RO_PAGES * 4096ull)
			s[m].a = a, s[m++].n = (u32)((e - a) / 4096);
	}
	return mine;
}

/* For each page of s: bit set if present and a file's (mark), or drops
   those present now that were not at the mark. */
static void ro_pages(int pm, struct ro_seg *s, int drop)
{
	u64 ent[RO_PAGES];
	u32 j, run = 0;
	if (!s->a || pread(pm, ent, s->n * sizeof *ent, (off_t)(s->a / 4096 * sizeof *ent)) != (ssize_t)(s->n * sizeof *ent))
		return;
	for (j = 0; j <= s->n; j++) {
		int file = j < s->n && (ent[j] >> 63 & 1) && (ent[j] >> 61 & 1);
		if (!drop) {
			if (file)
				s->had[j / 64] |= 1ull << (j % 64);
			continue;
		}
		if (file && !(s->had[j / 64] >> (j % 64) & 1)) {
			run++;
			continue;
		}
		if (run)
			madvise((void *)(s->a + (uintptr_t)(j - run) * 4096), (wsize)run * 4096, MADV_DONTNEED);
		run = 0;
	}
}

/* pthread_atfork(prepare, parent, child), its pages of the C library's
   read-only data dropped again (see above). Made as glibc's
   pthread_atfork makes it, which is linked from libc_nonshared.a into the
   executable's last page of code, where nothing else runs before the exit
   (RT_RARE). */
static void rt_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
	struct ro_seg s[2] = {{0}};
	int pm = -1, k, e = errno;
	if (&__register_atfork && dl_iterate_phdr(ro_find, s) && s[0].a)
		pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	for (k = 0; pm >= 0 && k < 2; k++)
		ro_pages(pm, &s[k], 0);
	if (&__register_atfork)
		__register_atfork(prepare, parent, child, &__dso_handle ? __dso_handle : NULL);
	else
		pthread_atfork(prepare, parent, child);
	for (k = 0; pm >= 0 && k < 2; k++)
		ro_pages(pm, &s[k], 1);
	if (pm >= 0)
		close(pm);
	errno = e;
}

static void rt_global_init(void)
{
	g_start_ns = g_run_start_ns = now_ns();
	g_pid = (int)getpid();
	start_dir_note();
	g_key_ok = pthread_key_create(&g_key, rt_thread_exit) == 0;
	rt_sandbox_note();
	rt_atfork(rt_fork_prepare, rt_fork_parent, rt_fork_child);
	rt_config();
	ctl_reserve(); /* before time_global_init's thread */
	time_global_init();
	tp_init();
	vm_init();
}

/* Takes n bytes (n <= chunk - sizeof(struct bump_tail)) from b, mapping a
   new chunk of memory when the current one is short; its rest is then
   left unused. Chunks are in small pages (rt_small_pages): the side table's
   leaves, carved from them, are touched only where blocks are. The first
   chunk's record is b's own, not the chunk's last bytes: a program that
   uses a few of its bytes writes its first page only (the side table's
   8 MiB slab and the arena's 64 KiB chunk: 8 KiB of every program). */
static void *bump_take(struct bump *b, wsize n, wsize chunk)
{
	void *r;
	if (n > b->left) {
		struct bump_tail *t;
		char *p;
		if (n > chunk - sizeof *t)
			return NULL;
		p = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		rt_own(p, chunk);
		t = b->last ? (struct bump_tail *)(p + chunk) - 1 : &b->first;
		t->prev = b->last;
		t->map = p;
		t->n = chunk;
		b->last = t;
		b->next = p;
		b->left = t == &b->first ? chunk : chunk - sizeof *t;
	}
	r = b->next;
	b->next += n;
	b->left -= n;
	return r;
}

/* Calls f(map, size) for every map b made. */
static void bump_each(const struct bump *b, void (*f)(const void *p, u64 n))
{
	const struct bump_tail *t;
	for (t = b->last; t; t = t->prev)
		f(t->map, (u64)t->n);
}

/* Memory that is never freed (thread records, first child hashes, heap
   counters). g_lock held. Zeroed (fresh mmap). */
static void *arena_alloc(wsize n)
{
	return bump_take(&g_arena, (n + 15) & ~(wsize)15, ARENA_CHUNK);
}

/* arena_alloc on cache lines of its own (64-byte aligned, whole lines),
   for what one thread writes while others read or write their own next
   to it (thread records, heap counters): no false sharing. g_lock held. */
static void *arena_line(wsize n)
{
	wsize pad = (wsize)(-(uintptr_t)g_arena.next & 63);
	if (pad > g_arena.left)
		g_arena.left = 0; /* a fresh map, page-aligned */
	else if (pad) { /* next may be null: null + 0 is undefined */
		g_arena.next += pad;
		g_arena.left -= pad;
	}
	return bump_take(&g_arena, (n + 63) & ~(wsize)63, ARENA_CHUNK);
}

/* weave links the runtime into every executable and shared object, so a
   process may hold several copies. The dynamic linker binds every reference
   to an exported __weave_* symbol, from all of them, to the first definition
   in lookup order: that copy is active; the others' constructor and
   destructor do nothing. Read through the GOT (-fPIC), __weave_rt_self is
   the active copy's and holds the address of its rt_self_mark. */
static const char rt_self_mark;
const void *const volatile __weave_rt_self = &rt_self_mark;
static int rt_is_active(void) { return __weave_rt_self == (const void *)&rt_self_mark; }

/* Whether this copy lies in the executable: the first object
   dl_iterate_phdr reports is the program. Notes the program's range. */
static int in_exe_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t a = (uintptr_t)&g_lock, lo = ~(uintptr_t)0, hi = 0;
	int i;
	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
		if (ph->p_type != PT_LOAD)
			continue;
		lo = s < lo ? s : lo;
		hi = e > hi ? e : hi;
		if (a >= s && a < e)
			*(int *)data = 1;
	}
	if (lo < hi) {
		g_program_lo = lo;
		g_program_hi = hi;
	}
	return 1; /* the first object only */
}

/* The program's argv, as the constructor got it: dladdr's name for the
   executable is its argv[0] (hidden.c, rt_object_name). */
static char **g_argv;

/* An inactive copy touches none of its thread-locals: in a library
   loaded by dlopen, the first touch has the dynamic linker malloc the
   library's TLS block (__tls_get_addr), a block the program would count
   (gawk -l filefuncs: one more allocation, 152 bytes, for each woven
   extension). */
__attribute__((constructor(101))) static void rt_init(int argc, char **argv)
{
	struct rt_local *l;
	(void)argc;
	g_argv = argv; /* glibc passes it; read only where _dl_find_object is (glibc's) */
	if (!rt_is_active())
		return;
	l = &rt_local;
	if (l->in_rt)
		return;
	rt_enter(l);
	__atomic_store_n(&g_ctor_ran, 1, __ATOMIC_RELEASE);
	pthread_once(&g_once, rt_global_init);
	rt_config();
	if (g_sig_deferred) { /* rt_sig_wait */
		g_sig_deferred = 0;
		time_start_late(l);
	}
	if (g_cfg_loaded && g_cfg_signals)
		rt_crash_install(); /* once; unless rt_config did */
	if (l->state == ST_NEW)
		thread_setup(l); /* the main thread is normally T 0 */
	dl_iterate_phdr(in_exe_cb, &g_in_exe);
	rt_quick_exit_register();
	checkpoint_start();
	ctl_start();
	rt_exit(l);
}


/* Never called: a woven x86-64 object calls it from the start of its
   .text, where no function starts (weave/weave.go, needsRuntime), so that
   linked without the runtime (a C++ program linked by $(CXX) rather than
   weave c++) its linker's first error is an undefined reference to this
   name, which says how to fix the link. */
void __weave_runtime_not_linked__link_with_weave_cc_or_weave_cxx(void)
{
}
