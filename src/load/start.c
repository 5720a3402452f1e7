// SPDX-License-Identifier: MIT
/*
 * The load-time runtime: before any instrumented code of the program
 * runs, read FINEIBT_CFI, draw the process key, rewrite the executable
 * and every kCFI module loaded so far into the chosen mode, register them
 * for the trap handler and install it. Modules loaded later (dlopen) are
 * rewritten by fineibt_rt_hook(), which the crt of every module built by
 * fineibt-cc calls first thing in its init_array, before the module's own
 * constructors.
 *
 * When this runs: as a constructor of libfineibt.so (a dependency of every
 * module fineibt-cc links, so its constructor runs before theirs), or
 * earlier, while the loader relocates it, when a kCFI module without the
 * crt hook is loaded (early.c); from the executable's DT_PREINIT_ARRAY
 * when the runtime is linked statically (preinit.c). All paths meet in
 * fi_rt_scan(), which is idempotent and serialised by one mutex (dlopen
 * itself is serialised by the dynamic loader's lock too).
 *
 * The runtime itself is never instrumented (the Makefile builds src/ with
 * -fno-sanitize=kcfi), so patching never changes a byte of code that is
 * running the patching.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctor.h"
#include "fineibt.h"
#include "cacheid.h"
#include "cacheuse.h"
#include "coarse.h"
#include "imgindex.h"
#include "jit.h"
#include "load.h"
#include "note.h"
#include "options.h"
#include "patch.h"
#include "upcall.h"
#include "print.h"
#include "rawsys.h"
#include "rtlive.h"
#include "runtime.h"
#include "stockven.h"
#include "logsink.h"
#include "trap.h"
#include "variant.h"

#define FI_MSG_MAX	2048	/* FINEIBT_CFI=help: the word list */
#define FI_SEEN_WORDS	(FI_MAX_SEEN / 64)

static pthread_mutex_t fi_rt_mutex = PTHREAD_MUTEX_INITIALIZER;
static bool fi_rt_started;
/*
 * Started from early.c, while the loader relocates libfineibt.so: the
 * modules relocated after it (the executable among them) must not have
 * their GOT touched yet, so binding dlsym & co. waits for our constructor.
 * Due too when a bind pass met a module that another thread's dlopen is
 * still loading: the next scan binds it.
 */
static bool fi_rt_early, fi_rt_bind_due;
/*
 * The mode and key are read from fi_rt() only: read-only state. So is
 * the record of the modules looked at (fi_rt()->seen): a forged entry
 * would decide what is new and what to withdraw.
 */
static size_t fi_nfound;
/*
 * The walk's scratch, one area: the modules found (.found), then, from
 * right after the last one found, what a scan keeps of the new ones (at
 * most one each per module found): their record-to-be, their kCFI
 * module, the modules to take. Laid out per scan, so that a start-up
 * touches the front of one area, not of four arrays (a page fault each:
 * docs/bench.md, "Start-up cuts").
 */
#define FI_SCAN_BYTES	(FI_MAX_SEEN * (sizeof(struct fi_rt_found) +	\
					sizeof(struct fi_rt_seen) +	\
					2 * sizeof(struct fi_module *)))
static union {
	struct fi_rt_found found[FI_MAX_SEEN];
	uint8_t bytes[FI_SCAN_BYTES];
} fi_scan __attribute__((aligned(64)));
#define fi_found	fi_scan.found
_Static_assert(sizeof(struct fi_rt_found) % 8 == 0 &&
	       sizeof(struct fi_rt_seen) % 8 == 0,
	       "the scan's arrays follow one another 8-byte aligned");
/* dl_iterate_phdr's count of unloads, at this walk and the previous one. */
static unsigned long long fi_subs_now, fi_subs_last;
/*
 * The last scan kept a record that its walk did not find (an unload the
 * loader's lookup table did not show yet, or a module of another
 * namespace): the next scan fingerprints every module, unload or not.
 */
static bool fi_rt_doubt;

/* ------------------------------------------------------------ messages */

/* --------------------------------------------------------- module walk */

static int fi_rt_walk_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	uint64_t key = 0, tsize = 0;

	fi_subs_now = info->dlpi_subs;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			key = info->dlpi_addr + ph->p_vaddr;
			tsize = ph->p_memsz;
			break;
		}
	}
	if (!key || fi_nfound == FI_MAX_SEEN)
		return 0;
	fi_found[fi_nfound].name = info->dlpi_name ? info->dlpi_name : "";
	fi_found[fi_nfound].bias = info->dlpi_addr;
	fi_found[fi_nfound].key = key;
	fi_found[fi_nfound].size = tsize;
	fi_found[fi_nfound].phdr = info->dlpi_phdr;
	fi_found[fi_nfound].phnum = info->dlpi_phnum;
	fi_nfound++;
	return 0;
}

/*
 * The frozen copy of @m that the trap handler reads (its sites: @m's own
 * were dropped once it was registered), or @m itself if not registered.
 */
static const struct fi_module *fi_rt_registered(const struct fi_module *m)
{
	const struct fi_runtime *rt = fi_rt();

	for (size_t i = 0; i < rt->nmods; i++) {
		if (rt->mods[i] && rt->mods[i]->key == m)
			return rt->mods[i];
	}
	return m;
}

/*
 * A hash of the live bytes of every sampled site of @m (fi_fp_hash, read
 * as words: gawk's 256 sampled sites 28.9k -> 15.1k instructions at
 * start-up): after a dlclose, tells the module we rewrote from a new one
 * mapped at the same address (whose sites are back in compiler form).
 */
/* Not registered: its image still has the sites. Apart, so that its
 * 2 KiB sample is on the stack only then. */
static __attribute__((noinline)) uint64_t
fi_rt_fingerprint_image(const struct fi_image *im)
{
	uint64_t own[FI_FP_SITES];

	return fi_fp_hash(im, own, fi_fp_sample(im, own));
}

static uint64_t fi_rt_fingerprint(const struct fi_module *m)
{
	const struct fi_module *r = fi_rt_registered(m);

	if (!r->fp_site)
		return fi_rt_fingerprint_image(&r->img);
	return fi_fp_hash(&r->img, r->fp_site, r->nfp);
}

/*
 * The fingerprint @m registers with. Mapped from a cache entry, its text
 * is the entry's, whose fingerprint the service stored with the arrays
 * (src/offline/cachefill.c): taken from there, not read from pages of the
 * text the program may never touch (a fault each of the sample's runs,
 * 4 on the 8,000-function library). Later checks (fi_rt_same) read the
 * live bytes.
 */
static uint64_t fi_rt_fingerprint_first(const struct fi_module *m)
{
	const struct fi_module *r = fi_rt_registered(m);
	const struct fi_cache_regs *h = r->regs;

	if (h && r->fp_site == (const uint64_t *)((const uint8_t *)h + h->fp_at) &&
	    r->nfp == h->nfp)
		return h->fp;
	return fi_rt_fingerprint(m);
}

/*
 * Is the module found at @s's address still the one we took? Only in
 * doubt after an unload; a module of another size, or whose sites no
 * longer read as we left them, is a new one. A kCFI module that could
 * not be registered has no copy to fingerprint: taken as the same one,
 * so its record (traps there are fatal) stays until it is gone.
 */
static bool fi_rt_same(const struct fi_rt_seen *s, const struct fi_rt_found *f)
{
	if (fi_subs_now == fi_subs_last && !fi_rt_doubt)
		return true;
	if (s->size != f->size || !s->lo)
		return false;
	if (!s->mod)
		return true;
	return !s->fp_set || fi_rt_fingerprint(s->mod) == s->fp;
}

/*
 * The load base of the object holding @addr (dladdr's dli_fbase), or
 * NULL. Without the loader's lock: this runs under fi_rt_mutex, and a
 * thread inside dlopen holds that lock while its module's crt hook waits
 * for fi_rt_mutex; dladdr here (after another thread's dlopen returned)
 * waited for it in turn, and both threads hung for good
 * (tests/e2e/rt_dlopen_threads.sh). _dl_find_object (glibc 2.35) reads
 * the loader's lock-free table of every namespace's objects.
 */
static const void *fi_rt_fbase(uint64_t addr)
{
	struct dl_find_object fo;

	if (_dl_find_object((void *)(uintptr_t)addr, &fo))
		return NULL;
	return fo.dlfo_map_start;
}

