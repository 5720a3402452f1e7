/* SPDX-License-Identifier: MIT */
/*
 * How a process uses the shared text cache (src/load/cacheuse.c;
 * docs/runtime.md "Shared text"): the start-up decision and key, and each
 * scan's lookups (runtime.c calls these, in this order, under its lock).
 */
#ifndef FI_CACHEUSE_H
#define FI_CACHEUSE_H

#include <stdbool.h>
#include <stddef.h>

#include "hash.h"
#include "runtime.h"

/*
 * Start-up, once the mode is resolved, inside the first scan's window:
 * may this process take its user's key and map entries? True: *@key is
 * the user's key, recorded with the cache's state (fi_rt_set_cache).
 * False: the process draws a key of its own and never maps an entry
 * (AT_SECURE or @secure, capabilities, root, FINEIBT_CACHE=off, a module
 * patched statically, no service or no directory of the user yet); one
 * `debug` line says why. Without the user's directory it may still ask
 * the service to fill entries for its modules (fi_cache_finish).
 */
bool fi_cache_begin(const struct fineibt_config *cfg, bool secure,
		    struct fi_module *const *mods, size_t n,
		    struct fineibt_key *key);

/* Before a scan's modules @mods[0..@n) are taken: where their files are. */
void fi_cache_prepare(struct fi_module *const *mods, size_t n);

/*
 * Map @m's entry over its text instead of rewriting it, in the process's
 * mode (fi_rt()->cfg, not bhi). True: mapped. False: rewrite it
 * privately; a miss is remembered for the fill request.
 */
bool fi_cache_take(struct fi_module *m);

/* After the scan: the fill request for its misses, descriptors closed. */
void fi_cache_finish(void);

#endif /* FI_CACHEUSE_H */
