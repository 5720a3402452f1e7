/* SPDX-License-Identifier: MIT */
/*
 * The process-wide runtime state (runtime.h): mode, key, the table of
 * registered modules and of BHI stub arrays, the program's SIGILL
 * disposition, and the arena holding the registered modules.
 *
 * A CFI runtime is only as strong as its own state: one write to a mode
 * byte would switch every check off. So, as the kernel keeps cfi_mode and
 * its rehash key __ro_after_init, the state is read-only, and more: it
 * is never writable in this process after start-up's first window (which
 * runs alone, before any code of the program: rtwrite.c). Every update below is a
 * fi_rt_put inside a window (rtwrite.c: signals blocked, one lock), which
 * the kernel writes into the read-only pages; nothing here keeps a
 * writable copy of anything that decides whether or how a check is
 * enforced.
 *
 * Readers (the SIGILL handler, at any moment, in any thread, possibly
 * while a registration is half done) take no lock and never allocate:
 * fixed arrays, slot puts before the put of the count or of the slot
 * pointer that publishes them, acquire loads on the reader side.
 */
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "coarse.h"
#include "rawsys.h"
#include "runtime.h"

/* src/seq/bhi.S */
extern const uint8_t __bhi_args[], __bhi_args_end[];

#define LOAD_ACQ(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)

const uint8_t *fi_bhi_stubs(size_t *size)
{
	if (size)
		*size = (size_t)(__bhi_args_end - __bhi_args);
	return __bhi_args;
}

/* ----------------------------------------------------------------- mode */

int fi_rt_set_config(const struct fineibt_config *cfg,
		     const struct fineibt_key *key, bool have_arity)
{
	const struct fi_runtime *rt;
	/*
	 * From configured to the key, in one put: nothing reads them before
	 * start-up's first window ends (the one that writes them).
	 */
	enum {
		lo = offsetof(struct fi_runtime, configured),
		hi = offsetof(struct fi_runtime, key) + sizeof(struct fineibt_key),
	};
	uint8_t span[hi - lo];
	bool secure = getauxval(AT_SECURE) != 0, yes = true;
	sigset_t saved;
	int ret = -EPERM;

	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return -errno;
	memcpy(span, (const uint8_t *)rt + lo, sizeof(span));
#define FI_SPAN_SET(field, v) \
	memcpy(span + (offsetof(struct fi_runtime, field) - lo), (v), sizeof(rt->field))
	FI_SPAN_SET(configured, &yes);
	FI_SPAN_SET(have_arity, &have_arity);
	FI_SPAN_SET(secure, &secure);
	FI_SPAN_SET(cfg, cfg);
	FI_SPAN_SET(key, key);
#undef FI_SPAN_SET
	if (!rt->sealed)
		ret = fi_rt_put((const uint8_t *)rt + lo, span, sizeof(span));
	fi_rt_wipe(span, sizeof(span));
	fi_rt_write_end(&saved);
	return ret;
}

/*
 * Put @len bytes of @src at @off in the state, in a window of its own,
 * while start-up has not sealed it: the page-0 settings start-up makes
 * once (the system log's socket, the cache's use). -EPERM after the seal.
 */
static int fi_rt_put_unsealed(size_t off, const void *src, size_t len)
{
	const struct fi_runtime *rt;
	sigset_t saved;
	int ret = -EPERM;

	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return -errno;
	if (!rt->sealed)
		ret = fi_rt_put((const uint8_t *)rt + off, src, len);
	fi_rt_write_end(&saved);
	return ret;
}

int fi_rt_set_syslog(const struct fi_rt_syslog *s)
{
	return fi_rt_put_unsealed(offsetof(struct fi_runtime, syslog), s, sizeof(*s));
}

int fi_rt_set_cache(const struct fi_rt_cache *c)
{
	return fi_rt_put_unsealed(offsetof(struct fi_runtime, cache), c, sizeof(*c));
}

int fi_rt_set_active(bool active)
{
	const struct fi_runtime *rt;
	sigset_t saved;
	int ret = 0;

	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return -errno;
	if (rt->sealed && !active)
		ret = -EPERM;
	else if (LOAD_ACQ(&rt->active) != active)
		ret = FI_RT_PUT(rt->active, active);
	fi_rt_write_end(&saved);
	return ret;
}

/*
 * Seal the state; with @activate, set active in the same put (start-up
 * sets both, one after the other: the two bytes are adjacent).
 */
static void fi_rt_seal_as(bool activate)
{
	static const bool both[2] = { true, true };
	const struct fi_runtime *rt;
	sigset_t saved;

	_Static_assert(offsetof(struct fi_runtime, sealed) ==
		       offsetof(struct fi_runtime, active) + 1,
		       "active and sealed are adjacent");
	rt = fi_rt_write_begin(&saved);
	if (rt) {
		if (!rt->sealed && activate) {
			fi_rt_put(&rt->active, both, sizeof(both));
		} else {
			if (activate && !rt->active)
				FI_RT_PUT(rt->active, true);
			if (!rt->sealed)
				FI_RT_PUT(rt->sealed, true);
		}
		/* From now on the thunks check (coarse.h). */
		fi_rt_coarse_publish(rt);
		fi_rt_write_end(&saved);
	}
}

