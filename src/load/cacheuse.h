/* SPDX-License-Identifier: MIT */
/*
 * How a process uses the shared text cache (src/load/cacheuse.c;
 * docs/runtime.md "Shared text"): the start-up decision and key, and each
 * scan's lookups (start.c calls these, in this order, under its lock).
 */
#ifndef FI_CACHEUSE_H
#define FI_CACHEUSE_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hash.h"
#include "runtime.h"

/*
 * Before a scan opens its new modules (@f[i] for each bit i of @news,
 * @n found): at the first scan of the process @cfg is the mode the
 * environment asks for (not final yet: fi_cache_settle) and @secure says
 * whether the process is privileged: it decides whether the process may
 * take its user's key and look entries up (never when privileged, with
 * capabilities, as root, with FINEIBT_CACHE=off or in a bhi mode; one
 * `debug` line says why), and reads the key. Later scans (@cfg NULL)
 * follow the state. Then where each new library's text is mapped
 * (/proc/self/maps, one read).
 */
/*
 * Scratch for the scan's pagemap reads: @cap 64-bit entries at @buf, on
 * a page the scan has touched already (NULL: none). Lent until
 * fi_cache_finish.
 */
void fi_cache_lend(uint64_t *buf, size_t cap);

void fi_cache_scan_begin(const struct fi_rt_found *f, size_t n,
			 const uint64_t *news, const struct fineibt_config *cfg,
			 bool secure);

/*
 * Open time, for a module with a module index (@desc) loaded at @bias,
 * whose file the loader opened as @path (FI_RT_SELF for the executable):
 * if the cache has its entry, @im is built from the entry's site record's
 * header (fi_image_from_record: no page of its text read, no site listed)
 * and 0 is returned, the entry kept open and its registered arrays mapped
 * for fi_cache_take. -ENOENT otherwise (a miss is
 * remembered for the fill request): read the module as before.
 */
int fi_cache_open(struct fi_image *im, const char *path, uint64_t bias,
		  const Elf64_Phdr *ph, size_t phnum, const uint32_t *desc);

/*
 * The first scan's settled mode (fi_rt_config, inside its window): true
 * when the process takes its user's key (*@key; recorded in the state
 * with the cache's: fi_rt_set_cache). False: a key of its own (draw it);
 * entries found at open time under another mode (a module patched
 * statically set it) are not mapped: fi_cache_take reads those modules
 * again from their text.
 */
bool fi_cache_settle(const struct fineibt_config *cfg, bool secure,
		     struct fi_module *const *mods, size_t n,
		     struct fineibt_key *key);

/*
 * Take time: map the entry fi_cache_open found for @m over its text, in
 * the process's mode, once the entry's registered arrays are @m's (its
 * text range and mode): @m then points into them (m->regs), for its
 * registration. True: mapped. False: rewrite it privately (@m's image
 * discovered from its text again if it had been built from a record).
 */
bool fi_cache_take(struct fi_module *m);

/*
 * Did this scan's open time record no module (no entry to map, no miss
 * to request)? Then fi_cache_take maps nothing and fi_cache_finish asks
 * the service nothing.
 */
bool fi_cache_idle(void);

/*
 * Will fi_cache_take map an entry for each of the @n modules of @m, and
 * fi_cache_finish ask the service nothing (every module this scan
 * recorded is a hit, none stale)? Then taking them is quick (an mmap and
 * a seal each; a map that fails after all rewrites that module, inside
 * the window: correct, only longer with signals blocked), and the scan's
 * window may stay open through the takes.
 */
bool fi_cache_all_hit(struct fi_module *const *m, size_t n);

/* After the scan: the fill request for its misses, descriptors closed. */
void fi_cache_finish(void);

#endif /* FI_CACHEUSE_H */
