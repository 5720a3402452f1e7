// SPDX-License-Identifier: MIT
/*
 * Direct PLT entries (docs/protection.md, "A writable GOT"). A kCFI module
 * linked without full RELRO (partial RELRO, -z lazy, -z norelro: a stock
 * Debian link run with `fineibt run`) keeps its .got.plt writable, on the
 * same page as its data, so it cannot be sealed; its PLT jumps through
 * those slots (jmp *slot(%rip)), and no mode checks a PLT jump. Once a
 * slot is bound, its entry is rewritten into an absolute jump to the
 * slot's value (insn.h, "PLT entries"): the slot is then read by no code,
 * and a write there redirects nothing.
 *
 * When: a slot holds its final value once the loader bound it (BIND_NOW,
 * which `fineibt run` asks for with LD_BIND_NOW, or a lazy binding done
 * since); it does not change after that (glibc never rebinds a bound
 * slot; dlopen(RTLD_GLOBAL) does not interpose on it). The runtime itself
 * rebinds some (dlsym_so.c: dlsym/dlvsym/dlopen; sigbind.c: the
 * SIGILL-installing functions after an RTLD_DEEPBIND dlopen): such a slot
 * is taken only when it holds what the runtime wants there. Every slot is
 * judged on its own value, read once, so this may run while a module is
 * still being relocated (another thread's dlopen): a slot still holding
 * its link-time value points into the module's own PLT (no bias) or below
 * the module's link-time extent (a biased module, not relocated yet); a
 * slot bound by the loader points into an executable segment of a loaded
 * module. Anything else is left as it is, and a later pass (the next
 * dlopen) looks again.
 *
 * How: the entries are found by their exact bytes (insn.h) from PLT0,
 * whose two GOT references name DT_PLTGOT: entry k of .plt pushes k and
 * jumps to PLT0, and its slot is .rela.plt[k]'s. An IBT PLT's .plt.sec
 * entry (ENDBR + jmp *slot) has no room for the movabs: it jumps to its
 * lazy .plt entry, which gets the absolute jump (nothing else reaches it
 * once the slot is bound). With other tasks about, the pages holding the
 * entries are copied, rewritten, sealed read-execute, compared with the
 * text (identical but for PLT entries in their direct form:
 * fi_plt_copy_ok, which trusts neither the copy nor the list of fixes,
 * both writable), then moved over it with mremap, as rtlive.c does: no
 * page is ever writable and executable, and another thread sees the old
 * page or the new one. Alone, with signals blocked, in start-up (after
 * it an io_uring completion could change the fixes between their check
 * and their store: rtlive.h, fi_live_unverified_ok), they
 * are written in place (fi_plt_commit_inplace): through the runtime's
 * /proc/self/mem descriptor, the text read-execute throughout; without
 * one, between two mprotects (read-write and not executable, then
 * read-execute).
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "foreign.h"
#include "insn.h"
#include "ldenv.h"
#include "plt.h"
#include "rawsys.h"
#include "rtlive.h"
#include "runtime.h"
#include "variant.h"

#define FI_PAGE		4096ULL
/* How far past .plt a .plt.sec may start (a .plt.got may sit between). */
#define FI_PLT_SEC_GAP	(64ULL * 1024)

struct fi_plt_fix {
	uint64_t at;
	union {
		uint8_t bytes[FI_PLT_ENTRY];
		uint64_t q[FI_PLT_ENTRY / 8];	/* stored by words in place */
	};
};

struct fi_pltmod {
	uint64_t bias, span, got, relro_lo, relro_hi;
	const ElfW(Rela) *jmprel;
	size_t n;
	const ElfW(Sym) *sym;
	const char *str;
	uint64_t xlo, xhi;	/* the executable segment holding PLT0 */
	uint64_t plt0, sec;	/* sec: an IBT PLT's .plt.sec, or 0 */
	bool now;		/* DF_BIND_NOW / DF_1_NOW: never bound lazily */
	bool nolazy;		/* GOT[2] empty when read: no resolver (yet) */
	bool textrel;		/* the loader writes its text while relocating */
};

