/* SPDX-License-Identifier: MIT */
/*
 * docs/protection.md, "Escapes through the runtime's own work": the parts a unit test drives in one process:
 *   - the state sits between read-only guard pages, so closing a window
 *     changes whole mappings and works with the process at its map-count
 *     limit while a thread takes every slot that frees up; fi_rt_die;
 *   - a module pointer written into the table from outside (a writer
 *     racing the write windows) is never taken for a module: only copies
 *     inside the arena are;
 *   - the scans' record (fi_rt()->seen) is read-only, its ranges are what
 *     fi_rt_rewritten_at answers, and dropping an entry withdraws its
 *     module;
 *   - JIT regions and modules have separate limits;
 *   - a racing writer lands nothing in the state during the windows
 *     (mode, key, code pointers, counts, the arena's table): the state
 *     is never writable, it is written through the kernel (rtwrite.c),
 *     while the same writer's control store to a writable word lands.
 * "Writable" is asked with process_vm_writev, which fails with EFAULT on
 * a page that is not writable instead of faulting: the write primitive
 * of those attacks.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "fineibt.h"
#include "runtime.h"

#define PAGE	4096

/* Write @len bytes of @src to @dst of this process; true if it landed. */
static bool vm_write(void *dst, const void *src, size_t len)
{
	struct iovec l = { (void *)src, len }, r = { dst, len };

	return process_vm_writev(getpid(), &l, 1, &r, 1, 0) == (ssize_t)len;
}

/* Is the byte at @p writable (rewritten with its own value)? */
static bool writable(const void *p)
{
	uint8_t b = *(const volatile uint8_t *)p;

	return vm_write((void *)p, &b, 1);
}