void fi_rt_seal(void)
{
	fi_rt_seal_as(false);
}

void fi_rt_seal_active(void)
{
	fi_rt_seal_as(true);
}

/*
 * Inside a window: a new known-entry table for the coarse check, or none
 * when the process does not enforce it (coarse.h). The old table stays
 * in the arena: a thunk in another thread may be reading it. The table
 * is a function of the read-only state alone: laid out in scratch, put,
 * then the landed copy is compared with the table made again, and only
 * then published (a thread writing the scratch meanwhile would choose
 * which addresses unchecked calls may reach).
 */
int fi_rt_coarse_publish(const struct fi_runtime *rt)
{
	size_t len = fi_coarse_table_len(rt);
	const struct fi_coarse *t = NULL, *cur = rt->coarse;
	struct fi_coarse *buf;
	int err = 0;

	if (len) {
		buf = calloc(1, len);
		if (!buf)
			return -ENOMEM;
		fi_coarse_table_fill(rt, buf);
		/* The same table (a module without kCFI came): nothing to do. */
		if (cur && len == sizeof(*cur) + (cur->n + 1) * sizeof(cur->r[0]) &&
		    !memcmp(cur, buf, len)) {
			free(buf);
			return 0;
		}
		t = fi_arena_alloc(&rt->arena, len);
		err = t ? fi_rt_put_scratch(t, buf, len) : -ENOMEM;
		if (!err) {
			memset(buf, 0, len);
			fi_coarse_table_fill(rt, buf);
			fi_rt_park("verify", NULL, 0);
			if (memcmp(t, buf, len))
				err = -EBADMSG;
		}
		free(buf);
		if (err)
			return err;	/* the room stays in the arena, unused */
	}
	return cur == t ? 0 : FI_RT_PUT(rt->coarse, t);
}

/* ---------------------------------------------------------------- modules */

static bool fi_rt_has_module(const struct fi_runtime *rt, const void *key)
{
	for (size_t i = 0; i < rt->nmods && i < FI_MAX_SLOTS; i++) {
		if (rt->mods[i] && (rt->mods[i]->key == key || rt->mods[i] == key))
			return true;
	}
	return false;
}

/* A free slot in [@base, @base + @n) (deleted or never used); -1 if full. */
static long fi_rt_mod_slot(const struct fi_runtime *rt, size_t base, size_t n)
{
	for (size_t i = base; i < base + n; i++) {
		if (i >= rt->nmods || !rt->mods[i])
			return (long)i;
	}
	return -1;
}

/*
 * The copy is made, written and verified first (fi_arena_freeze); only a
 * verified copy is published, by the put of its slot, then of the count
 * that makes readers look that far.
 */
static int fi_rt_add_as(struct fi_module *m, bool jit, uint64_t lo,
			uint64_t hi)
{
	const struct fi_runtime *rt;
	const struct fi_module *copy;
	sigset_t saved;
	long slot;
	int ret = 0;

	rt = fi_rt_write_begin(&saved);
	if (!rt) {
		ret = -errno;
		goto scrub;
	}
	slot = jit ? fi_rt_mod_slot(rt, FI_MAX_MODULES, FI_MAX_JIT) :
		     fi_rt_mod_slot(rt, 0, FI_MAX_MODULES);
	if (fi_rt_has_module(rt, m)) {
		ret = -EEXIST;
	} else if (slot < 0) {
		ret = -ENOSPC;
	} else if (!(copy = fi_arena_freeze(&rt->arena, m, jit, lo, hi))) {
		ret = -errno;
	} else if (copy->bhi_args && fi_rt_bhi_base(copy->bhi_args) != copy->bhi_args) {
		ret = -EBADMSG;	/* a stub array no one registered */
	} else if (!(ret = FI_RT_PUT(rt->mods[slot], copy)) &&
		   (size_t)slot >= rt->nmods) {
		ret = FI_RT_PUT(rt->nmods, (size_t)slot + 1);
		if (!ret)
			fi_rt_coarse_publish(rt);
	}
	fi_rt_write_end(&saved);
scrub:
	/*
	 * The caller's copy is writable memory: the key leaves it whether or
	 * not the module got a slot (the rewrite that needed it is done; a
	 * failed registration's copy would otherwise keep it, then be freed
	 * with it still in the heap). Not a registered copy handed back to
	 * us: that one lives in the read-only arena and is the key's home.
	 */
	if (!fi_arena_owns(&fi_rt()->arena, m, sizeof(*m))) {
		fi_rt_wipe(&m->rehash_key, sizeof(m->rehash_key));
		fi_rt_wipe(&m->img.note.key, sizeof(m->img.note.key));
		__asm__ volatile("" ::: "memory");
	}
	return ret;
}