/*
 * GOT[2]: the loader's lazy resolver, filled in (before any slot gets a
 * lazy value) only when it binds the module lazily. Still 0: every slot
 * bound so far was bound at relocation (LD_BIND_NOW, dlopen RTLD_NOW,
 * ld.so itself). Read again after the slots (fi_plt_rewrite): a module
 * another thread is relocating lazily may set it meanwhile.
 */
static uint64_t fi_plt_got2(const struct fi_pltmod *m)
{
	return __atomic_load_n(&((const uint64_t *)(uintptr_t)m->got)[2],
			       __ATOMIC_ACQUIRE);
}

/* glibc relocates d_ptr in a writable .dynamic, not in a read-only one. */
static uint64_t fi_plt_ptr(uint64_t bias, uint64_t v)
{
	return v < bias ? v + bias : v;
}

static bool fi_plt_read_dyn(const struct dl_phdr_info *info,
			    struct fi_pltmod *m)
{
	const ElfW(Dyn) *d = NULL;
	uint64_t b = info->dlpi_addr, sz = 0;

	memset(m, 0, sizeof(*m));
	m->bias = b;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_DYNAMIC)
			d = (const void *)(uintptr_t)(b + ph->p_vaddr);
		else if (ph->p_type == PT_GNU_RELRO) {
			m->relro_lo = b + ph->p_vaddr;
			m->relro_hi = m->relro_lo + ph->p_memsz;
		} else if (ph->p_type == PT_LOAD &&
			   ph->p_vaddr + ph->p_memsz > m->span)
			m->span = ph->p_vaddr + ph->p_memsz;
	}
	for (; d && d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_PLTGOT: m->got = fi_plt_ptr(b, d->d_un.d_ptr); break;
		case DT_JMPREL:
			m->jmprel = (const void *)(uintptr_t)fi_plt_ptr(b, d->d_un.d_ptr);
			break;
		case DT_PLTRELSZ: sz = d->d_un.d_val; break;
		case DT_FLAGS:
			m->now |= !!(d->d_un.d_val & DF_BIND_NOW);
			m->textrel |= !!(d->d_un.d_val & DF_TEXTREL);
			break;
		case DT_TEXTREL: m->textrel = true; break;
		case DT_FLAGS_1: m->now |= !!(d->d_un.d_val & DF_1_NOW); break;
		case DT_SYMTAB:
			m->sym = (const void *)(uintptr_t)fi_plt_ptr(b, d->d_un.d_ptr);
			break;
		case DT_STRTAB:
			m->str = (const void *)(uintptr_t)fi_plt_ptr(b, d->d_un.d_ptr);
			break;
		default: break;
		}
	}
	m->n = sz / sizeof(ElfW(Rela));
	m->nolazy = m->got && !fi_plt_got2(m);
	return m->got && m->jmprel && m->n && m->sym && m->str;
}

static uint64_t fi_plt_slot(const struct fi_pltmod *m, size_t k)
{
	return m->bias + m->jmprel[k].r_offset;
}

static bool fi_plt_writable(const struct fi_pltmod *m, uint64_t slot)
{
	return slot < m->relro_lo || slot + 8 > m->relro_hi;
}

/*
 * PLT0: the 16-byte-aligned spot of an executable segment naming m->got;
 * only @hint (a link-time address found before) when it still is one.
 */
static bool fi_plt_find0(const struct dl_phdr_info *info, struct fi_pltmod *m,
			 uint64_t hint)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo, hi, end;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		lo = (m->bias + ph->p_vaddr + 15) & ~15ULL;
		end = hi = m->bias + ph->p_vaddr + ph->p_filesz;
		if (hint) {
			if (hint + m->bias < lo || hint + m->bias >= hi)
				continue;
			lo = hint + m->bias;
			hi = lo + 2 * FI_PLT_ENTRY < end ? lo + 2 * FI_PLT_ENTRY : end;
		}
		for (uint64_t ip = lo; ip + 2 * FI_PLT_ENTRY <= hi; ip += 16) {
			const uint8_t *p = (const uint8_t *)(uintptr_t)ip;

			if (p[0] == 0xff && p[1] == 0x35 &&
			    fi_match_plt0(p, ip, m->got)) {
				m->plt0 = ip;
				m->xlo = m->bias + ph->p_vaddr;
				m->xhi = end;
				return true;
			}
		}
	}
	return false;
}

static const uint8_t *fi_plt_at(uint64_t ip)
{
	return (const uint8_t *)(uintptr_t)ip;
}