/*
 * The same value for a module the walk just found, from its program
 * headers: what dladdr reports as the load base is the page-aligned start
 * of the lowest PT_LOAD plus the bias (glibc's l_map_start, computed the
 * same way when the object was mapped). dladdr itself would also look up
 * the nearest symbol, which at start-up cost as much as the rest of a
 * small program's scan.
 */
static const void *fi_rt_found_fbase(const struct fi_rt_found *f)
{
	const ElfW(Phdr) *ph = f->phdr;
	uint64_t lo = UINT64_MAX, page = (uint64_t)getpagesize();

	for (size_t i = 0; i < f->phnum; i++) {
		if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr < lo)
			lo = ph[i].p_vaddr;
	}
	if (lo == UINT64_MAX)
		return fi_rt_fbase(f->key);
	return (const void *)(uintptr_t)(f->bias + (lo & ~(page - 1)));
}

/*
 * A module the walk did not find again is withdrawn only once its unload
 * is confirmed: the loader knows no object at its text any more, or
 * another one. A walk that missed it (a full table) withdraws nothing.
 */
static bool fi_rt_gone(const struct fi_rt_seen *s)
{
	return fi_rt_fbase(s->key) != s->fbase;
}

/*
 * Forget modules that are gone (dlclose): a later module may reuse their
 * addresses. Their fi_module is withdrawn from the trap handler's table
 * but not freed, since a handler running right now may still read it.
 * @alive: found again by this walk; @stale: another module is at its
 * address now.
 *
 * The loader takes an object off its list (the walk) before off
 * _dl_find_object's table (fi_rt_gone): a dlclose in another thread
 * between the two keeps the record, and this scan's unload count already
 * includes it. Were the next scan to trust that count, a reload of the
 * module at the same address would pass for the one we rewrote and stay
 * in kCFI form (its calls then trap). So the next scan fingerprints.
 */
static void fi_rt_forget_dead(const uint64_t *alive, const uint64_t *stale)
{
	const struct fi_runtime *rt = fi_rt();

	fi_rt_doubt = false;
	for (size_t i = 0; i < rt->nseen; i++) {
		const struct fi_rt_seen *s = &rt->seen[i];
		uint64_t bit = 1ull << (i % 64);

		if (!s->key || (alive[i / 64] & bit))
			continue;
		if ((stale[i / 64] & bit) || fi_rt_gone(s))
			fi_rt_seen_drop(i);
		else
			fi_rt_doubt = true;
	}
}

static bool fi_rt_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	return pread(fd, buf, len, (off_t)off) == (ssize_t)len;
}

/* Is one of the section names in @shdrs (@n of them) a kCFI one? */
static bool fi_rt_names_kcfi(const Elf64_Shdr *shdrs, unsigned int n,
			     const char *strs, size_t strsz)
{
	static const char *const want[] = {
		".kcfi_traps", "__patchable_function_entries", NULL,
	};

	for (unsigned int i = 1; i < n; i++) {
		const char *name = strs + shdrs[i].sh_name;

		if (shdrs[i].sh_name >= strsz)
			continue;
		for (size_t k = 0; want[k]; k++) {
			if (strnlen(name, strsz - shdrs[i].sh_name) ==
			    strlen(want[k]) && !strcmp(name, want[k]))
				return true;
		}
	}
	return false;
}

/*
 * Cheap pre-filter on the file's section names, so that libc and friends
 * are not read whole at every start: a kCFI module has .kcfi_traps or
 * __patchable_function_entries. Three reads: header, section headers,
 * section names.
 */
static bool fi_rt_file_has_kcfi(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *shdrs = NULL;
	char *strs = NULL;
	size_t strsz = 0;
	bool found = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (!fi_rt_pread_all(fd, &eh, sizeof(eh), 0) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    eh.e_shstrndx >= eh.e_shnum)
		goto out;
	shdrs = malloc((size_t)eh.e_shnum * sizeof(*shdrs));
	if (!shdrs || !fi_rt_pread_all(fd, shdrs, (size_t)eh.e_shnum *
				       sizeof(*shdrs), eh.e_shoff))
		goto out;
	strsz = shdrs[eh.e_shstrndx].sh_size;
	if (!strsz || strsz > (1u << 20))
		goto out;
	strs = malloc(strsz);
	if (strs && fi_rt_pread_all(fd, strs, strsz,
				    shdrs[eh.e_shstrndx].sh_offset))
		found = fi_rt_names_kcfi(shdrs, eh.e_shnum, strs, strsz);
out:
	free(strs);
	free(shdrs);
	close(fd);
	return found;
}

static bool fi_rt_image_is_kcfi(const struct fi_image *im)
{
	if (im->ncalls || im->nscalls || im->note.present || im->rec_sites)
		return true;
	for (size_t i = 0; i < im->nfuncs; i++) {
		if (im->funcs[i].form == FI_PRE_KCFI)
			return true;
	}
	return false;
}

#define FI_RT_SELF	"/proc/self/exe"


/*
 * @m's name in messages. An executable read from memory is known as
 * /proc/self/exe (which also finds its symbols after the file is replaced
 * or deleted); its real path costs a system call, paid only for a message.
 */
static const char *fi_rt_name(const struct fi_module *m)
{
	static char exe[4096];

	if (strcmp(m->img.path, FI_RT_SELF))
		return m->img.path;
	if (!exe[0])
		fi_rt_exe_path(exe, sizeof(exe));
	return exe[0] ? exe : m->img.path;
}

/*
 * Module @f from memory only, through the index fineibt-cc linked into it
 * (src/elf/imgindex.c): no file is opened. NULL with *@fall set when the file
 * must be read after all: the index was not filled in, or the sites are
 * not in compiler form and the index has no .fineibt record (something
 * other than this `fineibt patch` rewrote the file).
 */
static struct fi_module *fi_rt_open_index(const struct fi_rt_found *f,
					  const uint32_t *desc, bool *fall)
{
	const char *path = f->name[0] ? f->name : FI_RT_SELF;
	struct fi_module *m;
	char err[160];
	int ret;

	*fall = true;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	err[0] = '\0';
	/* Its entry in the shared text cache, before its text is read. */
	ret = fi_cache_open(&m->img, path, f->bias, f->phdr, f->phnum, desc);
	if (ret)
		ret = fi_image_from_index(&m->img, path, f->bias, f->phdr,
					  f->phnum, desc, err, sizeof(err));
	if (!ret && fi_image_tcall_list_bad(&m->img))
		fi_say("fineibt: warning: %s: the module index's list of "
		       "thunk calls is refused (%s); scanning the text\n", path,
		       fi_image_tcall_list_bad(&m->img));
	/* A module `fineibt patch` rewrote carries its record in the index
	 * (src/elf/index.h): taken as it is, from memory too. */
	if (!ret && (m->img.note.present || fi_image_is_kcfi_mode(&m->img))) {
		*fall = false;
		if (!fi_rt_image_is_kcfi(&m->img))
			goto drop;
		fi_live_text_range(&m->img, &m->text_lo, &m->text_hi);
		return m;
	}
	/* -EAGAIN: not relocated yet (an LD_AUDIT hook, or the early start
	 * of early.c); the file knows. */
	if (ret && ret != -ENOENT && ret != -EAGAIN)
		fi_say("fineibt: warning: %s: bad module index (%s); "
		       "reading the file\n", path, err);
drop:
	fi_image_close(&m->img);
	free(m);
	return NULL;
}

/*
 * The trap list of a module left as compiled (@im, loaded at key @key), for
 * the SIGILL handler: sorted 32-bit offsets from @key, in @out (NULL:
 * count only); their number.
 */
static size_t fi_rt_compiled_offs(const struct fi_image *im, uint64_t key,
				  uint32_t *out)
{
	size_t nt = fi_image_ntraps(im), k = 0;
	uint32_t last = 0;

	for (size_t i = 0; i < nt; i++) {
		uint64_t at = fi_image_trap(im, i) + im->bias;

		/* Sorted already (fi_image_is_trap's order); keep it so. */
		if (at < key || at - key > UINT32_MAX || (k && at - key <= last))
			continue;
		last = (uint32_t)(at - key);
		if (out)
			out[k] = last;
		k++;
	}
	return k;
}

/*
 * That list, in the read-only arena (fi_rt_keep), checked where it landed
 * against the image it was made from (the scratch it was built in is
 * writable). NULL if it has none or cannot be made; the module's checks
 * then reach the program's handler as before.
 */
