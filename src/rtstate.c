/* SPDX-License-Identifier: MIT */
/*
 * The process-wide runtime state (runtime.h): mode, seed, the table of
 * registered modules and of BHI stub arrays.
 *
 * Two kinds of users with opposite needs. The loader side (constructor,
 * dlopen hook) registers things rarely and may block. The SIGILL handler
 * looks things up at any moment, in any thread, possibly while a
 * registration is half done, and must not block or allocate. So: fixed
 * arrays, one mutex for writers, and lock-free readers that only ever see
 * a fully written slot (slot stores happen before the release-store of the
 * count or of the slot pointer; readers acquire-load them).
 *
 * The state sits alone in page-aligned storage padded to whole pages (in
 * .bss, so it costs no file space), so a later step can make it read-only
 * after start-up with one mprotect() of fi_rt_storage() without touching
 * neighbouring data.
 */
#include <errno.h>
#include <pthread.h>

#include "runtime.h"

#define FI_PAGE		4096
#define FI_RT_BYTES	((sizeof(struct fi_runtime) + FI_PAGE - 1) & ~(size_t)(FI_PAGE - 1))

static union {
	struct fi_runtime rt;
	uint8_t pad[FI_RT_BYTES];
} fi_rt_store __attribute__((aligned(FI_PAGE), section(".bss.fineibt_rtstate")));

static pthread_mutex_t fi_rt_lock = PTHREAD_MUTEX_INITIALIZER;

/* src/bhi.S */
extern const uint8_t __bhi_args[], __bhi_args_end[];

#define LOAD_ACQ(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE_REL(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)

const struct fi_runtime *fi_rt(void)
{
	return &fi_rt_store.rt;
}

void *fi_rt_storage(size_t *size)
{
	if (size)
		*size = sizeof(fi_rt_store);
	return &fi_rt_store;
}

const uint8_t *fi_bhi_stubs(size_t *size)
{
	if (size)
		*size = (size_t)(__bhi_args_end - __bhi_args);
	return __bhi_args;
}

void fi_rt_set_config(const struct fineibt_config *cfg, uint32_t seed,
		      bool have_arity)
{
	struct fi_runtime *rt = &fi_rt_store.rt;

	pthread_mutex_lock(&fi_rt_lock);
	rt->cfg = *cfg;
	rt->seed = seed;
	rt->have_arity = have_arity;
	pthread_mutex_unlock(&fi_rt_lock);
}

void fi_rt_set_active(bool active)
{
	STORE_REL(&fi_rt_store.rt.active, active);
}

/* ---------------------------------------------------------------- modules */

int fi_rt_add_module(struct fi_module *m)
{
	struct fi_runtime *rt = &fi_rt_store.rt;
	size_t i, free_slot = FI_MAX_MODULES;
	int ret = 0;

	pthread_mutex_lock(&fi_rt_lock);
	for (i = 0; i < rt->nmods; i++) {
		if (rt->mods[i] == m) {
			ret = -EEXIST;
			goto out;
		}
		if (!rt->mods[i] && free_slot == FI_MAX_MODULES)
			free_slot = i;
	}
	if (free_slot < FI_MAX_MODULES) {
		STORE_REL(&rt->mods[free_slot], m);
	} else if (rt->nmods < FI_MAX_MODULES) {
		/* Slot first, then the count that makes readers look at it. */
		STORE_REL(&rt->mods[rt->nmods], m);
		STORE_REL(&rt->nmods, rt->nmods + 1);
	} else {
		ret = -ENOSPC;
	}
out:
	pthread_mutex_unlock(&fi_rt_lock);
	return ret;
}

int fi_rt_del_module(const struct fi_module *m)
{
	struct fi_runtime *rt = &fi_rt_store.rt;
	int ret = -ENOENT;

	pthread_mutex_lock(&fi_rt_lock);
	for (size_t i = 0; i < rt->nmods; i++) {
		if (rt->mods[i] == m) {
			STORE_REL(&rt->mods[i], NULL);
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&fi_rt_lock);
	return ret;
}

/* Async-signal-safe: no lock, acquire loads only. */
const struct fi_module *fi_rt_module_at(uint64_t addr)
{
	const struct fi_runtime *rt = &fi_rt_store.rt;
	size_t n = LOAD_ACQ(&rt->nmods);

	for (size_t i = 0; i < n; i++) {
		const struct fi_module *m = LOAD_ACQ(&rt->mods[i]);

		if (m && addr >= m->text_lo && addr < m->text_hi)
			return m;
	}
	return NULL;
}

/* -------------------------------------------------------------- BHI stubs */

static bool fi_rt_in(uint64_t addr, uint64_t base, uint64_t size)
{
	return addr >= base && addr - base < size;
}

int fi_rt_add_stubs(uint64_t base, uint64_t size)
{
	struct fi_runtime *rt = &fi_rt_store.rt;
	size_t want, i, slot = FI_MAX_MODULES;
	int ret = 0;

	fi_bhi_stubs(&want);
	if (!base || size != want)
		return -EINVAL;
	pthread_mutex_lock(&fi_rt_lock);
	for (i = 0; i < rt->nstubs; i++) {
		if (rt->stubs[i] == base) {
			ret = -EEXIST;
			goto out;
		}
		if (!rt->stubs[i] && slot == FI_MAX_MODULES)
			slot = i;
	}
	if (slot == FI_MAX_MODULES) {
		if (rt->nstubs >= FI_MAX_MODULES) {
			ret = -ENOSPC;
			goto out;
		}
		slot = rt->nstubs;
	}
	/*
	 * Size, then base, then the count: a reader that sees a non-zero base
	 * also sees its size. Deleted slots read base 0 and are skipped.
	 */
	STORE_REL(&rt->stub_size[slot], size);
	STORE_REL(&rt->stubs[slot], base);
	if (slot == rt->nstubs)
		STORE_REL(&rt->nstubs, rt->nstubs + 1);
out:
	pthread_mutex_unlock(&fi_rt_lock);
	return ret;
}

int fi_rt_del_stubs(uint64_t base)
{
	struct fi_runtime *rt = &fi_rt_store.rt;
	int ret = -ENOENT;

	pthread_mutex_lock(&fi_rt_lock);
	for (size_t i = 0; i < rt->nstubs; i++) {
		if (base && rt->stubs[i] == base) {
			STORE_REL(&rt->stubs[i], 0);
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&fi_rt_lock);
	return ret;
}

/* Async-signal-safe: no lock, acquire loads only. */
uint64_t fi_rt_bhi_base(uint64_t addr)
{
	const struct fi_runtime *rt = &fi_rt_store.rt;
	uint64_t own = (uint64_t)(uintptr_t)__bhi_args;
	size_t n = LOAD_ACQ(&rt->nstubs);

	if (fi_rt_in(addr, own, (uint64_t)(__bhi_args_end - __bhi_args)))
		return own;
	for (size_t i = 0; i < n; i++) {
		uint64_t base = LOAD_ACQ(&rt->stubs[i]);

		if (base && fi_rt_in(addr, base, LOAD_ACQ(&rt->stub_size[i])))
			return base;
	}
	return 0;
}