/* An IBT PLT's .plt.sec: its entry 0 names slot 0 (or is direct already). */
static uint64_t fi_plt_find_sec(const struct fi_pltmod *m)
{
	uint64_t from = m->plt0 + FI_PLT_ENTRY * (m->n + 1), to, slot, lazy;

	to = from + FI_PLT_SEC_GAP;
	for (uint64_t s = from; s + FI_PLT_ENTRY * m->n <= m->xhi && s < to;
	     s += 16) {
		if (fi_match_plt_sec(fi_plt_at(s), s, &slot) &&
		    slot == fi_plt_slot(m, 0))
			return s;
		if (fi_match_plt_sec_direct(fi_plt_at(s), s, &lazy) &&
		    lazy == m->plt0 + FI_PLT_ENTRY)
			return s;
	}
	return 0;
}

/* Inside [lo, hi) of some executable range in @xr? */
static bool fi_plt_in_code(uint64_t v, const uint64_t (*xr)[2], size_t nxr)
{
	for (size_t i = 0; i < nxr; i++) {
		if (v >= xr[i][0] && v < xr[i][1])
			return true;
	}
	return false;
}

/*
 * The final target of slot @k (value @v), or 0 when @v is not one (see
 * the top of the file).
 */
static uint64_t fi_plt_target(const struct fi_pltmod *m, size_t k, uint64_t v,
			      const uint64_t (*xr)[2], size_t nxr)
{
	const ElfW(Rela) *r = &m->jmprel[k];
	uint64_t end = m->sec ? m->sec + FI_PLT_ENTRY * m->n :
				m->plt0 + FI_PLT_ENTRY * (m->n + 1);
	const char *name;
	void *want = NULL;

	if (!v || (v >= m->plt0 && v < end) || (m->bias && v < m->span) ||
	    !fi_plt_in_code(v, xr, nxr))
		return 0;
	if (ELF64_R_TYPE(r->r_info) == R_X86_64_IRELATIVE)
		return v;
	if (ELF64_R_TYPE(r->r_info) != R_X86_64_JUMP_SLOT)
		return 0;
	name = m->str + m->sym[ELF64_R_SYM(r->r_info)].st_name;
	/* The SIGILL family's interposers, and (shared runtime only) the
	 * value dlsym_so.c binds dlsym, dlvsym and dlopen to. */
	want = fi_variant.sig_own(name);
	if (!want && fi_variant.bind_want)
		want = fi_variant.bind_want(name);
	return !want || (uint64_t)(uintptr_t)want == v ? v : 0;
}

enum fi_plt_entry { FI_PLT_LEFT, FI_PLT_DONE, FI_PLT_FIX };

/*
 * Entry @j of the PLT: already direct, left as it is, or fixed (its new
 * bytes in @fx: one entry, two for an IBT PLT). The entry names its
 * relocation by the index it pushes (@k), which need not be @j: GNU ld
 * orders a shared object's IRELATIVE relocations after the others but
 * gives them entries in slot order (libc's string functions).
 */
static enum fi_plt_entry fi_plt_entry(const struct fi_pltmod *m, size_t j,
				      const uint64_t (*xr)[2], size_t nxr,
				      bool irel_only, struct fi_plt_fix *fx,
				      size_t *nfx)
{
	uint64_t e = m->plt0 + FI_PLT_ENTRY * (j + 1), s;
	uint64_t slot, plt0, t, sec = m->sec ? m->sec + FI_PLT_ENTRY * j : 0;
	uint32_t k;

	if (e + FI_PLT_ENTRY > m->xhi)
		return FI_PLT_LEFT;
	if (fi_match_plt_direct(fi_plt_at(e), &t))
		return FI_PLT_DONE;
	if (fi_match_plt_lazy(fi_plt_at(e), e, false, &slot, &k, &plt0)) {
		if (k >= m->n || slot != fi_plt_slot(m, k) || plt0 != m->plt0)
			return FI_PLT_LEFT;
		sec = 0;
	} else if (!sec || sec + FI_PLT_ENTRY > m->xhi ||
		   !fi_match_plt_lazy(fi_plt_at(e), e, true, &slot, &k, &plt0) ||
		   k >= m->n || plt0 != m->plt0 ||
		   !fi_match_plt_sec(fi_plt_at(sec), sec, &slot) ||
		   slot != fi_plt_slot(m, k)) {
		return FI_PLT_LEFT;
	}
	s = fi_plt_slot(m, k);
	if (!fi_plt_writable(m, s) || (irel_only &&
	    ELF64_R_TYPE(m->jmprel[k].r_info) != R_X86_64_IRELATIVE))
		return FI_PLT_LEFT;
	t = fi_plt_target(m, k, __atomic_load_n((const uint64_t *)(uintptr_t)s,
						__ATOMIC_ACQUIRE), xr, nxr);
	if (!t)
		return FI_PLT_LEFT;
	if (sec) {
		fx[*nfx].at = sec;
		if (!fi_emit_plt_sec_direct(fx[*nfx].bytes, sec, e))
			return FI_PLT_LEFT;
		(*nfx)++;
	}
	fx[*nfx].at = e;
	fi_emit_plt_direct(fx[*nfx].bytes, t);
	(*nfx)++;
	return FI_PLT_FIX;
}