static const uint32_t *fi_rt_compiled_list(const struct fi_image *im,
					   uint64_t key, uint32_t *n)
{
	size_t k = fi_rt_compiled_offs(im, key, NULL);
	uint32_t *list = k && k <= UINT32_MAX / 2 ? malloc(k * sizeof(*list)) : NULL;
	const uint32_t *kept;

	*n = 0;
	if (!list || fi_rt_compiled_offs(im, key, list) != k) {
		free(list);
		return NULL;
	}
	kept = fi_rt_keep(list, k * sizeof(*list));
	fi_rt_compiled_offs(im, key, list);
	if (kept && memcmp(kept, list, k * sizeof(*list)))
		kept = NULL;	/* never published: unused bytes of the arena */
	free(list);
	if (kept)
		*n = (uint32_t)k;
	return kept;
}

/*
 * Open and attach module @f; NULL if it is not a kCFI module. Not inlined:
 * its buffers must not deepen fi_rt_scan's frame, below which the key
 * passes during patching (fi_rt_scrub_stack wipes 32 KiB). The path of
 * the executable is static (scans hold fi_rt_mutex): a dlopen may run on
 * a thread with a 16 KiB stack, of which glibc's dlopen and this scan
 * leave little (cache.sh, protect_stack).
 */
static __attribute__((noinline)) struct fi_module *
fi_rt_open(const struct fi_rt_found *f, struct fi_rt_seen *e)
{
	const char *path = f->name;
	const uint32_t *desc;
	static char exe[4096];
	struct fi_module *m;
	char err[160];
	bool fall;
	int ret;

	/* The vdso and other nameless mappings have no file to read. */
	if (f->name[0] && !strchr(f->name, '/'))
		return NULL;
	/* No index and no kCFI preamble in memory: libc, ld.so,
	 * libfineibt... never opened. At start-up the early check may
	 * have looked at them already (early.c: no index either). */
	if (f->name[0] && !fi_rt()->sealed && fi_variant.early_said_plain &&
	    fi_variant.early_said_plain(f, fi_subs_now))
		return NULL;
	desc = fi_index_find(f->phdr, f->phnum, f->bias);
	if (desc) {
		m = fi_rt_open_index(f, desc, &fall);
		if (m || !fall)
			return m;
	} else if (f->name[0] &&
		   !fi_live_maybe_kcfi(f->phdr, f->phnum, f->bias)) {
		return NULL;
	}
	/* The executable (dl_iterate_phdr names it ""): read through
	 * /proc/self/exe, the very file we run even if its path was
	 * replaced since; named by its real path in messages, looked up
	 * only once it is kCFI (a plain executable, which loads kCFI
	 * libraries, pays no readlink). */
	exe[0] = '\0';
	if (!path[0])
		path = FI_RT_SELF;
	if (!fi_rt_file_has_kcfi(path))
		return NULL;
	if (!f->name[0])
		fi_rt_exe_path(exe, sizeof(exe));
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	err[0] = '\0';
	ret = fi_image_open_live(&m->img, path, f->bias, err, sizeof(err));
	if (ret) {
		fi_say("fineibt: warning: %s: cannot read (%s%s%s); left "
		       "in compiler form\n", path, strerror(-ret),
		       err[0] ? ": " : "", err);
		fi_image_close(&m->img);
		free(m);
		return NULL;
	}
	/*
	 * Checks none of which is a call site we recognise (no thunk flags:
	 * `call *%rax` after an addl of any register) cannot follow a new
	 * hash: its preambles are left too, so that its calls to its own
	 * functions, and to other modules left so, keep working.
	 */
	if (!fi_rt_image_is_kcfi(&m->img) ||
	    (!m->img.note.present && fi_image_kcfi_unprefixed(&m->img))) {
		/* Its checks stay as compiled: calls from it into rewritten
		 * code trap, and its own traps are ours to report. */
		if (fi_image_kcfi_unprefixed(&m->img)) {
			e->ctraps = fi_rt_compiled_list(&m->img, f->key,
							&e->nctraps);
			/* Its entries for the coarse check (rtcoarse.c):
			 * its aligned ENDBRs, whatever its layout. */
			e->cbits = e->ctraps ?
				   fi_coarse_keep(NULL, f->key,
						  f->key + f->size, false) :
				   NULL;
			const char *why = fi_image_stock_refused(&m->img);

			fi_say("fineibt: warning: %s: %zu kCFI checks left as "
			       "compiled, not rewritten: %s; its indirect calls "
			       "into rewritten code trap\n", exe[0] ? exe : path,
			       m->img.ntraps, why ? why : FI_UNPREFIXED_HINT);
		}
		fi_image_close(&m->img);
		free(m);
		return NULL;
	}
	if (exe[0] == '/') {
		char *name = strdup(exe);

		if (name) {
			free((char *)m->img.path);
			m->img.path = name;
		}
	}
	fi_live_text_range(&m->img, &m->text_lo, &m->text_hi);
	return m;
}

/*
 * The PLT's direct entries over every loaded module (pltwalk.c): run
 * under the runtime's lock once the runtime has started, never during an
 * early start or while a bind of dlsym & co. is still due (the loader may
 * still bind a slot then), nor in a dlmopen namespace's copy (the first
 * copy's pass covers the process).
 */
static bool fi_rt_plt_done;

static void fi_rt_plt_pass_as(bool startup)
{
	int saved_errno = errno;

	pthread_mutex_lock(&fi_rt_mutex);
	/* Start-up's last window ran it (fi_rt_links_close): the
	 * constructor's pass that follows has nothing new to see. */
	if (fi_rt_plt_done)
		fi_rt_plt_done = false;
	else if (fi_rt_started && !fi_rt_early && !fi_rt_bind_due &&
		 !fi_rt()->primary)
		fi_plt_walk(startup);
	pthread_mutex_unlock(&fi_rt_mutex);
	errno = saved_errno;
}

/* After a dlopen (dlhook.c): the program runs; nothing in place unless
 * fi_live_unverified_ok says so (upcall.h, fi_plt_direct). */
void fi_rt_plt_pass(void)
{
	fi_rt_plt_pass_as(false);
}

/* ------------------------------------------------------------ patching */

static bool fi_rt_has_arity(const struct fi_module *m)
{
	for (size_t a = 1; a <= FI_MAX_ARITY; a++) {
		if (m->img.arity_hist[a])
			return true;
	}
	return false;
}

static void fi_rt_report(const struct fi_module *m,
			 const struct fi_patch_stats *st, const char *what)
{
	char mode[64];

	if (!fi_verbose_on())
		return;
	fineibt_config_str(&m->cfg, mode, sizeof(mode));
	if (!st) {
		fi_say("fineibt: %s: %s %s\n", fi_rt_name(m), what, mode);
		return;
	}
	fi_say("fineibt: %s: %s %s (key %s; %zu preambles, %zu call "
	       "sites, %zu bhi, %zu poisoned, %zu dethunked, %zu "
	       "skipped)\n", fi_rt_name(m), what, mode,
	       (m->cfg.flags & FINEIBT_F_RAND) ? "random" : "none",
	       st->preambles, st->callers, st->bhi + st->bhi_inline,
	       st->poisoned, st->dethunked, st->skipped);
}

/*
 * A module patched statically with warn brings warn into the process only
 * at start-up (it is then the program's own choice, fi_rt_adopt_note),
 * and never into a privileged (AT_SECURE) process. Otherwise a library
 * loaded later (dlopen) would make its CFI failures non-fatal in a process
 * that enforces: registered without warn, they are fatal.
 */
static void fi_rt_static_warn(struct fi_module *m)
{
	const char *why;

	if (!(m->cfg.flags & FINEIBT_F_WARN))
		return;
	if (fi_rt()->secure)
		why = "in a privileged (setuid) process";
	else if (fi_rt_started && !(fi_rt()->cfg.flags & FINEIBT_F_WARN))
		why = "after start-up";
	else
		return;
	m->cfg.flags &= ~FINEIBT_F_WARN;
	fi_say("fineibt: warning: %s was patched statically with warn, "
	       "refused %s; its CFI failures are fatal\n", fi_rt_name(m),
	       why);
}

/*
 * Does a module patched statically in @lib leave calls the process's mode
 * @proc checks unchecked? Its call sites stay as written, and a caller
 * checks nothing in off, and in plain FineIBT leaves the check to the
 * target's preamble: a kCFI one (the process in kcfi) runs
 * `movl; nop; endbr` and checks nothing, a naked ENDBR (which paranoid
 * stops) takes any call. The reason, or NULL.
 */
