//go:build ignore

/* timing.c: function time.

   WEAVE_TIME picks how function time is measured. Calls and calling
   contexts are exact in every mode, and times are kept per node (so per
   calling context and per thread). The profile gets a D record (a node's
   self time in ns) per node with time, and M time_* records; see
   profile/format.go.

   exact    Timestamps at every entry and exit. __weave_enter_timed stores
            the entry tick in the slot's t0; __weave_leave_timed adds the
            ticks since then to the node (its inclusive time). At exit a
            node's self time is its inclusive time minus its children's.
            Wall-clock time: a function that blocks is charged its waiting.
            Clock: the TSC (rdtsc) where it is invariant (/proc/cpuinfo
            flags constant_tsc and nonstop_tsc), else
            clock_gettime(CLOCK_MONOTONIC); WEAVE_TIME_CLOCK=tsc|monotonic
            overrides. TSC ticks are converted to ns by the TSC's rate over
            the whole run, measured against CLOCK_MONOTONIC_RAW.
            Overhead compensation: the runtime times an empty woven
            function against a plain one, through the same entry points
            (the 10th percentile of CAL_ROUNDS short rounds of CAL_CALLS
            calls, at start-up and again at exit, keeping the lower:
            time_measure), and splits the cost per call in two: o_in,
            inside the callee's [entry, exit] window, and o_out, outside it
            (in the caller's window). A node's self time is then its raw
            self time minus o_in per call of it and o_out per call of its
            children, so an empty function shows ~0. A node that would be
            left below zero (the machine was busier during the run than in
            the calibration's best rounds) keeps its raw self time and is
            counted in M time_clamped: compensation never erases time. The
            total subtracted is written as M time_overhead_ns.
            Frames still open are closed at exit (the exiting thread's by
            time_finish; other running threads' by the writer, reading their
            stacks), at thread exit (time_thread_exit) and when a longjmp
            dropped them (time_drop, from __weave_setjmp_return). A root's
            inclusive time is its thread's life from set-up to exit, so its
            self time is the thread's time outside woven functions.
   sampled  (the default) No timestamps on the hot path. Each thread the
            runtime sets up gets a POSIX timer on its own CPU clock whose
            signal goes to the runtime's sampler thread, never to the
            program's (sampler.c); the sampler charges the thread's CPU
            time since its last reading to its cur node. The sum per thread
            is exact (what is left since the last sample is charged by the
            thread itself at thread exit, and for the thread that exits the
            process, at exit: see time_charge); the split among nodes is
            statistical. CPU time: a thread that blocks is charged nothing.
            Without a sampler (M time_sampler none ...) each thread's time
            is all charged at its end.
   off      No timing, no D records.

   Threading: exact mode: a node's time is written by its owner only
   (leave), with relaxed atomic stores. Sampled: by the sampler, and by
   the owner's tail charge once it took the thread over (sampler.c's
   hand-off, T->samp), with atomic adds. The exit writer reads it with
   relaxed loads. T->tls (written under g_lock, read by the sampler with
   acquire loads), t_start and t_end are under g_lock. */

#include "internal.h"

#define CAL_CALLS 1000
#define CAL_ROUNDS 60
#define CAL_PICK (CAL_ROUNDS / 10) /* the 10th percentile */

static u64 g_time_tsc0, g_time_raw0;   /* TSC, CLOCK_MONOTONIC_RAW ns at start */
static double g_time_oin, g_time_oout; /* exact: overhead ticks per call */
static double g_time_cal[2];          /* exact: o_in + o_out measured at start-up, at exit */
static int g_time_done;                /* atomic: time_finish ran */
static u64 g_time_process_cpu;         /* the process's CPU ns at time_finish: its last charge (sampled) */

/* ns per tick of time_tick, from the run so far. */
static double time_ns_per_tick(void)
{
	u64 t1, r1;
	if (!g_time_tsc)
		return 1.0;
	t1 = time_tick();
	r1 = clock_ns(CLOCK_MONOTONIC_RAW);
	if (t1 <= g_time_tsc0 || r1 <= g_time_raw0)
		return 1.0;
	return (double)(r1 - g_time_raw0) / (double)(t1 - g_time_tsc0);
}