static int fi_plt_fix_cmp(const void *a, const void *b)
{
	const struct fi_plt_fix *x = a, *y = b;

	return x->at < y->at ? -1 : x->at > y->at;
}

/*
 * Block @at (16-byte aligned) changed from @old to @new: must be entry j
 * of the PLT going from its lazy form to the direct one (to code), or an
 * IBT PLT's .plt.sec entry j going to a jump to lazy entry j.
 */
static bool fi_plt_change_ok(const struct fi_plt_layout *l, uint64_t at,
			     const uint8_t *old, const uint8_t *new,
			     const uint64_t (*xr)[2], size_t nxr)
{
	uint64_t first = l->plt0 + FI_PLT_ENTRY, slot, plt0, t;
	uint32_t k;

	if (l->sec && at >= l->sec && at < l->sec + FI_PLT_ENTRY * l->n)
		return fi_match_plt_sec(old, at, &slot) &&
		       fi_match_plt_sec_direct(new, at, &t) &&
		       t == first + (at - l->sec);
	if (at < first || at >= first + FI_PLT_ENTRY * l->n)
		return false;
	return fi_match_plt_lazy(old, at, l->sec != 0, &slot, &k, &plt0) &&
	       plt0 == l->plt0 && k < l->n &&
	       fi_match_plt_direct(new, &t) && fi_plt_in_code(t, xr, nxr);
}

bool fi_plt_copy_ok(const struct fi_plt_layout *l, const uint8_t *text,
		    const uint8_t *copy, uint64_t lo, uint64_t len, size_t nfx,
		    const uint64_t (*xr)[2], size_t nxr)
{
	size_t changed = 0;

	if ((lo | len) & (FI_PLT_ENTRY - 1))
		return false;
	for (uint64_t o = 0; o < len; o += FI_PLT_ENTRY) {
		if (!memcmp(copy + o, text + o, FI_PLT_ENTRY))
			continue;
		if (!fi_plt_change_ok(l, lo + o, text + o, copy + o, xr, nxr))
			return false;
		changed++;
	}
	return changed == nfx;
}

/*
 * The pages [*@lo, *@hi) holding the fixes @fx (sorted here), inside the
 * executable segment of PLT0.
 */
static int fi_plt_pages(const struct fi_pltmod *m, struct fi_plt_fix *fx,
			size_t nfx, uint64_t *lo, uint64_t *hi)
{
	/* In entry order already unless an IBT PLT put .plt.sec fixes first. */
	for (size_t i = 1; i < nfx; i++) {
		if (fx[i].at < fx[i - 1].at) {
			qsort(fx, nfx, sizeof(*fx), fi_plt_fix_cmp);
			break;
		}
	}
	*lo = fx[0].at & ~(FI_PAGE - 1);
	*hi = (fx[nfx - 1].at + FI_PLT_ENTRY + FI_PAGE - 1) & ~(FI_PAGE - 1);
	if (*lo < (m->xlo & ~(FI_PAGE - 1)) ||
	    *hi > ((m->xhi + FI_PAGE - 1) & ~(FI_PAGE - 1)))
		return -ERANGE;
	return 0;
}