const void *fi_rt_keep(const void *src, size_t len)
{
	const struct fi_runtime *rt;
	sigset_t saved;
	void *p;

	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return NULL;
	p = fi_arena_alloc(&rt->arena, len);
	if (p && fi_rt_put_scratch(p, src, len))
		p = NULL;
	fi_rt_write_end(&saved);
	return p;
}

const uint64_t *fi_coarse_keep(const struct fi_image *im, uint64_t lo,
			       uint64_t hi, bool pre)
{
	size_t words = fi_coarse_range_words(lo, hi, im);
	uint64_t *bits = words && words <= SIZE_MAX / 16 ?
			 calloc(words, sizeof(*bits)) : NULL;
	const uint64_t *kept;

	if (!bits)
		return NULL;
	fi_coarse_range_fill(bits, lo, hi, im, pre);
	kept = fi_rt_keep(bits, words * sizeof(*bits));
	/* Made again and compared where it landed: the scratch it was
	 * laid out in is writable. */
	memset(bits, 0, words * sizeof(*bits));
	fi_coarse_range_fill(bits, lo, hi, im, pre);
	if (kept && memcmp(kept, bits, words * sizeof(*bits)))
		kept = NULL;	/* never published: unused bytes of the arena */
	free(bits);
	return kept;
}

int fi_rt_add_module(struct fi_module *m)
{
	return fi_rt_add_as(m, false, 0, 0);
}

int fi_rt_add_jit(struct fi_module *m, uint64_t lo, uint64_t hi)
{
	return fi_rt_add_as(m, true, lo, hi);
}

const struct fi_module *fi_rt_module_of(const void *key)
{
	const struct fi_runtime *rt = fi_rt();
	size_t n = LOAD_ACQ(&rt->nmods);

	for (size_t i = 0; i < n && i < FI_MAX_SLOTS; i++) {
		const struct fi_module *m = LOAD_ACQ(&rt->mods[i]);

		if (m && m->key == key)
			return m;
	}
	return NULL;
}

/*
 * Inside a window: the repeated-failure pairs (trap/repeat.c) whose call
 * site or target lies in [@lo, @hi), a module that is going away, are
 * retired (their site put to 0, which no look-up asks for). A module
 * loaded later at the same address is other code: its first failure at
 * the same addresses must be reported in full, not counted as a repeat
 * of the old one's (docs/traps.md, "Repeated failures"). The slot is
 * taken again by a new pair once the table is full (trap/repeat.c).
 */
static void fi_rt_repeat_forget(const struct fi_runtime *rt, uint64_t lo,
				uint64_t hi)
{
	const struct fi_rt_repeat *r = &rt->repeat;

	for (size_t i = 0; lo < hi && i < r->n && i < FI_RT_REPEAT; i++) {
		uint64_t site = r->pair[i].site, target = r->pair[i].target;

		if (site && ((site >= lo && site < hi) ||
			     (target >= lo && target < hi)))
			FI_RT_PUT(r->pair[i].site, 0);
	}
}

/*
 * Withdraws slot i inside an open window: the slot emptied, the coarse
 * table made again without it, its repeat pairs retired.
 */
static int fi_rt_withdraw(const struct fi_runtime *rt, size_t i)
{
	const struct fi_module *c = rt->mods[i];
	int ret = FI_RT_PUT(rt->mods[i], NULL);

	if (!ret) {
		fi_rt_coarse_publish(rt);
		fi_rt_repeat_forget(rt, c->text_lo, c->text_hi);
	}
	return ret;
}

int fi_rt_del_module(const struct fi_module *m)
{
	const struct fi_runtime *rt;
	sigset_t saved;
	int ret = -ENOENT;

	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return -errno;
	for (size_t i = 0; i < rt->nmods && i < FI_MAX_SLOTS; i++) {
		const struct fi_module *c = rt->mods[i];

		if (c && (c->key == m || c == m)) {
			ret = fi_rt_withdraw(rt, i);
			break;
		}
	}
	fi_rt_write_end(&saved);
	return ret;
}

int fi_rt_del_jit(uint64_t lo, const void **key)
{
	const struct fi_runtime *rt;
	sigset_t saved;
	int ret = -ENOENT;

	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return -errno;
	for (size_t i = FI_MAX_MODULES; i < rt->nmods && i < FI_MAX_SLOTS; i++) {
		const struct fi_module *c = rt->mods[i];

		if (!c || c->text_lo != lo)
			continue;
		ret = fi_rt_withdraw(rt, i);
		if (!ret)
			*key = c->key;
		break;
	}
	fi_rt_write_end(&saved);
	return ret;
}