/* Whether cpu0's flags in /proc/cpuinfo include constant_tsc and
   nonstop_tsc (the TSC ticks at a fixed rate, also in deep sleep states). */
RT_RARE static int tsc_invariant(void)
{
	char b[16384], *line, *end;
	wsize n = 0;
	ssize_t k;
	int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC), ok = 0;
	if (fd < 0)
		return 0;
	while (n < sizeof b - 1 && (k = read(fd, b + n, sizeof b - 1 - n)) > 0)
		n += (wsize)k;
	close(fd);
	b[n] = 0;
	for (line = b; line && *line; line = end ? end + 1 : NULL) {
		end = strchr(line, '\n');
		if (strncmp(line, "flags", 5) != 0)
			continue;
		if (end)
			*end = 0;
		ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
		break;
	}
	return ok;
}

/* Calibration: an empty woven function against a plain one, timed with a
   scratch tree. time_cal_woven does what weave.h's inline fast paths do in
   exact mode (here they are not inlined: the runtime defines them out of
   line): on x86-64, what the asm ones do, through the stubs that keep the
   registers (enter.c), the way most woven code goes. */
static const struct __weave_fn time_cal_fn = {"<calibration>", "timing.c", 0, 0};
#ifdef X64_STUBS
#define CAL_ENTER __weave_enter_stub
#define CAL_LEAVE __weave_leave_stub
#else
#define CAL_ENTER __weave_enter_timed
#define CAL_LEAVE __weave_leave_timed
#endif

__attribute__((noinline)) static void time_cal_woven(void)
{
	struct __weave_thread *t = &__weave_tls;
	struct __weave_frame f = {__WEAVE_NOT_PUSHED};
	if (__builtin_expect(t->timing, 1))
		f = CAL_ENTER(&time_cal_fn);
	__asm__ volatile("" : : "r"(&f) : "memory");
	if (__builtin_expect((f.v & __WEAVE_TAGS) == 0, 0))
		__weave_leave(&f);
	else if (f.v & __WEAVE_TIMED)
		CAL_LEAVE(f.v);
}

__attribute__((noinline)) static void time_cal_plain(void)
{
	__asm__ volatile("");
}

/* The k-th smallest of v[0..n) (sorts v). */
static double kth_smallest(double *v, int n, int k)
{
	int i, j;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double x = v[j];
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	return v[k];
}

/* Measures o_in and o_out (ticks per call) on the calling thread: the
   10th percentile of CAL_ROUNDS short rounds of CAL_CALLS calls each. A
   busy machine only makes a round slower (a preemption, an interrupt, a
   sibling hyperthread at work), so a low percentile of many short rounds
   is what the calls cost when they run undisturbed; and too high an
   estimate would erase real time from the profile, too low one only
   leaves a little of the runtime's cost in it. Not the minimum, which one
   odd round (a TSC read out of order) could pull down. Called with in_rt
   set, so that woven code in a signal handler meanwhile does not push
   (nor reach the scratch tree's slow path). */
static void time_measure(double *oin, double *oout)
{
	static struct rt_node nodes[2];
	struct __weave_thread *t = &__weave_tls, saved = *t;
	struct __weave_slot slots[4];
	struct rt_node *P = &nodes[0], *C = &nodes[1];
	double in[CAL_ROUNDS], total[CAL_ROUNDS];
	int r, i;

	P->pub.key = &rt_dummy;
	P->pub.cache = &C->pub;
	C->pub.key = &time_cal_fn;
	C->pub.cache = &rt_dummy.pub;
	for (r = 0; r < CAL_ROUNDS; r++) {
		u64 a0, a1, b0, b1;
		memset(slots, 0, sizeof slots);
		slots[0].node = &P->pub;
		C->time = 0;
		t->lim = 0; /* weave.h's x86-64 enter: first */
		fence();
		t->stack = slots;
		t->depth = 0;
		t->cap = 4;
		t->timing = 1;
		fence();
		t->cur = &P->pub;
		a0 = time_tick();
		for (i = 0; i < CAL_CALLS; i++)
			time_cal_woven();
		a1 = time_tick();
		b0 = time_tick();
		for (i = 0; i < CAL_CALLS; i++)
			time_cal_plain();
		b1 = time_tick();
		in[r] = (double)C->time / CAL_CALLS;
		total[r] = ((double)(a1 - a0) - (double)(b1 - b0)) / CAL_CALLS;
	}
	fence();
	*t = saved;
	*oin = kth_smallest(in, CAL_ROUNDS, CAL_PICK);
	*oout = kth_smallest(total, CAL_ROUNDS, CAL_PICK) - *oin;
	if (*oout < 0)
		*oout = 0;
}