/* Copy, rewrite, seal, verify, move: the text is never writable. */
static int fi_plt_commit(const struct fi_pltmod *m, struct fi_plt_fix *fx,
			 size_t nfx, const uint64_t (*xr)[2], size_t nxr)
{
	uint64_t lo, hi, len;
	uint8_t *copy;
	int err = fi_plt_pages(m, fx, nfx, &lo, &hi);

	if (err)
		return err;
	len = hi - lo;
	copy = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (copy == MAP_FAILED)
		return -errno;
	memcpy(copy, fi_plt_at(lo), len);
	for (size_t i = 0; i < nfx; i++)
		memcpy(copy + (fx[i].at - lo), fx[i].bytes, FI_PLT_ENTRY);
	if (mprotect(copy, len, PROT_READ | PROT_EXEC))
		err = -errno;
	else if (!fi_plt_copy_ok(&(struct fi_plt_layout){ m->plt0, m->sec, m->n },
				 fi_plt_at(lo), copy, lo, len, nfx, xr, nxr))
		err = -EBADMSG;
	/* The pages stop being the file's to the kernel: the runtime keeps
	 * which file bytes they are (fi_export_real: a plug-in's export on
	 * them; without a record, judged by the kernel's answer alone). */
	else if ((void)fi_rt_copy_note(lo, hi),
		 mremap(copy, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
			(void *)(uintptr_t)lo) == MAP_FAILED)
		err = -errno;
	if (err)
		munmap(copy, len);
	return err;
}

/*
 * Through the kernel (@mem, this process's /proc/self/mem): the fixes in
 * runs, each run's span (the fixes and the text between them, as it is)
 * built on this stack and written by one pwrite, as a debugger writes a
 * breakpoint: the kernel copies the page on write (the one private page a
 * copy would have made) and the mapping stays read-execute throughout.
 * libc's and ld.so's entries are one run each (Debian 12's libc: 848
 * bytes; the buffer is kept small for a dlopen on a small thread stack).
 * A run holds no page without a fix, so no page is copied for nothing.
 * -EAGAIN when the first write fails (nothing written: the mprotect path
 * then); a later failure leaves the runs before it written (each entry
 * whole: a 16-byte entry never straddles a page), which the next pass
 * finds direct.
 */
#define FI_PLT_RUN	1024
static int fi_plt_commit_mem(int mem, const struct fi_plt_fix *fx, size_t nfx)
{
	uint8_t buf[FI_PLT_RUN];

	for (size_t i = 0, j; i < nfx; i = j + 1) {
		uint64_t lo = fx[i].at, hi;
		long err;

		for (j = i; j + 1 < nfx; j++) {
			uint64_t next = fx[j + 1].at;

			if (next + FI_PLT_ENTRY - lo > sizeof(buf) ||
			    (next & ~(FI_PAGE - 1)) >
			    (fx[j].at & ~(FI_PAGE - 1)) + FI_PAGE)
				break;
		}
		hi = fx[j].at + FI_PLT_ENTRY;
		memcpy(buf, fi_plt_at(lo), hi - lo);
		for (size_t k = i; k <= j; k++)
			memcpy(buf + (fx[k].at - lo), fx[k].bytes, FI_PLT_ENTRY);
		err = fi_rt_pwrite(mem, buf, hi - lo, fi_plt_at(lo));
		if (err)
			return i ? (int)err : -EAGAIN;
	}
	return 0;
}

/*
 * Alone, signals blocked (fi_plt_pass): the fixes written where the
 * entries are. Each fix is first checked against the text as the copy
 * would be (fi_plt_change_ok: a lazy entry made direct to code, or a
 * .plt.sec entry made to jump to its lazy entry; distinct, in order).
 * With the runtime's /proc/self/mem descriptor (@mem >= 0, every start-up
 * where the state is written through the kernel): fi_plt_commit_mem, no
 * page ever writable in this process. Otherwise the pages go read-write,
 * not executable, and read-execute again (direct system calls, rawsys.h);
 * in between this thread runs only the stores below, no call: no code of
 * those pages (the PLT, or a function beside it) runs while they are not
 * executable, and no other task or handler exists. The module must not
 * hold this code then (-static-fineibt with partial RELRO: the copy).
 * No copy, no mremap either way: the mapping stays whole, and the only
 * private page the written one (breaking copy-on-write of a page of the
 * file's, as a copy would have made one anonymous page).
 * -EAGAIN: nothing written (take the copy).
 */