/* Async-signal-safe: no lock, acquire loads only. */
const struct fi_module *fi_rt_module_at(uint64_t addr)
{
	const struct fi_runtime *rt = fi_rt();
	size_t n = LOAD_ACQ(&rt->nmods);

	for (size_t i = 0; i < n && i < FI_MAX_SLOTS; i++) {
		const struct fi_module *m = LOAD_ACQ(&rt->mods[i]);

		/*
		 * Only a copy the arena handed out is a module (the table is
		 * never writable; this costs a loop over the few chunks).
		 */
		if (m && addr >= m->text_lo && addr < m->text_hi &&
		    fi_arena_owns(&rt->arena, m, sizeof(*m)))
			return m;
	}
	return NULL;
}

/* ------------------------------------------------------------ the scans */

/*
 * Is @e, which landed in the record, one the scans could have made? Its
 * key is the first executable segment of a module: mapped executable to
 * the kernel, and so is its kCFI range; its registered copy, if any, is
 * in the table; its compiled trap list in the arena, sorted. (Built in a
 * writable array by the scan: docs/protection.md.)
 */
static bool fi_rt_seen_ok(const struct fi_runtime *rt,
			  const struct fi_rt_seen *e, uint64_t key, bool kernel)
{
	bool mod = !e->mod;
	uint64_t lo, hi;
	struct fi_vma v;
	int err;

	fi_rt_park("verify", NULL, 0);
	for (size_t i = 0; !mod && i < rt->nmods && i < FI_MAX_MODULES; i++)
		mod = rt->mods[i] == e->mod;
	/* With its registered copy: the kCFI range is the copy's text. */
	if (mod && e->mod && (e->lo != e->mod->text_lo || e->hi != e->mod->text_hi))
		return false;
	if (e->cbits && (e->mod || !fi_coarse_seen_range(e, &lo, &hi) ||
			 !fi_arena_owns(&rt->arena, e->cbits,
					fi_coarse_words(lo, hi) * sizeof(uint64_t))))
		return false;
	if (!key || !e->size || e->lo > e->hi || !mod ||
	    (e->ctraps && !fi_arena_owns(&rt->arena, e->ctraps,
					 e->nctraps * sizeof(*e->ctraps))) ||
	    (!e->ctraps && e->nctraps))
		return false;
	for (size_t i = 1; e->ctraps && i < e->nctraps; i++) {
		if (e->ctraps[i] <= e->ctraps[i - 1])
			return false;
	}
	if (!kernel)
		return true;
	/* One question, most often: the kCFI range is in the same mapping. */
	err = fi_rt_vma(key, &v);
	if (err && err != -ENOENT)
		return true;	/* the kernel cannot be asked: docs/protection.md */
	if (err || !v.x || v.w)
		return false;
	return e->lo == e->hi || (e->lo >= v.lo && e->hi <= v.hi) ||
	       fi_rt_vma_text(e->lo, e->hi, true, NULL) != -EACCES;
}

/*
 * A record that does not verify stops the process: the module would
 * otherwise run rewritten without a record of it, and its checks would
 * reach the program's SIGILL handler.
 */
static void fi_rt_seen_check(const struct fi_runtime *rt, size_t i,
			     uint64_t key, bool kernel)
{
	if (!fi_rt_seen_ok(rt, &rt->seen[i], key, kernel))
		fi_rt_die("a module's record changed while it was written "
			  "(another thread wrote into the runtime's scratch)");
}

/* Entry @i, a free one below nseen: the whole entry, then its key. */
static int fi_rt_seen_put(const struct fi_runtime *rt, size_t i,
			  const struct fi_rt_seen *e)
{
	struct fi_rt_seen v = *e;
	uint64_t key = v.key;
	int err;

	v.key = 0;
	err = fi_rt_put_scratch(&rt->seen[i], &v, sizeof(v));
	if (err)
		return err;
	fi_rt_seen_check(rt, i, key, true);
	return FI_RT_PUT(rt->seen[i].key, key);
}

/*
 * @e[0..@n) after the last entry in use, in one put (readers do not look
 * past nseen), checked, then published by the count. How many.
 */
static size_t fi_rt_seen_append(const struct fi_runtime *rt,
				const struct fi_rt_seen *e, size_t n)
{
	size_t at = rt->nseen, k = 0;

	while (k < n && k < FI_MAX_SEEN - at && e[k].key)
		k++;
	if (!k || fi_rt_put_scratch(&rt->seen[at], e, k * sizeof(*e)))
		return 0;
	for (size_t i = at; i < at + k; i++)
		fi_rt_seen_check(rt, i, rt->seen[i].key, true);
	return FI_RT_PUT(rt->nseen, at + k) ? 0 : k;
}