/* Sampled mode: charges the rest of the calling thread's CPU time since
   the sampler's last reading, at thread exit or at exit, once it took the
   thread over from the sampler (smp_retire). When the thread has left
   woven code by then (cur is its root), the time goes to the node where
   the last sample found the thread, where it most likely ran (a program's
   work, not main's self time: with the sampler kept from running by a
   busy machine, that tail was 10% of a run); without a sample, to the
   function it entered last from the root (its thread function, or main). */
static void time_charge(struct rt_thread *T)
{
	u64 now = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	struct rt_node *n = (struct rt_node *)(void *)__atomic_load_n(&__weave_tls.cur, __ATOMIC_RELAXED);
	if (n->kind == KIND_R && T->smp_node)
		n = T->smp_node;
	else if (n->kind == KIND_R && n->pub.cache != &rt_dummy.pub)
		n = (struct rt_node *)(void *)n->pub.cache;
	if (now > T->cpu_last && n != &rt_boot)
		__atomic_fetch_add(&n->time, now - T->cpu_last, __ATOMIC_RELAXED);
	if (now > T->cpu_last)
		T->cpu_last = now;
}

static void time_global_init(void)
{
	const char *s = rt_env("WEAVE_TIME");
	rt_orphan_init();
	if (s && *s) {
		if (strcmp(s, "exact") == 0)
			g_time_mode = TIME_EXACT;
		else if (strcmp(s, "off") == 0 || strcmp(s, "0") == 0)
			g_time_mode = TIME_OFF;
		else if (strcmp(s, "sampled") != 0)
			rt_warn("WEAVE_TIME: want exact, sampled or off; using sampled\n");
	}
	if (g_time_mode == TIME_EXACT) {
#if defined(__x86_64__) || defined(__i386__)
		s = rt_env("WEAVE_TIME_CLOCK");
		if (s && *s && strcmp(s, "tsc") != 0 && strcmp(s, "monotonic") != 0) {
			rt_warn("WEAVE_TIME_CLOCK: want tsc or monotonic; using the default\n");
			s = NULL;
		}
		g_time_tsc = s && *s ? strcmp(s, "tsc") == 0 : tsc_invariant();
#endif
		g_time_raw0 = clock_ns(CLOCK_MONOTONIC_RAW);
		g_time_tsc0 = time_tick();
		time_measure(&g_time_oin, &g_time_oout);
		g_time_cal[0] = g_time_oin + g_time_oout;
	} else if (g_time_mode == TIME_SAMPLED) {
		if (rt_sig_wait())
			g_sig_deferred = 1; /* time_start_late */
		else
			smp_start(0);
	}
}

/* The constructor, when the set-up waited for it to start the sampler
   (rt_sig_wait): the sampler, and a timer for the thread if it is set
   up already. */
static void time_start_late(struct rt_local *l)
{
	smp_start(0);
	if (l->thr && l->state == ST_LIVE)
		smp_timer_start(l->thr);
}

/* The end of thread_setup: in_rt set, l->state ST_LIVE. */
static void time_thread_setup(struct rt_thread *T, struct __weave_thread *t)
{
	int e = errno;
	T->timer = -1;
	T->samp = SMP_DEAD; /* no tail charge but in sampled mode */
	pthread_mutex_lock(&g_lock);
	__atomic_store_n(&T->tls, t, __ATOMIC_RELEASE);
	if (g_time_mode == TIME_EXACT)
		T->t_start = time_tick();
	pthread_mutex_unlock(&g_lock);
	if (g_time_mode == TIME_EXACT) {
		t->timing = 1; /* thread_setup sets lim after */
	} else {
		tp_thread_setup(t);
		if (g_time_mode == TIME_SAMPLED)
			smp_timer_start(T);
	}
	errno = e;
}