/* Run @fn in a child; its exit status, or -1 if it did not exit. */
static int in_child(int (*fn)(void))
{
	struct rlimit no_core = { 0, 0 };
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		setrlimit(RLIMIT_CORE, &no_core);
		_exit(fn());
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static int read_byte(void *p)
{
	return *(volatile uint8_t *)p;
}

static void *guard_addr;

static int touch_guard(void)
{
	read_byte(guard_addr);
	return 0;
}

/* Fake modules: distinct text ranges (never executed, never read). */
static uint8_t (*fake_text)[16];

static void fake_module(struct fi_module *m, size_t i, const char *path)
{
	if (!fake_text)
		fake_text = fi_test_text(600 * 16);
	*m = (struct fi_module){ 0 };
	m->img.path = path;
	m->img.live = true;
	m->text_lo = (uint64_t)(uintptr_t)fake_text[i];
	m->text_hi = m->text_lo + sizeof(fake_text[i]);
	m->cfg = (struct fineibt_config){ FINEIBT_MODE_FINEIBT, 0 };
}

/* ------------------------------------------------------ guards and die */

static void test_guards(void)
{
	size_t size;
	uint8_t *st = fi_rt_storage(&size);
	struct fi_module m;

	/* One window, so the guards are in place. */
	fake_module(&m, 599, "guard-probe");
	fi_rt_add_module(&m);
	fi_rt_del_module(&m);
	/*
	 * Read-only, not PROT_NONE: whatever scans a module's writable
	 * segments (LeakSanitizer at exit) reads them (rtwrite.c).
	 */
	CHECK("guard: the page below the state is not writable",
	      !writable(st - 1));
	CHECK("guard: the page above the state (the owner token) is not writable",
	      !writable(st + size));
	CHECK("guard: the page above the token is not writable",
	      !writable(st + size + PAGE));
	guard_addr = st - 1;
	CHECK("guard: the page below the state is readable",
	      in_child(touch_guard) == 0);
	guard_addr = st + size;
	CHECK("guard: the owner token is readable", in_child(touch_guard) == 0);
	guard_addr = st + size + PAGE;
	CHECK("guard: the page above the token is readable",
	      in_child(touch_guard) == 0);
	CHECK("guard: the state is not writable", !writable(st));
}

static int die_child(void)
{
	int null = open("/dev/null", O_WRONLY);

	dup2(null, 2);
	fi_rt_die("test");
	return 0;
}

static void test_die(void)
{
	CHECK("die: fi_rt_die exits with FI_RT_DIE_STATUS",
	      in_child(die_child) == FI_RT_DIE_STATUS);
}

/* ------------------------------------------------- map count exhaustion */

static volatile int eat_stop;

/* Takes every mapping slot that frees up, as a benign busy thread may. */
static void *eater(void *arg)
{
	unsigned long n = 0;

	(void)arg;
	while (!eat_stop) {
		if (mmap(NULL, PAGE, (n & 1) ? PROT_READ : PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) != MAP_FAILED)
			n++;
		else
			sched_yield();
	}
	return NULL;
}

static struct fi_module fill_mods[64];

/*
 * Fill the map count (alternating protections: no two neighbours merge),
 * then open and close 200 windows with the eater running. Exit status:
 * the number of failed checks, +100 if the exhaustion was not real.
 */
static int mapfull_child(void)
{
	uint8_t *ctl = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	const struct fi_module *c;
	unsigned long n = 0;
	pthread_t t;
	int bad = 0;

	/* Room in the arena before the slots run out. */
	fake_module(&fill_mods[0], 500, "mapfull-0");
	if (ctl == MAP_FAILED || fi_rt_add_module(&fill_mods[0]))
		return 99;
	if (pthread_create(&t, NULL, eater, NULL))
		return 98;
	while (mmap(NULL, PAGE, (n & 1) ? PROT_READ : PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) != MAP_FAILED)
		n++;
	for (int i = 0; i < 200; i++) {
		struct fi_module *m = &fill_mods[1 + i % 63];

		fake_module(m, 501 + i % 63, "mapfull");
		if (fi_rt_add_module(m) == 0)
			fi_rt_del_module(m);
	}
	eat_stop = 1;
	pthread_join(t, NULL);
	/* The control: a split of a mapping fails now. */
	if (mprotect(ctl + PAGE, PAGE, PROT_READ) == 0 || errno != ENOMEM)
		bad += 100;
	bad += writable(fi_rt_storage(NULL));
	c = fi_rt_module_at(fill_mods[0].text_lo);
	bad += !c || writable(c);
	return bad;
}

static __attribute__((unused)) void test_mapfull(void)
{
	int st = in_child(mapfull_child);

	CHECK("mapfull: the map count was really exhausted", st >= 0 && st < 100);
	CHECK("mapfull: windows close at the map-count limit (state and arena read-only)",
	      st == 0);
}

/* ------------------------------------------------ a writer in the window */

static volatile int race_stop;
static struct fi_module *volatile *race_slot;
static struct fi_module *race_forged;
static unsigned long race_landed;

static void *race_writer(void *arg)
{
	(void)arg;
	while (!race_stop) {
		if (vm_write((void *)race_slot, &race_forged, sizeof(race_forged)))
			race_landed++;
	}
	return NULL;
}

static struct fi_module victim, dummy;

static void test_race_pointer(void)
{
	const struct fi_runtime *rt = fi_rt();
	const struct fi_module *legit, *seen;
	bool forged_seen = false;
	pthread_t t;

	fake_module(&victim, 400, "victim");
	fake_module(&dummy, 401, "dummy");
	if (!CHECK("race: victim registered", fi_rt_add_module(&victim) == 0))
		return;
	legit = fi_rt_module_at(victim.text_lo);
	for (size_t i = 0; i < rt->nmods; i++) {
		if (rt->mods[i] == legit)
			race_slot = (struct fi_module *volatile *)&rt->mods[i];
	}
	/* The attacker's module: the victim's range, warn. */
	race_forged = malloc(sizeof(*race_forged));
	*race_forged = *legit;
	race_forged->cfg.flags |= FINEIBT_F_WARN;
	pthread_create(&t, NULL, race_writer, NULL);
	for (int i = 0; i < 1000; i++) {
		memset(&dummy.rehash_key, 0, sizeof(dummy.rehash_key));
		if (fi_rt_add_module(&dummy) == 0)
			fi_rt_del_module(&dummy);
		seen = fi_rt_module_at(victim.text_lo);
		forged_seen |= seen == race_forged;
	}
	race_stop = 1;
	pthread_join(t, NULL);
	printf("note: race: %lu writes landed in the state's windows\n", race_landed);
	seen = fi_rt_module_at(victim.text_lo);
	CHECK("race: a module pointer written from outside is never a module",
	      !forged_seen && seen != race_forged && (!seen || seen == legit));
	CHECK("race: no racing write landed in the module table (1000 windows)",
	      race_landed == 0);
	CHECK("race: the state is read-only after the windows",
	      !writable(fi_rt_storage(NULL)));
}

/* ------------------------------------------------------- nothing opens */

/*
 * After the seal, the windows a running program opens (here module
 * registrations, as a dlopen makes) open nothing: the mode, the key and
 * the code pointers on page 0 (libc's dlopen, sigaction; the program's
 * SIGILL handler), and the counts, the veneer base and the arena's table
 * on page 1, which every window used to open, take no racing write. The
 * control: the same writer lands its stores in a writable word.
 */
static volatile int seal_stop;
static unsigned long seal_sealed, seal_hot, seal_ctl;
static struct fineibt_config seal_forged;
static void *seal_ptr;
static volatile long seal_word;

static void *seal_writer(void *arg)
{
	const struct fi_runtime *rt = fi_rt();
	size_t forged_n = 999;
	long one = 1;

	(void)arg;
	while (!seal_stop) {
		seal_sealed += vm_write((void *)&rt->cfg, &seal_forged,
					sizeof(seal_forged));
		seal_sealed += vm_write((void *)&rt->calls.real_dlopen, &seal_ptr,
					sizeof(seal_ptr));
		seal_hot += vm_write((void *)&rt->nmods, &forged_n, sizeof(forged_n));
		seal_hot += vm_write((void *)&rt->arena.nchunks, &forged_n,
				     sizeof(forged_n));
		seal_hot += vm_write((void *)&rt->foreign.fven_base, &seal_ptr,
				     sizeof(seal_ptr));
		seal_ctl += vm_write((void *)&seal_word, &one, sizeof(one));
	}
	return NULL;
}

static int sealed_child(void)
{
	const struct fi_runtime *rt = fi_rt();
	struct fineibt_config cfg = { FINEIBT_MODE_FINEIBT, FINEIBT_F_PARANOID };
	struct fi_module m;
	pthread_t t;

	if (!rt->configured && fi_rt_set_config(&cfg, &(struct fineibt_key){ { 1 } }, false))
		return 10;
	fi_rt_seal();
	if (!rt->sealed)
		return 11;
	cfg = rt->cfg;
	seal_forged = cfg;
	seal_forged.flags |= FINEIBT_F_WARN;
	seal_ptr = (void *)sealed_child;
	pthread_create(&t, NULL, seal_writer, NULL);
	for (int i = 0; i < 1000; i++) {
		fake_module(&m, 402, "sealed-probe");
		if (fi_rt_add_module(&m) == 0)
			fi_rt_del_module(&m);
	}
	seal_stop = 1;
	pthread_join(t, NULL);
	printf("note: sealed: %lu writes landed in page 0, %lu in page 1 "
	       "(control: %lu)\n", seal_sealed, seal_hot, seal_ctl);
	fflush(stdout);
	if (seal_sealed || seal_hot || rt->cfg.flags != cfg.flags ||
	    rt->calls.real_dlopen == seal_ptr || rt->nmods == 999)
		return 1;
	return seal_ctl ? 0 : 2;
}

static void test_sealed_page(void)
{
	int rc = in_child(sealed_child);

	CHECK("sealed: no racing write reaches the state through 1000 windows "
	      "after the seal (page 0 nor page 1)", rc == 0 || rc == 2);
	CHECK("sealed: (control) the same writer lands in a writable word",
	      rc == 0);
}

/* ------------------------------------------------------ the scan record */

static void test_seen(void)
{
	const struct fi_runtime *rt = fi_rt();
	struct fi_module m;
	const struct fi_module *c;
	struct fi_rt_seen e;
	long at = -1;
	uint64_t zero = 0;

	fake_module(&m, 300, "seen");
	e = (struct fi_rt_seen){ .key = m.text_lo, .size = 16,
				 .lo = m.text_lo, .hi = m.text_hi };
	if (!CHECK("seen: add", fi_rt_seen_add(&e, 1) == 1 && fi_rt_add_module(&m) == 0))
		return;
	c = fi_rt_module_of(&m);
	e.mod = c;
	e.fp = 1234;
	CHECK("seen: set its copy", c && fi_rt_seen_set(&e, 1) == 1 &&
	      fi_rt_seen_set(&(struct fi_rt_seen){ .key = 1 }, 1) == 0);
	for (size_t i = 0; i < rt->nseen; i++) {
		if (rt->seen[i].key == e.key)
			at = (long)i;
	}
	if (!CHECK("seen: in the state", at >= 0 && rt->seen[at].mod == c &&
		   rt->seen[at].fp == 1234))
		return;
	CHECK("seen: its range is rewritten code",
	      fi_rt_rewritten_at(m.text_lo) && fi_rt_rewritten_at(m.text_hi - 1) &&
	      !fi_rt_rewritten_at(m.text_hi) && !fi_rt_rewritten_at(m.text_lo - 1));
	CHECK("seen: a forged entry cannot be written (key, module, range)",
	      !vm_write((void *)&rt->seen[at].key, &zero, 8) &&
	      !vm_write((void *)&rt->seen[at].mod, &zero, 8) &&
	      !vm_write((void *)&rt->seen[at].hi, &zero, 8) &&
	      rt->seen[at].key == e.key && fi_rt_rewritten_at(m.text_lo));
	fi_rt_seen_drop((size_t)at);
	CHECK("seen: dropping an entry withdraws its module and range",
	      !rt->seen[at].key && !fi_rt_module_at(m.text_lo) &&
	      !fi_rt_rewritten_at(m.text_lo));
	CHECK("seen: a key of 0 is refused",
	      fi_rt_seen_add(&(struct fi_rt_seen){ 0 }, 1) == 0);
}

/* ------------------------------------------------------------ the limits */

static struct fi_module lim_jit[FI_MAX_JIT + 1], lim_mod[FI_MAX_MODULES + 1];
static uint8_t (*lim_text)[4];

static void lim_module(struct fi_module *m, size_t i, bool jit)
{
	if (!lim_text)
		lim_text = fi_test_text((FI_MAX_JIT + FI_MAX_MODULES + 2) * 4);
	*m = (struct fi_module){ 0 };
	m->img.path = jit ? "[jit]" : "lim";
	m->text_lo = (uint64_t)(uintptr_t)lim_text[i];
	m->text_hi = m->text_lo + 4;
}

static int lim_add_jit(struct fi_module *m)
{
	return fi_rt_add_jit(m, m->text_lo, m->text_hi);
}

/* Exit status: failed checks. */
static int limits_child(void)
{
	size_t nmods = 0;
	int bad = 0, i;

	for (i = 0; i <= FI_MAX_JIT; i++)
		lim_module(&lim_jit[i], (size_t)i, true);
	for (i = 0; i <= FI_MAX_MODULES; i++)
		lim_module(&lim_mod[i], FI_MAX_JIT + 1 + (size_t)i, false);
	for (i = 0; i < FI_MAX_JIT; i++)
		bad += lim_add_jit(&lim_jit[i]) != 0;
	bad += lim_add_jit(&lim_jit[FI_MAX_JIT]) != -ENOSPC;
	/* Modules already registered by this process count too. */
	for (i = 0; i < FI_MAX_MODULES; i++)
		nmods += fi_rt()->mods[i] != NULL;
	for (i = 0; (size_t)i < FI_MAX_MODULES - nmods; i++)
		bad += fi_rt_add_module(&lim_mod[i]) != 0;
	bad += fi_rt_add_module(&lim_mod[FI_MAX_MODULES]) != -ENOSPC;
	bad += lim_add_jit(&lim_jit[FI_MAX_JIT]) != -ENOSPC;
	bad += fi_rt_del_module(&lim_jit[0]) != 0;
	bad += fi_rt_add_module(&lim_mod[FI_MAX_MODULES]) != -ENOSPC;
	bad += lim_add_jit(&lim_jit[FI_MAX_JIT]) != 0;
	bad += !fi_rt_module_at(lim_jit[FI_MAX_JIT].text_lo) ||
	       !fi_rt_module_at(lim_mod[0].text_lo);
	return bad;
}

static void test_limits(void)
{
	CHECK("limits: JIT regions and modules fill separate tables",
	      in_child(limits_child) == 0);
}

int main(void)
{
	test_guards();
	test_die();
	test_seen();
	test_race_pointer();
	test_sealed_page();
	test_limits();
#if !defined(__SANITIZE_ADDRESS__)
	/* Not under SAN=1: ASan needs fresh mappings for its own shadow and
	 * aborts at the map-count limit, and its guards are read-only
	 * (rtstate.c); the plain build runs it. */
	test_mapfull();
#endif
	return fi_check_exit();
}