static const char *fi_rt_static_weaker(struct fineibt_config lib,
				       struct fineibt_config proc)
{
	bool lib_caller, proc_caller;

	fineibt_resolve_auto(&lib);
	fineibt_resolve_auto(&proc);
	if (proc.mode == FINEIBT_MODE_OFF)
		return NULL;
	if (lib.mode == FINEIBT_MODE_OFF)
		return "its calls go unchecked";
	lib_caller = lib.mode == FINEIBT_MODE_KCFI ||
		     (lib.flags & FINEIBT_F_PARANOID);
	proc_caller = proc.mode == FINEIBT_MODE_KCFI ||
		      (proc.flags & FINEIBT_F_PARANOID);
	if (proc_caller && !lib_caller)
		return proc.mode == FINEIBT_MODE_KCFI ?
		       "its calls into kCFI code go unchecked" :
		       "its calls to a naked ENDBR go unchecked";
	return NULL;
}

/*
 * A module patched statically in a mode that checks less than the
 * process's brings that mode in only at start-up, where it is the
 * program's own choice (as warn, fi_rt_static_warn), and never into a
 * privileged process. Loaded later, its call sites cannot be made to
 * check as the process's do (a patched module is not rewritten again):
 * stop before any of its code runs.
 */
static void fi_rt_static_mode(const struct fi_module *m)
{
	const char *why = fi_rt_static_weaker(m->cfg, fi_rt()->cfg);
	char lib[64], proc[64], msg[400];

	if (!why || (!fi_rt_started && !fi_rt()->secure))
		return;
	fineibt_config_str(&m->cfg, lib, sizeof(lib));
	fineibt_config_str(&fi_rt()->cfg, proc, sizeof(proc));
	snprintf(msg, sizeof(msg), "%s was patched statically with cfi=%s, "
		 "weaker than the process's %s (%s): refused %s", fi_rt_name(m),
		 lib, proc, why, fi_rt()->secure ? "in a setuid process" :
						  "after start-up");
	fi_rt_die(msg);
}

/* A module `fineibt patch` already rewrote: take it as it is. */
static void fi_rt_take_static(struct fi_module *m)
{
	const struct fi_note *n = &m->img.note;

	m->cfg = n->cfg;
	fi_rt_static_warn(m);
	fi_rt_static_mode(m);
	m->rehash_key = n->key;
	m->patched = true;
	m->bhi_args = n->bhi_args ? n->bhi_args + m->img.bias : 0;
	if (m->bhi_args) {
		size_t size;

		fi_bhi_stubs(&size);
		fi_rt_add_stubs(m->bhi_args, size);
	}
	if (memcmp(&m->cfg, &fi_rt()->cfg, sizeof(m->cfg)) ||
	    ((n->cfg.flags & FINEIBT_F_RAND) &&
	     memcmp(&n->key, &fi_rt()->key, sizeof(n->key))))
		fi_say("fineibt: warning: %s was patched statically with "
		       "another mode or key than the process's; calls "
		       "between it and other modules may trap\n",
		       fi_rt_name(m));
	fi_rt_report(m, NULL, "kept static");
}

/*
 * A record this runtime cannot read (another `fineibt patch` version, such
 * as version 1's xor rehash): the module's hashes follow a scheme we do
 * not know, so no other module can be made to match it, and its mode and
 * key are not trustworthy. Stop before running it half checked.
 */
static void fi_rt_note_readable(const struct fi_module *m)
{
	char why[200];

	if (!m->img.note.present || m->img.note.version == FI_NOTE_VERSION)
		return;
	snprintf(why, sizeof(why), "%s was patched statically by another "
		 "fineibt (record version %u, this runtime reads %u): patch "
		 "the original again", fi_rt_name(m), m->img.note.version,
		 FI_NOTE_VERSION);
	fi_rt_die(why);
}

/*
 * Rewrite @m into the process mode (or leave it, when there is no work).
 * @keep: fi_patch_keeps' answer for @m if fi_rt_keeps_all asked it (1,
 * 0), else -1.
 */
static void fi_rt_take(struct fi_module *m, signed char keep)
{
	struct fi_patch_opts o = {
		.cfg = fi_rt()->cfg, .key = fi_rt()->key, .dethunk = true,
	};
	struct fi_patch_stats st = { 0 };
	int err = 0;

	m->cfg = fi_rt()->cfg;
	m->rehash_key = fi_rt()->key;
	/* Asked already: no record of its own, nothing from the cache. */
	if (keep > 0) {
		fi_rt_report(m, NULL, "kept");
		return;
	}
	if (m->img.note.present) {
		fi_rt_note_readable(m);
		fi_rt_take_static(m);
		return;
	}
	/* Unchecked calls keep their thunks' coarse check (coarse.h). */
	o.coarse = fi_patch_coarse(&m->img, &o.cfg);
	/* Its text rewritten once for every process of the user. */
	if (fi_cache_take(m)) {
		m->patched = true;
		fi_rt_report(m, NULL, "mapped from the cache, in");
		return;
	}
	/* kcfi without rand: the compiler's bytes are the mode already,
	 * unless an empty-parentheses definition needs its hash (knr.c) or
	 * a stock module's layout is not ours (docs/compat.md), or checked
	 * sites call through checking thunks (made direct: checked calls never
	 * pay the coarse check too). */
	if (keep < 0 && fi_patch_keeps(&m->img, &o)) {
		fi_rt_report(m, NULL, "kept");
		return;
	}
	if (o.cfg.flags & FINEIBT_F_BHI) {
		err = fi_live_stubs_for(&m->img, &o.bhi_args);
		if (err == -EACCES)
			fi_say("fineibt: warning: %s: no BHI stubs: memory "
			       "may not become executable "
			       "(MemoryDenyWriteExecute); bhi dropped for this "
			       "module\n", fi_rt_name(m));
		else if (err)
			fi_say("fineibt: warning: %s: no BHI stubs within "
			       "reach (%s); bhi dropped for this module\n",
			       fi_rt_name(m), strerror(-err));
		if (err)
			o.cfg.flags &= ~FINEIBT_F_BHI;
	}
	err = fi_live_patch(&m->img, &o, &st);
	if (err == -EBADMSG) {
		/* The copy did not verify: something wrote into it. */
		fi_say("fineibt: error: %s: the rewritten copy of its text "
		       "changed while it was written (another thread wrote "
		       "into it); rewrite abandoned, left in kCFI form\n",
		       fi_rt_name(m));
	} else if (err == -ENOTSUP && fi_image_stock(&m->img)) {
		/* fi_build_fineibt: no ENDBR to put the v6.18 poison on. */
		fi_say("fineibt: warning: %s: cannot rewrite: a stock kCFI "
		       "module without ENDBRs (build it with "
		       "-fcf-protection=branch: the v6.18 set's FineIBT "
		       "preamble traps in one at func+0); left as compiled, "
		       "its indirect calls into rewritten code trap\n",
		       fi_rt_name(m));
	} else if (err) {
		fi_say("fineibt: warning: %s: cannot rewrite (%s); left in "
		       "kCFI form\n", fi_rt_name(m), strerror(-err));
	}
	if (err) {
		m->cfg.mode = FINEIBT_MODE_KCFI;
		m->cfg.flags &= FINEIBT_F_WARN;
		return;
	}
	m->cfg = o.cfg;
	m->bhi_args = (o.cfg.flags & FINEIBT_F_BHI) ? o.bhi_args : 0;
	m->patched = true;
	fi_rt_report(m, &st, "rewritten to");
}

/*
 * Will fi_rt_take leave every module of @fresh (@n, maybe none) as
 * compiled: the mode kcfi without rand, no module with a record of its
 * own (patched statically) or a cache entry to map, and fi_patch_keeps
 * true for each?
 * Then the takes write nothing and rewrite nothing (a report under
 * FINEIBT_VERBOSE at most), and the scan's window stays open through
 * them for the registration: one window instead of two (two
 * rt_sigprocmask and an fstat fewer). The walks fi_patch_keeps may make
 * (the K&R scan) are reads of the image only. @keep[i]: its answer for
 * each module asked, -1 for the others (fi_rt_take asks them itself).
 */