/* The start of rt_thread_exit: in_rt set. */
static void time_thread_exit(struct rt_thread *T, struct __weave_thread *t)
{
	int e = errno;
	smp_timer_stop(T);
	if (smp_retire(T))
		time_charge(T);
	smp_main_gone();
	pthread_mutex_lock(&g_lock);
	if (g_time_mode == TIME_EXACT) {
		u64 now = time_tick();
		time_close(t, now);
		T->t_end = now > T->t_start ? now : T->t_start + 1;
		t->timing = 0;
	}
	__atomic_store_n(&T->tls, NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&g_lock);
	errno = e;
}

/* rt_fork_child: g_lock held, one thread. The other threads' frames are
   closed as of the fork; the forking thread's open frames, which began in
   the parent, begin again at the fork (exact mode): the child's times are
   its own, as its counts are. The forking thread gets a new timer, and
   the child a sampler, in time_fork_child_late. */
RT_RARE static void time_fork_child(void)
{
	struct rt_thread *T, *me = rt_local.thr;
	u64 now = time_tick();
	int e = errno;
	for (T = g_threads; T; T = T->next) {
		if (T == me && T->tls && g_time_mode == TIME_EXACT) {
			struct __weave_thread *t = T->tls;
			unsigned j;
			for (j = 1; t->stack && j <= t->depth && j < t->cap; j++)
				t->stack[j].t0 = now;
			if (T->t_start)
				T->t_start = now;
		}
		if (T == me || !T->tls)
			continue;
		if (g_time_mode == TIME_EXACT) {
			time_close(T->tls, now);
			T->t_end = now > T->t_start ? now : T->t_start + 1;
		}
		T->tls = NULL;
		T->samp = SMP_DEAD;
	}
	errno = e;
}

/* The end of rt_fork_child, the child's counts zeroed, its tid set: a
   sampler of its own, and a timer for its thread (not inherited). */
RT_RARE static void time_fork_child_late(void)
{
	struct rt_thread *me = rt_local.thr;
	int e = errno;
	rt_orphan_init();
	if (g_time_mode != TIME_SAMPLED)
		return;
	smp_start(1);
	if (me && rt_local.state == ST_LIVE)
		smp_timer_start(me);
	errno = e;
}

/* rt_fini, before the profile is written: in_rt set. */
RT_RARE static __attribute__((noinline)) void time_finish(void)
{
	struct rt_local *l = &rt_local;
	struct rt_thread *T = l->thr;
	if (g_time_mode == TIME_OFF || __atomic_exchange_n(&g_time_done, 1, __ATOMIC_ACQ_REL))
		return;
	if (!g_in_exe)
		smp_stop(); /* this copy may be unmapped (dlclose) */
	if (!T || l->state != ST_LIVE)
		return;
	if (smp_retire(T))
		time_charge(T);
	g_time_process_cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	if (g_time_mode == TIME_EXACT) {
		double oin, oout;
		u64 now = time_tick();
		time_close(&__weave_tls, now);
		pthread_mutex_lock(&g_lock);
		T->t_end = now > T->t_start ? now : T->t_start + 1;
		pthread_mutex_unlock(&g_lock);
		/* Measure again, and keep the lower: the machine may have been
		   busy at start-up (a program's first instants often are: the
		   loader, other processes starting with it). */
		time_measure(&oin, &oout);
		g_time_cal[1] = oin + oout;
		if (oin + oout < g_time_oin + g_time_oout) {
			g_time_oin = oin;
			g_time_oout = oout;
		}
	}
}

RT_RARE static void out_meta(struct out *o, const char *key, const char *s, u64 v)
{
	out_str(o, "M ");
	out_str(o, key);
	if (s) {
		out_ch(o, ' ');
		out_str(o, s);
	} else {
		out_field(o, v);
	}
	out_ch(o, '\n');
	o->records++;
}

RT_RARE static void out_time(struct out *o, u32 id, u64 ns)
{
	out_ch(o, 'D');
	out_field(o, id);
	out_field(o, ns);
	out_ch(o, '\n');
	o->records++;
}