static int fi_plt_commit_inplace(const struct fi_pltmod *m,
				 struct fi_plt_fix *fx, size_t nfx,
				 const uint64_t (*xr)[2], size_t nxr, int mem)
{
	const struct fi_plt_layout l = { m->plt0, m->sec, m->n };
	uint64_t lo, hi, self = (uint64_t)(uintptr_t)fi_plt_commit_inplace;
	int err = fi_plt_pages(m, fx, nfx, &lo, &hi);

	if (err)
		return err;
	for (size_t i = 0; i < nfx; i++) {
		if ((i && fx[i].at <= fx[i - 1].at) ||
		    !fi_plt_change_ok(&l, fx[i].at, fi_plt_at(fx[i].at),
				      fx[i].bytes, xr, nxr))
			return -EBADMSG;
	}
	if (mem >= 0 && (err = fi_plt_commit_mem(mem, fx, nfx)) != -EAGAIN)
		return err;
	if ((self >= m->xlo && self < m->xhi) || (self >= lo && self < hi))
		return -EAGAIN;
	if (fi_sys3(SYS_mprotect, (long)lo, (long)(hi - lo),
		    PROT_READ | PROT_WRITE))
		return -EAGAIN;
	/* The copy-on-write of the pages in one system call, not a fault
	 * at the first store to each (docs/bench.md, "Fixed costs: the
	 * faults a start can take"). */
	fi_prefault_pages((const void *)(uintptr_t)lo, (hi - lo) / FI_PAGE);
	for (size_t i = 0; i < nfx; i++) {
		volatile uint64_t *d = (volatile uint64_t *)(uintptr_t)fx[i].at;

		d[0] = fx[i].q[0];
		d[1] = fx[i].q[1];
	}
	/* Left read-write, the module's code could not run. */
	if (fi_sys3(SYS_mprotect, (long)lo, (long)(hi - lo),
		    PROT_READ | PROT_EXEC))
		fi_rt_die("cannot make a rewritten PLT executable again");
	return 0;
}

/*
 * Did the process start with LD_BIND_NOW (non-empty)? The loader read it
 * from the initial environment, then bound every slot of every module at
 * load, those of later dlopens too (core/ldenv.c reads it there, not
 * through getenv: the program may have changed its environment since).
 * Not trusted to have been honoured in a privileged process.
 */
static bool fi_plt_env_now(void)
{
	return (fi_ldenv() & (FI_LDENV_BIND_NOW | FI_LDENV_SECURE)) ==
	       FI_LDENV_BIND_NOW;
}

/*
 * A lazy entry being bound by another thread: that thread read the lazy
 * value and is about to run the entry's push and jmp (bytes 6..15), which
 * a direct entry overwrites. Only when no slot of @m is ever bound lazily,
 * or no other thread runs (signals blocked here, so not even ours:
 * @alone), can no thread stand in those bytes. Otherwise only IRELATIVE
 * entries are taken: the loader resolves those at relocation, before any
 * code can reach them, so no thread ever read a lazy value from their
 * slots (libc's string functions, in a process that starts a thread
 * before our constructor).
 */
static bool fi_plt_quiet(const struct fi_pltmod *m, bool alone)
{
	return m->now || m->nolazy || fi_plt_env_now() || alone;
}

/* The entries of @m to fix, made in one rewrite of their pages. */
static void fi_plt_rewrite(const struct fi_pltmod *m, const uint64_t (*xr)[2],
			   size_t nxr, const struct fi_plt_pass *p,
			   struct fi_plt_result *r)
{
	size_t cap = 2 * m->n, nfx = 0, bytes = 0;
	struct fi_plt_fix *fx;
	sigset_t all, old;
	bool held = p && p->held, alone;