static bool fi_rt_keeps_all(struct fi_module *const *fresh, size_t n,
			    signed char *keep)
{
	const struct fineibt_config cfg = fi_rt()->cfg;
	bool all = fi_cache_idle();

	memset(keep, -1, n);
	if (!n || !all)
		return all;
	if (cfg.mode != FINEIBT_MODE_KCFI || (cfg.flags & FINEIBT_F_RAND))
		return false;
	for (size_t i = 0; i < n && all; i++) {
		struct fi_patch_opts o = { .cfg = cfg };

		if (fresh[i]->img.note.present)
			return false;
		o.coarse = fi_patch_coarse(&fresh[i]->img, &o.cfg);
		keep[i] = fi_patch_keeps(&fresh[i]->img, &o);
		all = keep[i];
	}
	return all;
}

/*
 * Publish @m, taken by fi_rt_take: called inside the scan's registration
 * window, after every module of the scan is rewritten (one window for all).
 * If it cannot be, the coarse check's bitmap of its entries, for its
 * record, or NULL (rtcoarse.c: then none of its addresses is an entry).
 */
static const uint64_t *fi_rt_register(struct fi_module *m)
{
	const uint64_t *cbits = NULL;
	int err = fi_rt_add_module(m);

	if (err && err != -EEXIST)
		fi_say("fineibt: warning: %s: cannot register (%s); its "
		       "CFI failures will not be decoded (they stay "
		       "fatal)\n", fi_rt_name(m), strerror(-err));
	/* "Stay fatal" holds only while the read-only record covers its text. */
	if (err && err != -EEXIST && m->patched &&
	    (!fi_rt_rewritten_at(m->text_lo) || !fi_rt_rewritten_at(m->text_hi - 1)))
		fi_rt_die("a module's record changed while it was written "
			  "(another thread wrote into the runtime's scratch)");
	if (err && err != -EEXIST)
		cbits = fi_coarse_keep(&m->img, m->text_lo, m->text_hi,
				       m->cfg.mode == FINEIBT_MODE_FINEIBT);
	/* The registered copy has the sites: ours would be private memory
	 * kept for nothing (m stays, as the module's key). */
	if (!err) {
		fi_image_close(&m->img);
		memset(&m->img, 0, sizeof(m->img));
	}
	return cbits;
}

/* --------------------------------------------------------------- start */

/*
 * A module rewritten by `fineibt patch` cannot change its mode or key;
 * every other module must match it or calls between them fail their
 * checks. So the first such module found at start-up sets the process's
 * mode and key.
 */
static void fi_rt_adopt_note(struct fi_module **mods, size_t n,
			     struct fineibt_config *cfg,
			     struct fineibt_key *key, bool secure)
{
	unsigned int debug = cfg->flags & FINEIBT_F_DEBUG;
	char want[64], got[64];

	for (size_t i = 0; i < n; i++) {
		const struct fi_note *note = &mods[i]->img.note;

		if (!note->present)
			continue;
		fi_rt_note_readable(mods[i]);
		cfg->flags &= ~FINEIBT_F_DEBUG;
		/* Said when FINEIBT_CFI asked for another mode, or verbosely:
		 * not on every run of a program nobody asked anything of. */
		if (memcmp(&note->cfg, cfg, sizeof(*cfg)) &&
		    ((getenv("FINEIBT_CFI") && *getenv("FINEIBT_CFI")) ||
		     fi_verbose_on())) {
			fineibt_config_str(cfg, want, sizeof(want));
			fineibt_config_str(&note->cfg, got, sizeof(got));
			fi_say("fineibt: note: %s was patched statically "
			       "(%s); the process uses that mode, not %s\n",
			       fi_rt_name(mods[i]), got, want);
		}
		*cfg = note->cfg;
		cfg->flags |= debug;	/* diagnostics stay the process's */
		/* Never weaker in a privileged process (fi_rt_static_warn). */
		if (secure)
			cfg->flags &= ~FINEIBT_F_WARN;
		*key = note->key;
		return;
	}
}

/*
 * FINEIBT_SEQ=v4|v6.18: the sequence set (docs/sequences.md). Neither set
 * is weaker than the other, so a privileged process honours it too.
 */
static void fi_rt_seq(struct fineibt_config *cfg)
{
	const char *seq = getenv("FINEIBT_SEQ");
	char shown[33];
	size_t i;

	if (!seq || !*seq || fi_seq_apply(seq, strlen(seq), cfg) >= 0)
		return;
	/* From the environment: no terminal escapes on stderr. */
	for (i = 0; seq[i] && i < sizeof(shown) - 1; i++)
		shown[i] = seq[i] >= 0x20 && seq[i] < 0x7f ? seq[i] : '?';
	shown[i] = '\0';
	fi_say("fineibt: ignoring FINEIBT_SEQ='%s': unknown sequence set "
	       "(v4, v6.18)\n", shown);
}

/*
 * cfi=debug (the kernel's): from here on start-up is verbose (a line per
 * module with its counts, the start-up time), and this summary goes first.
 * @ibt: what auto found (1 user IBT, 0 none), -1 when the mode was given.
 */
static void fi_rt_debug_config(const struct fineibt_config *cfg,
			       bool have_arity, int ibt, size_t n)
{
	char mode[64];

	fi_verbose_set(true);
	fineibt_config_str(cfg, mode, sizeof(mode));
	fi_say("fineibt: cfi=debug: mode %s; user IBT %s; sequence set %s; "
	       "arity %s; hashes %s; %zu kCFI modules found\n", mode,
	       ibt > 0 ? "enabled (test hook " FI_USER_IBT_TEST_HOOK ")" :
	       ibt ? "not asked (mode given)" : "none (auto = kcfi)",
	       cfg->flags & FINEIBT_F_SEQ_V618 ? "v6.18" : "v4",
	       have_arity ? "present" : "absent (bhi unavailable)",
	       cfg->flags & FINEIBT_F_RAND ? "randomised" : "as compiled", n);
}

static void fi_rt_config(bool have_arity, struct fi_module **mods, size_t n)
{
	/*
	 * In a privileged (AT_SECURE: setuid, setgid, capabilities) process
	 * the environment is the less privileged caller's: the words that
	 * weaken protection are refused, the others honoured
	 * (docs/protection.md). Mode and key live in locals until they go
	 * to the read-only state.
	 */
	const char *env = getenv("FINEIBT_CFI");
	bool secure = getauxval(AT_SECURE) != 0;
	struct fineibt_config cfg;
	struct fineibt_key key = { 0 };
	char msgs[FI_MSG_MAX];
	int ibt;

	msgs[0] = '\0';
	if (!secure && fi_rt_unanchored()) {
		secure = true;
		if (env && *env)
			fi_say("fineibt: a SIGILL handler is installed but no "
			       "fineibt runtime anchor is published (dlmopen "
			       "namespace): FINEIBT_CFI is read as in a "
			       "privileged process\n");
	}
	fi_parse_cfi_secure(env && *env ? env : "auto", have_arity, secure,
			    &cfg, msgs, sizeof(msgs));
	if (msgs[0] && write(STDERR_FILENO, msgs, strlen(msgs)) < 0)
		msgs[0] = '\0';
	fi_rt_seq(&cfg);
	/* Asked only when it matters (the test hook is a getenv). */
	ibt = cfg.mode == FINEIBT_MODE_AUTO ? fi_user_ibt(secure) : -1;
	fi_resolve_auto(&cfg, ibt > 0);
	/* The user's key when the process may share text (cacheuse.c). */
	if (!fi_cache_settle(&cfg, secure, mods, n, &key) &&
	    (cfg.flags & FINEIBT_F_RAND) && fineibt_random_key(&key)) {
		fi_say("fineibt: warning: no random key (getrandom "
		       "failed); hashes are not randomised\n");
		cfg.flags &= ~FINEIBT_F_RAND;
	}
	fi_rt_adopt_note(mods, n, &cfg, &key, secure);
	fi_rt_set_config(&cfg, &key, have_arity);
	fi_rt_wipe(&key, sizeof(key));
	fi_logsink_open(secure);
	if (cfg.flags & FINEIBT_F_DEBUG)
		fi_rt_debug_config(&cfg, have_arity, ibt, n);
}

/* A stock module waits for the loader before its veneers (stockven.c). */
static bool fi_rt_sven_due;
static void fi_rt_adopt(const struct fi_rt_found *f, size_t n,
			unsigned long long subs);

