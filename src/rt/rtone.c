// SPDX-License-Identifier: MIT
/*
 * One runtime per process. dlmopen(LM_ID_NEWLM, ...) of a library built
 * by fineibt-cc loads a second copy of libfineibt.so into the new link-map
 * namespace, with state of its own; left alone it would read FINEIBT_CFI
 * from the (writable) environment long after start-up, rewrite its
 * namespace in that mode and take SIGILL from the process's runtime.
 *
 * So the process's runtime (the primary: the first instance to start)
 * publishes where its read-only state lives, through an anchor that no
 * write to memory can forge: a mapping of an empty memfd whose name, held
 * by the kernel and shown in /proc/self/maps, carries the state's address
 * ("/memfd:fineibt-rt:ADDR:ABI"). Making or changing one takes system
 * calls. A later instance looks for it before it reads anything of its
 * configuration; if it is there, the state it names must lie in read-only
 * memory and carry the same ABI, and the instance defers to it: it never
 * takes a mode, a key or the SIGILL handler of its own, hands its
 * namespace's modules to the primary (which rewrites them into the
 * process's mode and registers them with its trap handler) and its
 * namespace's SIGILL installs to the primary's interposer. An anchor that
 * does not verify ends the process: running the namespace's code in a
 * mode nobody checked is what this is here to prevent.
 *
 * Cost: the primary pays three system calls once (memfd_create, mmap,
 * close) and one mapping. A starting instance reads /proc/self/maps only
 * when SIGILL already has a handler (the primary's is always there; at
 * an ordinary start-up nothing is, and nothing is read), and asks about
 * SIGILL only when the start path could not say that it is the first
 * (fi_rt_first_unrun: the initial namespace alone, no constructor run).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rawsys.h"
#include "runtime.h"
#include "strbuf.h"

#define FI_ONE_PREFIX	"/memfd:fineibt-rt:"
#define FI_ONE_PAGE	4096

void fi_rt_publish(const struct fi_rt_self *calls)
{
	struct fi_rt_self self = *calls;
	const struct fi_runtime *rt;
	sigset_t saved;

	self.abi = FI_RT_ABI;
	self.size = sizeof(*rt);
	self.found_size = sizeof(struct fi_rt_found);
	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return;
	fi_rt_put(&rt->self, &self, sizeof(self));
	fi_rt_write_end(&saved);
}

void fi_rt_publish_anchor(void)
{
	char name[64];
	struct fi_strbuf b;
	void *p;
	int fd;

	/* "fineibt-rt:ADDR:ABI", hexadecimal both (no stdio at start-up). */
	fi_strbuf_init(&b, name, sizeof(name), 0);
	fi_strbuf_str(&b, &FI_ONE_PREFIX[sizeof("/memfd:") - 1]);
	fi_strbuf_xdigits(&b, (uint64_t)(uintptr_t)fi_rt(), 1);
	fi_strbuf_char(&b, ':');
	fi_strbuf_xdigits(&b, FI_RT_ABI, 1);
	fd = (int)fi_sys3(SYS_memfd_create, (long)name, MFD_CLOEXEC, 0);
	if (fd < 0)
		return;
	/* Never touched: an empty file, mapped only for its name. */
	p = fi_raw_mmap(NULL, FI_ONE_PAGE, PROT_NONE, MAP_PRIVATE, fd, 0);
	fi_raw_close(fd);
	(void)p;
}

/* Does some handler (not the default, not ignore) hold SIGILL? */
static bool fi_one_sigill_taken(void)
{
	struct { void *handler; unsigned long flags; void *restorer; uint64_t mask; }
		k = { 0 };

	if (fi_sys6(SYS_rt_sigaction, SIGILL, 0, (long)&k, sizeof(k.mask), 0, 0))
		return false;
	return k.handler != (void *)SIG_DFL && k.handler != (void *)SIG_IGN;
}

/* "ADDR:ABI" (hexadecimal both) after the anchor's prefix. */
static bool fi_one_name(const char *s, unsigned long *addr, unsigned int *abi)
{
	uint64_t a, b;

	if (!fi_maps_num(&s, 16, &a) || *s++ != ':' ||
	    !fi_maps_num(&s, 16, &b) || b > UINT_MAX)
		return false;
	*addr = (unsigned long)a;
	*abi = (unsigned int)b;
	return true;
}

/*
 * The anchor's state address and ABI, and whether [addr, addr + size)
 * lies in mappings that are readable and not writable. Returns the number
 * of anchors seen (>1: the process has more than one primary). @buf: the
 * maps file (fi_maps_read), its lines cut in place by the first pass.
 */