size_t fi_rt_seen_add(const struct fi_rt_seen *e, size_t n)
{
	const struct fi_runtime *rt;
	sigset_t saved;
	size_t i = 0, done = 0;

	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return 0;
	/* Free entries below nseen first (withdrawn modules'). */
	for (; done < n && e[done].key; done++) {
		while (i < rt->nseen && rt->seen[i].key)
			i++;
		if (i >= rt->nseen || fi_rt_seen_put(rt, i, &e[done]))
			break;
	}
	if (done < n && i >= rt->nseen)
		done += fi_rt_seen_append(rt, e + done, n - done);
	/* a kCFI module that will not be registered is a range of its own */
	if (done)
		fi_rt_coarse_publish(rt);
	fi_rt_write_end(&saved);
	return done;
}

size_t fi_rt_seen_set(const struct fi_rt_seen *e, size_t n)
{
	const struct fi_runtime *rt;
	sigset_t saved;
	size_t done = 0;
	bool cbits = false;

	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return 0;
	for (size_t k = 0; k < n; k++) {
		for (size_t i = 0; e[k].key && i < rt->nseen; i++) {
			struct fi_rt_seen v;
			size_t off = offsetof(struct fi_rt_seen, fp);

			if (rt->seen[i].key != e[k].key)
				continue;
			/*
			 * The entry stays published: from fp on, in one put
			 * (what a reader reads there, the compiled traps, is
			 * rewritten with the bytes it holds).
			 */
			v = rt->seen[i];
			v.mod = e[k].mod;
			v.fp = e[k].fp;
			v.cbits = e[k].cbits;
			v.fp_set = true;
			if (!fi_rt_put_scratch((const uint8_t *)&rt->seen[i] + off,
					       (const uint8_t *)&v + off,
					       sizeof(v) - off)) {
				fi_rt_seen_check(rt, i, rt->seen[i].key, false);
				done++;
				cbits |= v.cbits != NULL;
			}
			break;
		}
	}
	/* a module whose registration failed: its entries, now known */
	if (cbits)
		fi_rt_coarse_publish(rt);
	fi_rt_write_end(&saved);
	return done;
}

void fi_rt_seen_drop(size_t i)
{
	const struct fi_runtime *rt;
	struct fi_rt_seen e;
	sigset_t saved;

	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return;
	if (i >= rt->nseen || !rt->seen[i].key) {
		fi_rt_write_end(&saved);
		return;
	}
	e = rt->seen[i];
	if (!FI_RT_PUT(rt->seen[i].key, 0)) {
		const struct fi_module *m = e.mod;

		for (size_t k = 0; m && k < FI_MAX_MODULES && k < rt->nmods; k++) {
			if (rt->mods[k] == m)
				FI_RT_PUT(rt->mods[k], NULL);
		}
		fi_rt_put(&rt->seen[i], &(struct fi_rt_seen){ 0 },
			  sizeof(rt->seen[i]));
		fi_rt_coarse_publish(rt);
		/* Its executable segment, and its rewritten text. */
		fi_rt_repeat_forget(rt, e.key, e.key + e.size);
		if (m)
			fi_rt_repeat_forget(rt, m->text_lo, m->text_hi);
	}
	fi_rt_write_end(&saved);
}

/* Whether a recorded rewritten range overlaps [@lo, @hi). */
static bool fi_rt_seen_overlaps(uint64_t lo, uint64_t hi)
{
	const struct fi_runtime *rt = fi_rt();
	size_t n = LOAD_ACQ(&rt->nseen);

	for (size_t i = 0; i < n && i < FI_MAX_SEEN; i++) {
		const struct fi_rt_seen *e = &rt->seen[i];

		if (LOAD_ACQ(&e->key) && lo < e->hi && e->lo < hi)
			return true;
	}
	return false;
}

bool fi_rt_rewritten_at(uint64_t addr)
{
	return fi_rt_seen_overlaps(addr, addr + 1);
}

/*
 * Read by the SIGILL handler: the record and the lists it points to are
 * read-only, so a write cannot make a check of such a module look like a
 * plain ud2 (which would go to the program's handler).
 */