/*
 * The end of start-up, inside the first scan's registration window (one
 * window for all of it): the SIGILL handler, active, sealed, the entry
 * points a second instance calls, and libc's dlopen (not in an early
 * start: libc is not initialised yet; dlhook.c's constructor does it).
 */
static void fi_rt_finish(void)
{
	int err;

	if (!fi_rt_early)
		fi_variant_check();
	err = fi_trap_install();

	if (err)
		fi_say("fineibt: warning: cannot install the SIGILL handler "
		       "(%s); CFI failures will not be reported\n",
		       strerror(-err));
	/* Active, and start-up is over: mode and key are final
	 * (docs/protection.md). */
	fi_rt_seal_active();
	if (fi_variant.early_forget)
		fi_variant.early_forget();
	fi_rt_publish(&(const struct fi_rt_self){
		.adopt = fi_rt_adopt, .sigaction = fi_variant.sigaction,
		.jit_register = fi_jit_register_local,
		.jit_unregister = fi_jit_unregister_local,
	});
	if (!fi_rt_early && fi_variant.dlopen_prime)
		fi_variant.dlopen_prime();
}

/*
 * The shared text cache before the scan opens its new modules (@news, over
 * fi_found): at the first scan, with the mode the environment asks for
 * (fi_rt_config settles it once every module is open; a module patched
 * statically may change it), quietly: fi_rt_config says what it refuses.
 * Not inlined: its buffers are gone before the modules are rewritten
 * (a thread with a 16 KiB stack may dlopen).
 */
static __attribute__((noinline)) void
fi_rt_cache_begin(const uint64_t *news)
{
	const char *env, *seq;
	bool secure;
	struct fineibt_config cfg;
	char msgs[FI_MSG_MAX];

	if (fi_rt_started) {
		fi_cache_scan_begin(fi_found, fi_nfound, news, NULL, false);
		return;
	}
	env = getenv("FINEIBT_CFI");
	seq = getenv("FINEIBT_SEQ");
	secure = getauxval(AT_SECURE) != 0 || fi_rt_unanchored();
	fi_parse_cfi_secure(env && *env ? env : "auto", true, secure, &cfg,
			    msgs, sizeof(msgs));
	if (seq && *seq)
		fi_seq_apply(seq, strlen(seq), &cfg);
	fineibt_resolve_auto(&cfg);
	fi_cache_scan_begin(fi_found, fi_nfound, news, &cfg, secure);
}

/*
 * The rest of the scan area's page after this scan's arrays (from @end),
 * lent to the cache's lookup for the pagemap's entries: the scan wrote
 * its first modules on that page, so it is mapped, and reading into it
 * takes no fault of its own (src/load/cacheuse.c).
 */
static void fi_rt_cache_lend(void *end)
{
	uintptr_t at = ((uintptr_t)end + 7) & ~(uintptr_t)7;
	uintptr_t page = ((uintptr_t)fi_scan.bytes | 4095) + 1;
	uintptr_t lim = (uintptr_t)(fi_scan.bytes + FI_SCAN_BYTES);

	if (lim > page)
		lim = page;
	fi_cache_lend(at < lim ? (uint64_t *)at : NULL,
		      at < lim ? (lim - at) / 8 : 0);
}

/*
 * The start from libfineibt.so's constructor (every module relocated),
 * its state written in place (fi_rt_window_alone_fd): dlsym & co. bound,
 * the stock veneers made, and the PLT pass run inside start-up's last
 * window, in that order (the pass reads the slots the first two write).
 * That window proved the process alone with every signal blocked, so
 * the pass needs no window of its own (a signal mask pair, unshare,
 * fstat). The scan leaves that window open (fi_rt_links_due: true) and
 * the start closes it (fi_rt_links_close) from a shallow frame: the
 * pass's ~5 KiB of stack on top of the scan's would reach stack pages
 * start-up touches nowhere else. Anywhere else, after the window, as
 * before.
 */
static sigset_t fi_rt_links_mask;	/* the mask the window restores */
static bool fi_rt_links_open;

static bool fi_rt_links_due(bool own)
{
	return own && !fi_rt_early && fi_rt_window_alone_fd() >= 0;
}

static __attribute__((noinline)) void fi_rt_links_close(size_t nfresh)
{
	if (!fi_rt_links_open)
		return;
	fi_rt_links_open = false;
	if ((nfresh || fi_rt_bind_due) && fi_variant.bind_interposers)
		fi_rt_bind_due = fi_variant.bind_interposers();
	if (nfresh || fi_rt_sven_due)
		fi_rt_sven_due = fi_stock_veneers();
	if (!fi_rt_bind_due) {
		fi_plt_walk(false);	/* written in place: wr.inplace */
		fi_rt_plt_done = true;
	}
	fi_rt_batch_end(&fi_rt_links_mask);
	/* A copy of a stack sigset_t: its words past the kernel's 8 bytes
	 * held stack contents (code addresses), wiped with it. */
	sigemptyset(&fi_rt_links_mask);
}

/*
 * Walk the loaded modules, open the new ones, and (after the first walk
 * has settled the mode) rewrite and register every new kCFI module.
 * Returns the number of modules taken.
 */