/* Sampled mode's time_* metadata and D records. */
RT_RARE static void time_write_sampled(struct out *o, const u32 *ids)
{
	struct rt_thread *T;
	struct rt_node *n;
	struct sbuf b;
	u32 i, k;
	out_meta(o, "time_mode", "sampled", 0);
	out_meta(o, "time_clock", "thread_cputime", 0);
	out_meta(o, "time_sampler", smp_describe(&b), 0);
	out_meta(o, "time_period_ns", NULL, SMP_PERIOD_NS);
	out_meta(o, "time_samples", NULL, __atomic_load_n(&g_smp.samples, __ATOMIC_RELAXED));
	/* The process's CPU time when this thread's last was charged (before
	   the leak scan and this writer): the report says how much of it no
	   table holds (threads never set up). */
	if (g_time_process_cpu)
		out_meta(o, "time_process_cpu_ns", NULL, g_time_process_cpu);
	for (T = g_threads; T; T = T->next) {
		EACH_NODE(T, i, n, k) {
			u64 v = __atomic_load_n(&n->time, __ATOMIC_RELAXED);
			if (v && n->kind != KIND_A && ids[i] != NO_ID)
				out_time(o, ids[i], v);
		}
	}
}

/* Exact mode: each node's inclusive ticks into incl (index < maxidx), the
   open frames of running threads included, read as they are. */
RT_RARE static void time_inclusive(double *incl, u32 maxidx, u64 now)
{
	struct rt_thread *T;
	struct rt_node *n;
	u32 i, k;
	for (T = g_threads; T; T = T->next) {
		EACH_NODE(T, i, n, k) {
			if (n->kind == KIND_F)
				incl[i] += (double)__atomic_load_n(&n->time, __ATOMIC_RELAXED);
			else if (n->kind == KIND_R && T->t_start)
				incl[i] = (double)((T->t_end ? T->t_end : now) - T->t_start);
		}
		if (T->tls && T != rt_local.thr) {
			struct __weave_thread *t = T->tls;
			unsigned d = __atomic_load_n(&t->depth, __ATOMIC_RELAXED), j;
			struct __weave_slot *st = t->stack;
			for (j = 1; st && j <= d && j < t->cap; j++) {
				struct rt_node *m = (struct rt_node *)(void *)st[j].node;
				u64 t0 = st[j].t0;
				if (m && m->self < maxidx && t0 >= T->t_start && t0 < now)
					incl[m->self] += (double)(now - t0);
			}
		}
	}
}

/* Exact mode: turns self (zeroed, 2 * maxidx) into each node's self
   ticks: its inclusive ticks minus its children's, minus the runtime's
   own cost (o_in per call of it, o_out per call of a child). The
   subtraction is bounded by what was measured: a node it would take below
   zero keeps its raw self time and counts in *clamped. Returns the ticks
   subtracted in all. */
RT_RARE static double time_self(const double *incl, double *self, u32 maxidx, u64 *clamped)
{
	struct rt_thread *T;
	struct rt_node *n;
	double over = 0, *ccalls = self + maxidx;
	u32 i, k;
	for (T = g_threads; T; T = T->next) {
		EACH_NODE(T, i, n, k) {
			if (n->kind == KIND_F && node_parent(n) < maxidx) {
				self[node_parent(n)] += incl[i];
				ccalls[node_parent(n)] += (double)n->pub.calls;
			}
		}
	}
	for (T = g_threads; T; T = T->next) {
		EACH_NODE(T, i, n, k) {
			double raw, sub;
			if (n->kind == KIND_A)
				continue;
			raw = incl[i] - self[i];
			sub = g_time_oout * ccalls[i];
			if (n->kind == KIND_F)
				sub += g_time_oin * (double)n->pub.calls;
			if (raw - sub < 0 && raw > 0) {
				(*clamped)++;
				self[i] = raw;
			} else {
				over += sub;
				self[i] = raw - sub;
			}
		}
	}
	return over;
}