static int fi_one_scan(char *buf, unsigned long *addr, unsigned int *abi,
		       bool *ro)
{
	const size_t plen = strlen(FI_ONE_PREFIX);
	unsigned long want = 0, lo = 0, hi = 0;
	struct fi_vma m;
	const char *path;
	char *at = buf;
	size_t nlines = 0;
	int anchors = 0;

	*ro = false;
	while (fi_vma_next(&at, &m, &path)) {
		nlines++;
		if (m.hi && !strncmp(path, FI_ONE_PREFIX, plen) &&
		    fi_one_name(path + plen, addr, abi))
			anchors++;
	}
	if (anchors != 1)
		return anchors;
	/* Second pass: the state's pages, contiguous and read-only. The
	 * lines are NUL-terminated now: step over each terminator. */
	want = *addr;
	at = buf;
	for (size_t i = 0; i < nlines; i++) {
		char *line = at;

		at += strlen(at) + 1;
		if (!fi_vma_next(&line, &m, &path) || !m.hi)
			continue;
		if (m.hi <= want || m.lo >= want + sizeof(struct fi_runtime))
			continue;
		if (!m.r || m.w || (hi && m.lo != hi))
			return anchors;
		if (!hi)
			lo = m.lo;
		hi = m.hi;
	}
	*ro = lo <= want && hi >= want + sizeof(struct fi_runtime);
	return anchors;
}

/* Set by fi_rt_primary: SIGILL taken, no anchor, another namespace. */
static bool fi_one_unanchored;

bool fi_rt_unanchored(void)
{
	return fi_one_unanchored;
}

/* Is this copy of the runtime outside the base link-map namespace? */
static bool fi_one_other_ns(void)
{
	Dl_info info;
	void *lm = NULL;
	Lmid_t ns = LM_ID_BASE;

	if (!dladdr1((void *)(uintptr_t)fi_rt_primary, &info, &lm,
		     RTLD_DL_LINKMAP) || !lm || dlinfo(lm, RTLD_DI_LMID, &ns))
		return false;
	return ns != LM_ID_BASE;
}

const struct fi_runtime *fi_rt_primary(void)
{
	const struct fi_runtime *p;
	unsigned long addr = 0;
	unsigned int abi = 0;
	bool ro = false;
	char *maps;
	int n, fd;

	/*
	 * The start path said no code of the program has run but the
	 * loader's (fi_rt_first_unrun): the initial namespace is the only
	 * one, every module is libfineibt.so, one of its dependencies, or
	 * one that needs it, so no other instance exists to have published
	 * an anchor; whatever holds SIGILL (an IFUNC resolver's handler)
	 * the install takes as the previous action. Not asked (a system
	 * call at every start). A dlopen that brings this copy in, next to
	 * a -static-fineibt executable's runtime, is never "first"
	 * (early.c, fi_early_initial): asked there, and deferred to it.
	 */
	if (fi_rt_first_unrun_said() || !fi_one_sigill_taken())
		return NULL;
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	maps = fi_maps_read(fd);
	close(fd);
	if (!maps)
		return NULL;
	n = fi_one_scan(maps, &addr, &abi, &ro);
	free(maps);
	/*
	 * A handler holds SIGILL but no anchor is there: a primary that
	 * could not publish one (memfd_create refused, e.g. by seccomp) is
	 * indistinguishable from a program's own handler. In a dlmopen
	 * namespace, assume the former: the environment is read as in a
	 * privileged process (fi_rt_config), so a rewritten FINEIBT_CFI
	 * cannot weaken the namespace.
	 */
	if (!n) {
		fi_one_unanchored = fi_one_other_ns();
		return NULL;
	}
	p = (const struct fi_runtime *)addr;
	if (n > 1 || !ro || abi != FI_RT_ABI || p == fi_rt())
		fi_rt_die("another fineibt runtime runs in this process "
			  "(dlmopen) and its state cannot be verified");
	if (p->self.abi != FI_RT_ABI || p->self.size != sizeof(*p) ||
	    p->self.found_size != sizeof(struct fi_rt_found) ||
	    !p->self.adopt || !p->self.sigaction || !p->self.jit_register ||
	    !p->self.jit_unregister || !p->sealed)
		fi_rt_die("the process's fineibt runtime is another build "
			  "than the one this namespace loaded (dlmopen)");
	return p;
}

void fi_rt_defer(const struct fi_runtime *p)
{
	const struct fi_runtime *rt;
	sigset_t saved;

	rt = fi_rt_write_begin(&saved);
	if (!rt || FI_RT_PUT(rt->primary, p) || FI_RT_PUT(rt->sealed, true))
		fi_rt_die("cannot record the process's runtime (dlmopen)");
	fi_rt_write_end(&saved);
}