static size_t fi_rt_scan_found(bool own)
{
	/* In the scan's area after the modules found (scans hold
	 * fi_rt_mutex), not on the stack of whatever thread dlopens. */
	struct fi_rt_seen *fi_scan_new =
		(void *)(fi_scan.bytes + fi_nfound * sizeof(struct fi_rt_found));
	struct fi_module **fi_scan_mod = (void *)(fi_scan_new + fi_nfound);
	struct fi_module **fresh = fi_scan_mod + fi_nfound;
	/* Bitmaps: over the record (alive, stale) and over fi_found (news). */
	static uint64_t alive[FI_SEEN_WORDS], stale[FI_SEEN_WORDS];
	static uint64_t news[FI_SEEN_WORDS];
	static signed char keep[FI_MAX_MODULES];
	size_t nfresh = 0, nnew;
	bool have_arity = false, kept = false, linked = false;
	const struct fi_runtime *batch;
	sigset_t bsaved;

	memset(alive, 0, sizeof(alive));
	memset(stale, 0, sizeof(stale));
	memset(news, 0, sizeof(news));
	for (size_t i = 0; i < fi_nfound; i++) {
		long k = fi_rt_seen_find(fi_found[i].key);

		if (k >= 0 && fi_rt_same(&fi_rt()->seen[k], &fi_found[i])) {
			alive[k / 64] |= 1ull << (k % 64);
			continue;
		}
		if (k >= 0)
			stale[k / 64] |= 1ull << (k % 64);
		news[i / 64] |= 1ull << (i % 64);
	}
	/* Stale entries first: a new module may have taken their key. */
	fi_rt_forget_dead(alive, stale);
	fi_rt_cache_lend(fresh + fi_nfound);
	fi_rt_cache_begin(news);
	nnew = 0;
	for (size_t i = 0; i < fi_nfound; i++) {
		const struct fi_rt_found *f = &fi_found[i];
		/* The trap handler's table is the limit (FI_MAX_MODULES). */
		struct fi_module *m = NULL;

		if (!(news[i / 64] & (1ull << (i % 64))))
			continue;
		fi_scan_new[nnew] = (struct fi_rt_seen){ .key = 0 };
		if (nfresh < FI_MAX_MODULES)
			m = fi_rt_open(f, &fi_scan_new[nnew]);
		fi_scan_new[nnew] = (struct fi_rt_seen){
			.key = f->key, .size = f->size,
			.fbase = fi_rt_found_fbase(f),
			.lo = m ? m->text_lo : 0, .hi = m ? m->text_hi : 0,
			.ctraps = fi_scan_new[nnew].ctraps,
			.cbits = fi_scan_new[nnew].cbits,
			.nctraps = fi_scan_new[nnew].nctraps,
		};
		fi_scan_mod[nnew++] = m;
		if (m)
			nfresh++;
	}
	/*
	 * Recorded, in one window, before any byte of them is rewritten;
	 * what does not fit in the record is left alone. The first scan
	 * settles the mode in the same window (quick work only until
	 * fi_rt_batch_end: no patching). A walk that found nothing new
	 * opens no window at all (the crt hooks and constructors that run
	 * after start-up, a dlopen of an object already loaded).
	 */
	batch = nnew || !fi_rt_started ? fi_rt_batch_begin(&bsaved) : NULL;
	if (nnew)
		nnew = fi_rt_seen_add(fi_scan_new, nnew);
	nfresh = 0;
	for (size_t i = 0; i < nnew; i++) {
		if (fi_scan_mod[i]) {
			fi_scan_new[nfresh] = fi_scan_new[i];
			fresh[nfresh++] = fi_scan_mod[i];
			have_arity |= fi_rt_has_arity(fi_scan_mod[i]);
		}
	}
	if (!fi_rt_started)
		fi_rt_config(have_arity, fresh, nfresh);
	memset(keep, -1, sizeof(keep));
	/* Nothing to rewrite: the window stays open (fi_rt_keeps_all), as
	 * when every module is mapped from the cache (fi_cache_all_hit):
	 * one window, two rt_sigprocmask and an fstat fewer. */
	if (batch)
		kept = fi_rt_keeps_all(fresh, nfresh, keep) ||
		       fi_cache_all_hit(fresh, nfresh);
	/* At start-up the registration window below always follows: a
	 * block written in place stays so across the rewrite (only the
	 * runtime's code runs meanwhile; its start re-asks that the process
	 * is alone), sealed at that window's end. */
	if (batch && !kept && !fi_rt_started)
		fi_rt_inplace_hold(true);
	if (batch && !kept)
		fi_rt_batch_end(&bsaved);
	/* Rewritten (or mapped from the cache) with the state read-only ... */
	for (size_t i = 0; i < nfresh; i++)
		fi_rt_take(fresh[i], keep[i]);
	fi_cache_finish();
	/*
	 * ... then all registered in one window, with their fingerprints
	 * (read from the registered copies) and, at start-up, the rest of
	 * start-up's updates (fi_rt_finish).
	 */
	if (!kept)
		batch = nfresh || !fi_rt_started ?
			fi_rt_batch_begin(&bsaved) : NULL;
	for (size_t i = 0; i < nfresh; i++) {
		const struct fi_module *c;

		fi_scan_new[i].cbits = fi_rt_register(fresh[i]);
		c = fi_rt_module_of(fresh[i]);
		fi_scan_new[i].mod = c;
		fi_scan_new[i].fp = fi_rt_fingerprint_first(c ? c : fresh[i]);
	}
	if (nfresh)
		fi_rt_seen_set(fi_scan_new, nfresh);
	if (!fi_rt_started) {
		fi_rt_finish();
		linked = batch && fi_rt_links_due(own);
		fi_rt_inplace_hold(false);
	}
	if (linked) {
		/* Only the kernel's part: the rest of @bsaved is whatever the
		 * stack held (code addresses), never copied into .bss. */
		sigemptyset(&fi_rt_links_mask);
		memcpy(&fi_rt_links_mask, &bsaved, 8);
		fi_rt_links_open = true;
	} else if (batch) {
		fi_rt_batch_end(&bsaved);
	}
	/* dlsym_so.c (shared runtime only): bind kCFI modules' dlsym,
	 * dlvsym and dlopen to ours whatever the lookup order; true if one
	 * must wait (another thread is still loading it). */
	if (own && !linked && (nfresh || fi_rt_bind_due) &&
	    fi_variant.bind_interposers) {
		if (fi_rt_early)
			fi_rt_bind_due = true;
		else
			fi_rt_bind_due = fi_variant.bind_interposers();
	}
	/* Typed veneers for stock kCFI modules' libc pointers (stockven.c). */
	if (own && !linked && (nfresh || fi_rt_sven_due))
		fi_rt_sven_due = fi_rt_early || fi_stock_veneers();
	fi_subs_last = fi_subs_now;
	/* fi_found and fi_scan_new are scratch: leave no code address
	 * behind in writable memory once the walk is done (the record is
	 * in the read-only state; docs/protection.md). */
	memset(fi_found, 0, fi_nfound * sizeof(fi_found[0]));
	fi_nfound = 0;
	memset(fi_scan_new, 0, nnew * sizeof(fi_scan_new[0]));
	return nfresh;
}

/* This instance's walk: dl_iterate_phdr reports the caller's namespace. */
static void fi_rt_walk(void)
{
	fi_nfound = 0;
	dl_iterate_phdr(fi_rt_walk_cb, NULL);
}

static size_t fi_rt_scan(void)
{
	fi_rt_walk();
	return fi_rt_scan_found(true);
}

/*
 * The primary's side of one runtime per process (src/rt/rtone.c): another
 * instance's walk of its namespace, taken as this one's own. Modules of
 * other namespaces are not in @f: they stay, unless dladdr confirms they
 * are gone (fi_rt_forget_dead), as after any walk.
 */
static void fi_rt_adopt(const struct fi_rt_found *f, size_t n,
			unsigned long long subs)
{
	int saved_errno = errno;

	pthread_mutex_lock(&fi_rt_mutex);
	if (n > FI_MAX_SEEN)
		n = FI_MAX_SEEN;
	memcpy(fi_found, f, n * sizeof(*f));
	fi_nfound = n;
	fi_subs_now = subs;
	fi_rt_scan_found(false);
	pthread_mutex_unlock(&fi_rt_mutex);
	errno = saved_errno;
}

/*
 * A second instance (dlmopen namespace): walk this namespace and hand it
 * to the process's runtime; nothing else of this instance runs.
 */
static void fi_rt_forward(const struct fi_runtime *p)
{
	fi_rt_walk();
	p->self.adopt(fi_found, fi_nfound, fi_subs_now);
	memset(fi_found, 0, fi_nfound * sizeof(fi_found[0]));
	fi_nfound = 0;
}