	if (held && p->cap / sizeof(*fx) >= cap) {
		fx = p->buf;
	} else {
		bytes = (cap * sizeof(*fx) + FI_PAGE - 1) & ~(FI_PAGE - 1);
		fx = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (fx == MAP_FAILED) {
			r->err = -errno;
			return;
		}
	}
	/* No handler of the program runs, and no site is opened, from the
	 * first byte read to the move. */
	if (!held) {
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
	}
	fi_foreign_text_lock();
	/* Asked once: with signals blocked, no task can appear but from
	 * this thread, which starts none. */
	alone = held ? p->alone : fi_live_alone();
	r->busy = !fi_plt_quiet(m, alone);
	for (size_t k = 0; k < m->n; k++)
		r->slots += fi_plt_writable(m, fi_plt_slot(m, k));
	/* Entry j, by position (the relocation it names may differ). */
	for (size_t j = 0; j < m->n && r->slots; j++) {
		switch (fi_plt_entry(m, j, xr, nxr, r->busy, fx, &nfx)) {
		case FI_PLT_DONE: r->direct++; break;
		case FI_PLT_FIX: r->made++; break;
		default: break;
		}
	}
	/*
	 * Quiet only because GOT[2] was empty: still empty after every slot
	 * was read, no slot had a lazy value (the loader fills GOT[2] first),
	 * so none was bound lazily. Filled meanwhile: left for a later pass.
	 */
	if (r->made && m->nolazy && !m->now && fi_plt_got2(m) &&
	    !fi_plt_env_now() && !alone) {
		r->made = 0;
		r->busy = true;
	}
	if (r->made) {
		/* In place only where nothing else can write the text or
		 * the fixes between their check and their store (rtlive.h:
		 * after main, an io_uring completion can; a libfineibt.so
		 * started by the program's dlopen is after main). */
		int err = held && alone &&
			  (fi_live_unverified_ok() ||
			   (p->startup && fi_live_before_main())) ?
			  fi_plt_commit_inplace(m, fx, nfx, xr, nxr, p->mem) :
			  -EAGAIN;

		r->inplace = !err;
		if (err == -EAGAIN)
			err = fi_plt_commit(m, fx, nfx, xr, nxr);
		r->err = err;
	}
	if (r->err)
		r->made = 0;
	r->direct += r->made;
	fi_foreign_text_unlock();
	if (!held)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* The targets were code addresses: the pages go back unread, or
	 * the pass's buffer (heap, the caller's) is wiped where used (and
	 * the slot after: an entry left half made is written there). */
	if (bytes)
		munmap(fx, bytes);
	else
		fi_rt_wipe(fx, (nfx < cap ? nfx + 1 : cap) * sizeof(*fx));
}

bool fi_plt_any_writable(const struct dl_phdr_info *info)
{
	struct fi_pltmod m;

	if (!fi_plt_read_dyn(info, &m))
		return false;
	for (size_t k = 0; k < m.n; k++) {
		if (fi_plt_writable(&m, fi_plt_slot(&m, k)))
			return true;
	}
	return false;
}

void fi_plt_direct(const struct dl_phdr_info *info, const uint64_t (*xr)[2],
		   size_t nxr, uint64_t *hint, const struct fi_plt_pass *p,
		   struct fi_plt_result *r)
{
	struct fi_pltmod m;
	bool any = false;

	memset(r, 0, sizeof(*r));
	if (!fi_plt_read_dyn(info, &m))
		return;
	for (size_t k = 0; k < m.n && !any; k++)
		any = fi_plt_writable(&m, fi_plt_slot(&m, k));
	if (!any)
		return;
	/*
	 * Text relocations: another thread's loader may be writing this
	 * text (made writable) right now; a copy moved over it would undo
	 * its writes. Left, and named.
	 */
	if (m.textrel) {
		r->textrel = true;
		for (size_t k = 0; k < m.n; k++)
			r->slots += fi_plt_writable(&m, fi_plt_slot(&m, k));
		return;
	}
	if (*hint && !fi_plt_find0(info, &m, *hint))
		*hint = 0;
	if (!m.plt0 && !fi_plt_find0(info, &m, 0)) {
		r->unknown = true;
		for (size_t k = 0; k < m.n; k++)
			r->slots += fi_plt_writable(&m, fi_plt_slot(&m, k));
		return;
	}
	*hint = m.plt0 - m.bias;
	/* An IBT PLT: its lazy entry 0 starts with ENDBR (or is direct). */
	if (fi_plt_at(m.plt0 + FI_PLT_ENTRY)[0] != 0xff)
		m.sec = fi_plt_find_sec(&m);
	fi_plt_rewrite(&m, xr, nxr, p, r);
}
