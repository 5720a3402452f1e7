/* SPDX-License-Identifier: MIT */
/*
 * docs/protection.md, "Escapes through the runtime's own work": the
 * binding passes (interpose/dlsym_so.c's interposers, sigbind.c's
 * RTLD_DEEPBIND rebinding, trap/stockven.c's typed veneers) store into a loaded module's pointer slots, some of them
 * in its RELRO (its GOT). That store used to open the slot's page
 * read-write for the store (mprotect, store, mprotect): a thread racing
 * it could write any word of the page, the module's GOT entries among
 * them, which its PLT jumps through unchecked in every mode.
 * fi_live_store_slot writes a RELRO slot through the kernel instead.
 *
 * Here the slot is a word of libm's RELRO (a library this program loads
 * and never calls: its own RELRO is the runtime's, linked in, where no
 * store may land, below), stored again with
 * its own value 3000 times while a thread writes another word of the
 * same page with process_vm_writev (which fails with EFAULT on a page
 * that is not writable instead of faulting: the write primitive of those
 * attacks), with that word's own value. fi_live_store_slot: none of the
 * writer's stores lands, and the slot reads what was stored. The control
 * is the page-opening store the passes made before (fi_livedyn_store):
 * the same writer lands stores in its windows.
 *
 * Where a store may land (fi_live_slot_ok): the slot and the range come
 * from the loader's writable link map, so the kernel decides. A range
 * that names the runtime's own RELRO (this program's), the read-only
 * state or a text page gets -EPERM and nothing stored; on the tree
 * before, each was written through /proc/self/mem.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "check.h"
#include "livedyn.h"
#include "rtlive.h"
#include "runtime.h"

#define PAGE	4096
#define ROUNDS	3000

static struct fi_livedyn dyn, own;
static bool dyn_found, own_found;

static int find_modules(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (!own_found && !info->dlpi_name[0])	/* the executable: first */
		own_found = fi_livedyn_read(info, &own) &&
			    own.relro_hi > own.relro_lo;
	else if (!dyn_found && strstr(info->dlpi_name, "/libm.so"))
		dyn_found = fi_livedyn_read(info, &dyn) &&
			    dyn.relro_hi > dyn.relro_lo;
	return 0;
}

/* A store of a value other than @slot's at @slot, in a range [@slot,
 * +8): refused, and @slot unchanged? (Put back if it was not.) */
static bool refused(void **slot)
{
	/* Read with memcpy: one case is an unaligned slot. */
	void *was, *now, *other;
	uintptr_t a = (uintptr_t)slot;
	int err;
	bool same;

	memcpy(&was, (const void *)a, sizeof(was));
	other = (void *)((uintptr_t)was ^ 0x10);
	err = fi_live_store_slot(a, a + 8, slot, other);
	memcpy(&now, (const void *)a, sizeof(now));
	same = now == was;

	if (!same)
		fi_live_store_slot(a, a + 8, slot, was);
	return err == -EPERM && same;
}

static volatile int stop;
static volatile long *victim;
static unsigned long landed, tries;

static void *writer(void *arg)
{
	(void)arg;
	while (!stop) {
		long v = *victim;
		struct iovec l = { &v, sizeof(v) }, r = { (void *)victim, sizeof(v) };

		if (process_vm_writev(getpid(), &l, 1, &r, 1, 0) == sizeof(v))
			landed++;
		__atomic_add_fetch(&tries, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* @store @slot ROUNDS times with its own value under the writer: how
 * many of the writer's stores landed; *@bad: stores that failed or left
 * another value. */
static unsigned long race(void **slot, bool kernel, int *bad)
{
	pthread_t t;

	stop = 0;
	landed = 0;
	tries = 0;
	*bad = 0;
	if (pthread_create(&t, NULL, writer, NULL))
		return ~0UL;
	/* The writer runs before the first store, and through all of them. */
	while (!__atomic_load_n(&tries, __ATOMIC_RELAXED))
		sched_yield();
	for (int i = 0; i < ROUNDS; i++) {
		void *to = *slot;

		if (kernel) {
			if (fi_live_store_slot(dyn.relro_lo, dyn.relro_hi, slot, to))
				++*bad;
		} else {
			fi_livedyn_store(&dyn, slot, to);
		}
		if (*slot != to)
			++*bad;
		sched_yield();
	}
	stop = 1;
	pthread_join(t, NULL);
	return landed;
}

int main(void)
{
	uintptr_t lo, pg;
	void **slot;
	unsigned long n;
	int bad;

	if (!CHECK("relro_libm", dlopen("libm.so.6", RTLD_NOW)))
		return fi_check_exit();
	dl_iterate_phdr(find_modules, NULL);
	if (!CHECK("relro_found", dyn_found && own_found))
		return fi_check_exit();
	/* Where no store may land, whatever range the caller names. */
	CHECK("relro_runtime_own_refused",
	      refused((void **)((own.relro_lo + 7) & ~(uintptr_t)7)));
	CHECK("relro_state_refused",
	      refused((void **)(uintptr_t)&fi_rt()->nmods));
	CHECK("relro_text_refused", refused((void **)(uintptr_t)
		(((uintptr_t)&writer + 7) & ~(uintptr_t)7)));
	CHECK("relro_unaligned_refused",
	      refused((void **)(((dyn.relro_lo + 7) & ~(uintptr_t)7) + 1)));
	/* A slot and another word of the same page, both in RELRO. */
	lo = (dyn.relro_lo + 7) & ~(uintptr_t)7;
	pg = lo & ~(uintptr_t)(PAGE - 1);
	slot = (void **)lo;
	victim = (volatile long *)(lo + 8 < pg + PAGE && lo + 16 <= dyn.relro_hi ?
				   lo + 8 : lo - 8);
	if (!CHECK("relro_two_words", (uintptr_t)victim >= dyn.relro_lo &&
		   (uintptr_t)victim + 8 <= dyn.relro_hi &&
		   ((uintptr_t)victim & ~(uintptr_t)(PAGE - 1)) == pg))
		return fi_check_exit();

	/* The kernel's store writes (a value no one reads meanwhile: this
	 * thread alone runs, and calls nothing between the two stores). */
	{
		void *was = *slot, *other = (void *)((uintptr_t)was ^ 1);
		int e1 = fi_live_store_slot(dyn.relro_lo, dyn.relro_hi, slot, other);
		void *got = *slot;
		int e2 = fi_live_store_slot(dyn.relro_lo, dyn.relro_hi, slot, was);

		CHECK("relro_store_through_kernel_writes",
		      !e1 && !e2 && got == other && *slot == was);
	}
	n = race(slot, true, &bad);
	printf("fi_live_store_slot: %lu of the writer's %lu stores landed, %d bad\n",
	       n, tries, bad);
	CHECK("relro_store_through_kernel_lands_nothing", n == 0);
	CHECK("relro_store_through_kernel_stores", bad == 0);

	n = race(slot, false, &bad);
	printf("control, the page opened for each store: %lu of %lu landed\n",
	       n, tries);
	CHECK("relro_control_window_lands", n > 0 && n != ~0UL);
	return fi_check_exit();
}