static uint64_t fi_rt_now_us(void)
{
	struct timespec ts;

	/* Not clock_gettime(): src/seq/rawsys.h. */
	if (fi_sys3(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/*
 * alloc.c (shared runtime): what the runtime took from libc's heap so
 * far. Below FI_TRIM_MIN the freed discovery arrays are a few pages, and
 * trimming gives the heap's top back only for the program's first malloc
 * to take it again (two brk calls for nothing in a small program).
 */
#define FI_TRIM_MIN	(64 * 1024)

static bool fi_rt_trim_worth(void)
{
	return !fi_variant.alloc_libc_bytes ||
	       fi_variant.alloc_libc_bytes() >= FI_TRIM_MIN;
}

/* ownlibc.c (shared runtime): the FINEIBT_* variables in one walk while
 * the first start runs (each getenv walked the environment). */
static void fi_rt_env_startup(bool on)
{
	if (fi_variant.env_startup)
		fi_variant.env_startup(on);
}

static void fi_rt_start_locked(void)
{
	const struct fi_runtime *primary = fi_rt_primary();
	const char *verbose, *cfi;
	uint64_t t0;
	size_t nmods;

	/*
	 * Another instance is the process's runtime: defer to it before
	 * anything here reads the environment (src/rt/rtone.c).
	 */
	if (primary) {
		fi_rt_started = true;
		fi_rt_defer(primary);
		fi_rt_forward(primary);
		return;
	}
	fi_rt_env_startup(true);
	verbose = secure_getenv("FINEIBT_VERBOSE");
	fi_verbose_set(verbose && strcmp(verbose, "0"));
	/* The start-up time is printed only with FINEIBT_VERBOSE or
	 * cfi=debug: no clock read (a system call under valgrind, strace or
	 * seccomp) otherwise. */
	cfi = getenv("FINEIBT_CFI");
	t0 = fi_verbose_on() || (cfi && strstr(cfi, "debug")) ? fi_rt_now_us() : 0;
	/*
	 * The sites discovery found were freed once registered: give their
	 * pages back rather than leave them dirty in the heap (freed chunks
	 * below glibc's trim threshold stay; for a program of a thousand
	 * functions they were a third of the runtime's private memory).
	 */
	nmods = fi_rt_scan();
	fi_rt_links_close(nmods);
	/* Whatever happened between start-up's windows: nothing writable. */
	fi_rt_inplace_seal();
	if (nmods && fi_rt_trim_worth())
		malloc_trim(0);
	fi_rt_started = true;
	fi_rt_publish_anchor();
	fi_rt_env_startup(false);
	if (fi_verbose_on()) {
		size_t nseen = 0;

		nmods = 0;
		for (size_t i = 0; i < fi_rt()->nseen; i++) {
			nseen += fi_rt()->seen[i].key != 0;
			nmods += fi_rt()->seen[i].lo != 0;
		}
		if (t0)
			fi_say("fineibt: runtime started in %llu us (%zu kCFI "
			       "modules of %zu)\n",
			       (unsigned long long)(fi_rt_now_us() - t0),
			       nmods, nseen);
		else
			fi_say("fineibt: runtime started (%zu kCFI modules "
			       "of %zu)\n", nmods, nseen);
		/* docs/protection.md, "Writing the state through the kernel". */
		if (fi_rt()->wr.how == FI_RT_WINDOWS)
			fi_say("fineibt: the runtime state is written through "
			       "windows (/proc/self/mem: %s): a write racing "
			       "one may land\n", strerror(fi_rt()->wr.err));
		/* mseal refused (before Linux 6.10, or a unit's filter with
		 * SystemCallErrorNumber=): read-only all the same. */
		if (fi_rt()->wr.how == FI_RT_KERNEL && !fi_rt()->wr.sealed)
			fi_say("fineibt: the runtime state is read-only but "
			       "not sealed (mseal refused: Linux before 6.10, "
			       "or a system-call filter): an mprotect could "
			       "make it writable again\n");
	}
}

/*
 * The key also passes through vector registers (struct copies, memcpy of
 * a module): a signal delivered later would have the kernel save them in
 * its frame on the stack, where fi_rt_scrub_stack has already been. They
 * are caller-saved, so clearing them on the way out costs nothing else.
 */
#define FI_VREGS "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", \
	"xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", \
	"xmm15"

__attribute__((target("avx512f"))) static void fi_rt_clear_zmm(void)
{
	__asm__ volatile("vpxord %%zmm16, %%zmm16, %%zmm16\n\t"
			 "vpxord %%zmm17, %%zmm17, %%zmm17\n\t"
			 "vpxord %%zmm18, %%zmm18, %%zmm18\n\t"
			 "vpxord %%zmm19, %%zmm19, %%zmm19\n\t"
			 "vpxord %%zmm20, %%zmm20, %%zmm20\n\t"
			 "vpxord %%zmm21, %%zmm21, %%zmm21\n\t"
			 "vpxord %%zmm22, %%zmm22, %%zmm22\n\t"
			 "vpxord %%zmm23, %%zmm23, %%zmm23\n\t"
			 "vpxord %%zmm24, %%zmm24, %%zmm24\n\t"
			 "vpxord %%zmm25, %%zmm25, %%zmm25\n\t"
			 "vpxord %%zmm26, %%zmm26, %%zmm26\n\t"
			 "vpxord %%zmm27, %%zmm27, %%zmm27\n\t"
			 "vpxord %%zmm28, %%zmm28, %%zmm28\n\t"
			 "vpxord %%zmm29, %%zmm29, %%zmm29\n\t"
			 "vpxord %%zmm30, %%zmm30, %%zmm30\n\t"
			 "vpxord %%zmm31, %%zmm31, %%zmm31\n\t"
			 "vzeroall" ::: "memory", FI_VREGS);
}

__attribute__((target("avx"))) static void fi_rt_clear_ymm(void)
{
	__asm__ volatile("vzeroall" ::: "memory", FI_VREGS);
}

/*
 * Which registers exist (and are enabled by the kernel): from what the
 * loader found at start (glibc 2.33's <sys/platform/x86.h>), not from
 * __builtin_cpu_supports, whose compiler-rt constructor ran a dozen
 * CPUID instructions (each a VM exit on a virtual machine) and touched
 * a .bss page of its own at every start of every process.
 */
#if __GLIBC_PREREQ(2, 33)
#include <sys/platform/x86.h>
#define FI_HAS_AVX512F()	CPU_FEATURE_ACTIVE(AVX512F)
#define FI_HAS_AVX()		CPU_FEATURE_ACTIVE(AVX)
#else
/* Initialised here: the early start runs before compiler-rt's constructor. */
#define FI_HAS_AVX512F()	(__builtin_cpu_init(), __builtin_cpu_supports("avx512f"))
#define FI_HAS_AVX()		(__builtin_cpu_init(), __builtin_cpu_supports("avx"))
#endif

static void fi_rt_clear_vregs(void)
{
	if (FI_HAS_AVX512F())
		fi_rt_clear_zmm();
	else if (FI_HAS_AVX())
		fi_rt_clear_ymm();
	else
		__asm__ volatile("pxor %%xmm0, %%xmm0\n\tpxor %%xmm1, %%xmm1\n\t"
				 "pxor %%xmm2, %%xmm2\n\tpxor %%xmm3, %%xmm3\n\t"
				 "pxor %%xmm4, %%xmm4\n\tpxor %%xmm5, %%xmm5\n\t"
				 "pxor %%xmm6, %%xmm6\n\tpxor %%xmm7, %%xmm7\n\t"
				 "pxor %%xmm8, %%xmm8\n\tpxor %%xmm9, %%xmm9\n\t"
				 "pxor %%xmm10, %%xmm10\n\tpxor %%xmm11, %%xmm11\n\t"
				 "pxor %%xmm12, %%xmm12\n\tpxor %%xmm13, %%xmm13\n\t"
				 "pxor %%xmm14, %%xmm14\n\tpxor %%xmm15, %%xmm15"
				 ::: "memory", FI_VREGS);
}

/*
 * Patch every module not patched yet; start the runtime first if needed.
 * Called by each module's crt (before its constructors) and by our own
 * constructor. Exported (libfineibt.so) so the crt of other modules finds it.
 */
FINEIBT_API void fineibt_rt_hook(void)
{
	/*
	 * The program may read errno at main without setting it (C says it
	 * is zero at start-up), and the dlopen hook runs between dlopen and
	 * its caller: whatever failed along the way here (an mmap hint that
	 * was taken, a file probe) must not show.
	 */
	int saved_errno = errno;
	bool took = true;

	pthread_mutex_lock(&fi_rt_mutex);
	if (!fi_rt_started)
		fi_rt_start_locked();
	else if (fi_rt()->primary)
		fi_rt_forward(fi_rt()->primary);
	else
		took = fi_rt_scan() != 0;
	pthread_mutex_unlock(&fi_rt_mutex);
	/* The key went through the patching code only if a module was taken. */
	if (took)
		fi_rt_scrub_stack();
	/*
	 * On every exit, not only after patching: protect_key found a copy
	 * of a registered module, key included, in the stack of a statically
	 * linked program whose second call (libfineibt's own constructor)
	 * took nothing; clearing here on that call too removed it, and with
	 * glibc's AVX copies disabled it did not occur at all.
	 */
	fi_rt_clear_vregs();
	errno = saved_errno;
}

/*
 * The start before any constructor (early.c, shared runtime only): the
 * same as the hook, minus what needs every module relocated.
 */
void fi_rt_scan_prefault(void)
{
	fi_prefault_pages(&fi_scan, 1);
}

void fi_rt_start_early(bool unrun)
{
	/* No constructor has run, what the runtime calls is bound into libc
	 * and the loader, and no module relocated so far has an IFUNC
	 * resolver of the program (early.c, @unrun): the first window may
	 * write in place. */
	if (unrun)
		fi_rt_first_unrun();
	fi_rt_early = true;
	fineibt_rt_hook();
	fi_rt_early = false;
	if (fi_verbose_on())
		fi_say("fineibt: runtime started before any constructor (a "
		       "kCFI module without the crt hook is loaded)\n");
}

/*
 * libfineibt.so: runs before the constructors of every module that
 * depends on it. In libfineibt.a the executable's preinit entry has
 * already done the work and this finds nothing new. After an
 * early start, every module is relocated now: bind what waited.
 */
__attribute__((constructor(FI_CTOR_RUNTIME))) static void fi_rt_ctor(void)
{
	/* Read unlocked: the first start is the one caller that may still
	 * find it false, and a stale true only skips the check. */
	if (!__atomic_load_n(&fi_rt_started, __ATOMIC_RELAXED) &&
	    fi_variant.first_unrun && fi_variant.first_unrun())
		fi_rt_first_unrun();
	fineibt_rt_hook();
	pthread_mutex_lock(&fi_rt_mutex);
	fi_variant_check();	/* after an early start; else done already */
	if (fi_rt_bind_due && fi_variant.bind_interposers)
		fi_rt_bind_due = fi_variant.bind_interposers();
	if (fi_rt_sven_due)
		fi_rt_sven_due = fi_stock_veneers();
	pthread_mutex_unlock(&fi_rt_mutex);
	/* Start-up, or the dlopen that loaded libfineibt.so (rtlive.h,
	 * fi_live_before_main: which one, only the static runtime knows). */
	fi_rt_plt_pass_as(true);
}