/* Exact mode's time_* metadata and D records. */
RT_RARE static void time_write_exact(struct out *o, const u32 *ids, struct tmpmem *tm)
{
	struct rt_thread *T;
	struct rt_node *n;
	u32 maxidx = __atomic_load_n(&g_node_next, __ATOMIC_RELAXED), i, k;
	double *incl, *self, npt = time_ns_per_tick(), over;
	u64 now = time_tick(), clamped = 0;

	if (maxidx > MAX_NODES)
		maxidx = MAX_NODES;
	out_meta(o, "time_mode", "exact", 0);
	out_meta(o, "time_clock", g_time_tsc ? "tsc" : "monotonic", 0);
	if (g_time_tsc && npt > 0)
		out_meta(o, "time_tsc_hz", NULL, (u64)(1e9 / npt + 0.5));
	out_meta(o, "time_call_overhead_ps", NULL, (u64)((g_time_oin + g_time_oout) * npt * 1000 + 0.5));
	out_meta(o, "time_cal_start_ps", NULL, (u64)(g_time_cal[0] * npt * 1000 + 0.5));
	if (g_time_cal[1] > 0)
		out_meta(o, "time_cal_exit_ps", NULL, (u64)(g_time_cal[1] * npt * 1000 + 0.5));
	incl = tmp_alloc(tm, (wsize)maxidx * 3 * sizeof *incl);
	if (!incl) {
		out_meta(o, "time_error", "out of memory", 0);
		return;
	}
	self = incl + maxidx;
	time_inclusive(incl, maxidx, now);
	over = time_self(incl, self, maxidx, &clamped);
	out_meta(o, "time_overhead_ns", NULL, (u64)(over * npt + 0.5));
	out_meta(o, "time_clamped", NULL, clamped);
	for (T = g_threads; T; T = T->next) {
		EACH_NODE(T, i, n, k) {
			double ns = self[i] * npt + 0.5;
			if (n->kind != KIND_A && ns >= 1 && ids[i] != NO_ID)
				out_time(o, ids[i], (u64)ns);
		}
	}
}

/* Writes the time_* metadata and the D records (write_profile, g_lock
   held, T->snap set). */
RT_RARE static void time_write(struct out *o, const u32 *ids, struct tmpmem *tm)
{
	if (g_time_mode == TIME_SAMPLED)
		time_write_sampled(o, ids);
	else if (g_time_mode == TIME_EXACT)
		time_write_exact(o, ids, tm);
}

/* unshare and setns, interposed (weak, as exec* in exit.c): the kernel
   refuses a CLONE_NEWUSER unshare, and a setns into a user or mount
   namespace, with EINVAL in a process of more than one thread (a mount
   namespace: while another thread shares the filesystem context, as the
   sampler's clone does); a setns into a time namespace with EUSERS.
   When the call fails so and the program has no thread but the caller
   (Threads: 2, the sampler the other), the sampler ends, the call is
   made again, and a new sampler starts, with a new timer for the caller
   (its CPU time until then charged where it is):
   util-linux's unshare -U and nsenter -m, bubblewrap, a fork child that
   makes a user namespace, run as unwoven (TestTimingUnshare). */
#if SMP_RAW && !defined(WEAVE_SHARED_OBJECT)
RT_RARE static int time_alone(long nr, long a, long b)
{
	struct rt_thread *T = rt_local.state == ST_LIVE ? rt_local.thr : NULL;
	struct timespec ts = {0, 100000};
	long r = syscall(nr, a, b);
	int e = errno, n;
	if (r == 0 || (e != EINVAL && e != EUSERS) || __atomic_load_n(&g_smp.state, __ATOMIC_ACQUIRE) != SMP_RUNNING ||
	    rt_status_number("\nThreads:", 10, 0) != 2) {
		errno = e;
		return (int)r;
	}
	if (T) {
		smp_timer_stop(T);
		if (smp_retire(T))
			time_charge(T);
	}
	smp_stop();
	/* Its tid cleared, the thread may still be in the thread group for a
	   while (its exit not done): the kernel would refuse again. */
	for (n = 0; n < 1000 && rt_status_number("\nThreads:", 10, 1) != 1; n++)
		nanosleep(&ts, NULL);
	r = syscall(nr, a, b);
	e = errno;
	if (__atomic_load_n(&g_smp.alive, __ATOMIC_ACQUIRE) == 0) { /* its stack is free */
		smp_start(0);
		if (T)
			smp_timer_start(T);
	}
	errno = e;
	return (int)r;
}

RT_RARE __attribute__((weak)) int unshare(int flags)
{
	return time_alone(SYS_unshare, flags, 0);
}

RT_RARE __attribute__((weak)) int setns(int fd, int nstype)
{
	return time_alone(SYS_setns, fd, nstype);
}
#endif