bool fi_rt_compiled_trap(uint64_t addr)
{
	const struct fi_runtime *rt = fi_rt();
	size_t n = LOAD_ACQ(&rt->nseen);

	for (size_t i = 0; i < n && i < FI_MAX_SEEN; i++) {
		const struct fi_rt_seen *e = &rt->seen[i];
		uint64_t key = LOAD_ACQ(&e->key), off = addr - key;
		size_t lo = 0, hi = e->nctraps;

		if (!key || !e->ctraps || addr < key || off > UINT32_MAX)
			continue;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (e->ctraps[mid] == off)
				return true;
			if (e->ctraps[mid] < off)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	return false;
}

/*
 * True if [@lo, @hi) overlaps the text of a registered module or a range
 * the runtime rewrote: code that is not the JIT's to register.
 */
bool fi_rt_range_owned(uint64_t lo, uint64_t hi)
{
	const struct fi_runtime *rt = fi_rt();
	size_t n = LOAD_ACQ(&rt->nmods);

	for (size_t i = 0; i < n && i < FI_MAX_MODULES; i++) {
		const struct fi_module *m = LOAD_ACQ(&rt->mods[i]);

		if (m && lo < m->text_hi && m->text_lo < hi)
			return true;
	}
	return fi_rt_seen_overlaps(lo, hi);
}

/* -------------------------------------------------------------- BHI stubs */

static bool fi_rt_in(uint64_t addr, uint64_t base, uint64_t size)
{
	return addr >= base && addr - base < size;
}

/*
 * A stub array is a copy of ours (fi_bhi_stubs), in executable memory no
 * one can write: a range taken for one decodes every #UD in it as a BHI
 * trap only, so one laid over a module's text would hide its checks.
 * @base may come from a statically patched module's note.
 */
static bool fi_rt_stubs_ok(uint64_t base, uint64_t size)
{
	int err = fi_rt_vma_text(base, base + size, true, NULL);

	if (err == -EACCES)
		return false;
	/* Unknown to the kernel (no /proc): read only what is ours to map. */
	return !err ? !memcmp((const void *)(uintptr_t)base, __bhi_args, size) :
		      base == (uint64_t)(uintptr_t)__bhi_args;
}

static int fi_rt_add_stubs_locked(const struct fi_runtime *rt, uint64_t base,
				  uint64_t size)
{
	size_t i, slot = FI_MAX_MODULES;
	int err;

	for (i = 0; i < rt->nstubs; i++) {
		if (rt->stubs[i] == base)
			return -EEXIST;
		if (!rt->stubs[i] && slot == FI_MAX_MODULES)
			slot = i;
	}
	if (slot == FI_MAX_MODULES) {
		if (rt->nstubs >= FI_MAX_MODULES)
			return -ENOSPC;
		slot = rt->nstubs;
	}
	if (!fi_rt_stubs_ok(base, size))
		return -EINVAL;
	/*
	 * Size, then base, then the count: a reader that sees a non-zero base
	 * also sees its size. Deleted slots read base 0 and are skipped.
	 */
	if ((err = FI_RT_PUT(rt->stub_size[slot], size)) ||
	    (err = FI_RT_PUT(rt->stubs[slot], base)))
		return err;
	if (slot == rt->nstubs)
		return FI_RT_PUT(rt->nstubs, rt->nstubs + 1);
	return 0;
}

static int fi_rt_add_stubs_as(uint64_t base, uint64_t size, bool copy)
{
	const struct fi_runtime *rt;
	sigset_t saved;
	size_t want;
	int ret;

	fi_bhi_stubs(&want);
	if (!base || size != want)
		return -EINVAL;
	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return -errno;
	if (copy && rt->nstub_copies == FI_MAX_MODULES)
		ret = -ENOSPC;
	else
		ret = fi_rt_add_stubs_locked(rt, base, size);
	if (!ret && copy &&
	    !(ret = FI_RT_PUT(rt->stub_copies[rt->nstub_copies], base)))
		ret = FI_RT_PUT(rt->nstub_copies, rt->nstub_copies + 1);
	fi_rt_write_end(&saved);
	return ret;
}

int fi_rt_add_stubs(uint64_t base, uint64_t size)
{
	return fi_rt_add_stubs_as(base, size, false);
}

int fi_rt_add_stub_copy(uint64_t base, uint64_t size)
{
	return fi_rt_add_stubs_as(base, size, true);
}

int fi_rt_del_stubs(uint64_t base)
{
	const struct fi_runtime *rt;
	sigset_t saved;
	int ret = -ENOENT;

	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return -errno;
	for (size_t i = 0; i < rt->nstubs; i++) {
		if (base && rt->stubs[i] == base) {
			ret = FI_RT_PUT(rt->stubs[i], 0);
			break;
		}
	}
	fi_rt_write_end(&saved);
	return ret;
}

/* Async-signal-safe: no lock, acquire loads only. */
uint64_t fi_rt_bhi_base(uint64_t addr)
{
	const struct fi_runtime *rt = fi_rt();
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

/* ------------------------------------------------------------ hygiene */

/*
 * The key travels through locals of the patching code (the patch
 * options, the rehash loop): once those frames are popped their bytes
 * are still in the stack, writable and readable by the program. Wipe
 * up to FI_SCRUB_DEPTH below the caller, which covers the deepest
 * start-up and dlopen patching paths (docs/protection.md), but never
 * past the low end of the stack the caller runs on: a thread created
 * with a 16 KiB stack may dlopen a library, and the memory below its
 * stack is its guard page or another thread's stack.
 */
#define FI_SCRUB_DEPTH	(32 * 1024)

/* The program's initial stack: its top (ld.so) and its size limit. */
extern void *__libc_stack_end;

/* The floor of a thread's stack as libc knows it, or 0. */
static uintptr_t fi_rt_thread_floor(uintptr_t sp)
{
	pthread_attr_t a;
	size_t size;
	void *addr;
	uintptr_t lo;

	if (pthread_getattr_np(pthread_self(), &a))
		return 0;
	if (pthread_attr_getstack(&a, &addr, &size))
		size = 0;
	pthread_attr_destroy(&a);
	/* [addr, addr + size) excludes the guard page (glibc). */
	lo = (uintptr_t)addr;
	return size && sp > lo && sp <= lo + size ? lo : 0;
}

/* Is the calling thread the process's first? Made directly (rawsys.h):
 * libfineibt.a's getpid would be an LD_PRELOAD library's. */
static bool fi_rt_is_main_thread(void)
{
	return fi_sys3(SYS_getpid, 0, 0, 0) == fi_sys3(SYS_gettid, 0, 0, 0);
}

/*
 * The lowest address the stack holding @sp may be written at, or 0 when
 * @sp is on no stack we know the bounds of (a coroutine's stack the
 * program allocated, which may be the middle of its heap).
 */
static uintptr_t fi_rt_stack_floor(uintptr_t sp)
{
	uintptr_t top = (uintptr_t)__libc_stack_end, lo;
	size_t reach;
	struct rlimit rl;
	struct fi_vma v;

	/*
	 * The kernel's mapping around @sp. The initial stack is the one
	 * that holds the stack's top: it grows down and is never merged
	 * with a neighbour, so its low end is where the stack is mapped
	 * down to now (no lower floor is needed: pages never mapped hold no
	 * secret). Every thread's control block (the thread pointer) lies at
	 * the top of its own stack, but the main thread's, which ld.so
	 * allocated elsewhere: a thread pointer inside that mapping is a
	 * thread whose stack the program carved out of the initial stack,
	 * whose bounds only libc knows. No system call but the query.
	 */
	if (!fi_rt_vma_kept(sp, &v)) {
		uintptr_t tp;

		__asm__("mov %%fs:0, %0" : "=r"(tp));
		if (top >= v.lo && top < v.hi && sp > v.lo)
			return tp >= v.lo && tp < v.hi ? fi_rt_thread_floor(sp) : v.lo;
		/* Elsewhere: a thread's stack, or one of the program's own
		 * (a coroutine's) on the main thread. */
		return fi_rt_is_main_thread() ? 0 :
		       fi_rt_thread_floor(sp);
	}
	if (!fi_rt_is_main_thread())
		return fi_rt_thread_floor(sp);
	/*
	 * No kept maps descriptor or no PROCMAP_QUERY (before Linux 6.11).
	 * Not pthread_getattr_np: for the initial thread it reads
	 * /proc/self/maps, at every start-up. The stack's mapping may grow
	 * to RLIMIT_STACK below its top, of which the arguments and
	 * environment (above __libc_stack_end) take at most a quarter
	 * (ARG_MAX), the auxiliary vector and alignment a few pages more.
	 */
	if (getrlimit(RLIMIT_STACK, &rl) || rl.rlim_cur == RLIM_INFINITY)
		rl.rlim_cur = 8u << 20;
	reach = rl.rlim_cur / 4 * 3;
	if (reach <= 64 * 1024 || top < reach)
		return 0;
	lo = top - reach + 64 * 1024;
	return sp > lo && sp <= top ? lo : 0;
}

/*
 * Zero [lo, hi), which lies below the stack pointer: no call, no frame.
 * Eight bytes a step, then the tail: one instruction per byte (each step
 * of a rep prefix retires as one) was most of the wipe's cost.
 */
static void fi_rt_wipe_below_sp(uintptr_t lo, uintptr_t hi)
{
	void *dst = (void *)lo;
	size_t q = (hi - lo) / 8, r = (hi - lo) % 8;

	__asm__ volatile("rep stosq" : "+D"(dst), "+c"(q) : "a"(0) : "memory");
	__asm__ volatile("rep stosb" : "+D"(dst), "+c"(r) : "a"(0) : "memory");
}

__attribute__((noinline)) void fi_rt_scrub_stack(void)
{
	unsigned char in[FI_SCRUB_DEPTH / 4096 + 2];
	uintptr_t sp, floor, lo, end, page;
	int resident;

	__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
	/*
	 * A start whose first window was written in place: no code of the
	 * program has run and no other task exists, so this is the initial
	 * stack, and nothing is mapped right below it (the kernel puts the
	 * loader's mappings under the stack's size limit and its guard gap;
	 * only a MAP_FIXED of the program's could). No floor is asked of
	 * the kernel (a PROCMAP_QUERY): whatever mincore finds mapped in
	 * the 32 KiB below is the stack's, and a part not mapped yet stops
	 * the wipe (ENOMEM, below).
	 */
	if (fi_rt_first_inplace_take())
		floor = sp > FI_SCRUB_DEPTH + 4096 ? sp - FI_SCRUB_DEPTH - 4096 : 0;
	else
		floor = fi_rt_stack_floor(sp);
	if (!floor)
		return;
	/* Stay clear of our own red zone and of the frames of the calls above. */
	end = (sp - 512) & ~(uintptr_t)15;
	lo = end - FI_SCRUB_DEPTH > floor && end > FI_SCRUB_DEPTH ?
	     end - FI_SCRUB_DEPTH : floor;
	if (lo >= end)
		return;
	/*
	 * Only the pages that exist: a stack page never touched holds no
	 * secret, and touching it just to clear it costs a page fault
	 * (about 15 us each on a virtual machine), most of the start-up
	 * of a small program. A signal delivered meanwhile puts its frame
	 * below the stack pointer, over the part being wiped: it is done
	 * with it before the wipe resumes.
	 */
	page = lo & ~(uintptr_t)4095;
	resident = mincore((void *)page, end - page, in) ? errno : 0;
	if (resident && resident != ENOMEM) {
		/*
		 * mincore refused (a system-call filter that leaves it out,
		 * as systemd 252's @system-service does: docs/ecosystem.md):
		 * no page can be told apart, so all of them are wiped, each
		 * missing one at the cost of a fault. The range lies within
		 * the stack fi_rt_stack_floor bounded: a main stack grows.
		 */
		fi_rt_wipe_below_sp(lo, end);
		return;
	}
	if (resident) {
		/*
		 * Part of the range is not mapped (ENOMEM): a main stack not
		 * grown that far, or valgrind's own stack for the program.
		 * Wipe downwards while the pages are mapped and resident;
		 * writing below them would grow the stack or fault.
		 */
		for (uintptr_t a = (end - 1) & ~(uintptr_t)4095; a >= page; a -= 4096) {
			unsigned char one;

			if (mincore((void *)a, 4096, &one) || !(one & 1))
				break;
			fi_rt_wipe_below_sp(a < lo ? lo : a, a + 4096 > end ? end : a + 4096);
			if (a < 4096)
				break;
		}
		return;
	}
	for (size_t i = 0; page + i * 4096 < end; i++) {
		uintptr_t a = page + i * 4096, b = a + 4096;

		if (!(in[i] & 1))
			continue;
		fi_rt_wipe_below_sp(a < lo ? lo : a, b > end ? end : b);
	}
}

/* The recorded module whose text starts at @key, or -1. */
long fi_rt_seen_find(uint64_t key)
{
	const struct fi_runtime *rt = fi_rt();

	for (size_t i = 0; i < rt->nseen; i++) {
		if (rt->seen[i].key == key)
			return (long)i;
	}
	return -1;
}

/*
 * The runtime's own text copies (runtime.h, fi_rt_copy_note): the
 * record's one writer; its reader, fi_rt_copy_as_file, is rtcoarse.c's
 * (the export check). A note puts a record and the count: one page of
 * the state (the fallback's windows open only the pages they write).
 */
_Static_assert(offsetof(struct fi_runtime, ncopies) / 4096 ==
	       (offsetof(struct fi_runtime, copies) +
		sizeof(((struct fi_runtime *)0)->copies) - 1) / 4096,
	       "the record of text copies on one page");

/* @a and @b overlap or touch, from one file at one offset. */
static bool fi_rt_copy_joins(const struct fi_rt_copy *a,
			     const struct fi_rt_copy *b)
{
	return a->lo <= b->hi && b->lo <= a->hi && a->dev == b->dev &&
	       a->ino == b->ino && a->off - a->lo == b->off - b->lo;
}

int fi_rt_copy_note(uint64_t lo, uint64_t hi)
{
	struct fi_rt_copy c = { .lo = lo, .hi = hi };
	const struct fi_runtime *rt;
	struct fi_vma v;
	sigset_t saved;
	size_t n, i;
	int err = fi_rt_vma(lo, &v);

	if (err)
		return err;
	/* The pages as they are now: the file's, or a copy of ours. */
	if (hi <= lo || hi > v.hi || !(v.file || fi_rt_copy_as_file(lo, &v)))
		return -ENOENT;
	c.dev = v.dev;
	c.ino = v.ino;
	c.off = v.off + (lo - v.lo);
	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return -errno;
	n = rt->ncopies < FI_MAX_COPIES ? rt->ncopies : FI_MAX_COPIES;
	for (i = 0; i < n; i++) {
		const struct fi_rt_copy *o = &rt->copies[i];

		if (fi_rt_copy_joins(o, &c)) {
			c.off -= lo - (o->lo < lo ? o->lo : lo);
			c.lo = o->lo < lo ? o->lo : lo;
			c.hi = o->hi > hi ? o->hi : hi;
			break;
		}
		if (o->lo < hi && lo < o->hi)
			break;	/* another file's pages were there: replaced */
	}
	if (i == FI_MAX_COPIES)
		err = -ENOSPC;
	else if (!(err = fi_rt_put(&rt->copies[i], &c, sizeof(c))) && i == n)
		err = FI_RT_PUT(rt->ncopies, n + 1);
	fi_rt_write_end(&saved);
	return err;
}
