// SPDX-License-Identifier: MIT
/*
 * After a link: direct calls and jumps into a function skip its ENDBR.
 *
 * -fcf-protection=branch puts an endbr64 at func+0 of every function that
 * may be reached indirectly, and the runtime turns it into a 4-byte nop
 * (the poison, or the BHI arity-1 magic) in the FineIBT modes. A direct
 * call executes it all the same: one instruction per call, the largest
 * part of the steady-state cost in call-heavy programs (lua5.4: ~2% of
 * all instructions, more than the CFI sequences themselves; docs/bench.md).
 *
 * An ENDBR has no effect on a direct branch, so a call/jmp/jcc rel32 that
 * lands on one can land 4 bytes later: func+4 is an instruction boundary
 * in every form func+0 takes (endbr64, the poison, the magic are all one
 * 4-byte instruction). Indirect branches keep going through the preamble
 * and func+0, and nothing that a check depends on moves: call sites,
 * preambles and the thunk calls the runtime matches by target are left
 * alone. Which bytes are branches is never guessed: the link keeps its
 * relocations (--emit-relocs), a rel32 is retargeted only where a
 * R_X86_64_PC32/PLT32 relocation fills the operand of an e8/e9 (call,
 * jmp) or 0f 8x (jcc), and the relocation sections are stripped again
 * afterwards (llvm-objcopy). The target must hold an exact endbr64 and be
 * a function: a kCFI function of the module, or a function symbol that is
 * not one of the indirect thunks.
 *
 * Cost of the pass: one read of the output and an objcopy; see
 * docs/runtime.md ("Direct calls skip the ENDBR") for what it changes for
 * debuggers and tracers (a breakpoint or uprobe at func+0 sees only the
 * indirect calls).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "image.h"
#include "insn.h"

struct fi_direct {
	struct fi_image im;
	int fd;
	const Elf64_Shdr *sh;
	size_t shnum;
	const char *names;
	size_t names_size;
	unsigned int moved, seen;
};

static const Elf64_Shdr *fi_direct_shdrs(struct fi_direct *d)
{
	const struct fi_image *im = &d->im;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)im->file;
	const Elf64_Shdr *ns;

	if (im->file_size < sizeof(*eh) || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !eh->e_shnum || eh->e_shoff > im->file_size ||
	    (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > im->file_size - eh->e_shoff ||
	    eh->e_shstrndx >= eh->e_shnum)
		return NULL;
	d->sh = (const Elf64_Shdr *)(im->file + eh->e_shoff);
	d->shnum = eh->e_shnum;
	ns = &d->sh[eh->e_shstrndx];
	if (ns->sh_offset > im->file_size || ns->sh_size > im->file_size - ns->sh_offset)
		return NULL;
	d->names = (const char *)im->file + ns->sh_offset;
	d->names_size = ns->sh_size;
	return d->sh;
}

static const char *fi_direct_name(const struct fi_direct *d, const Elf64_Shdr *s)
{
	if (s->sh_name >= d->names_size ||
	    !memchr(d->names + s->sh_name, 0, d->names_size - s->sh_name))
		return "";
	return d->names + s->sh_name;
}

/* A relocation section the link kept for us (not .rela.dyn/.rela.plt). */
static bool fi_direct_kept_rela(const Elf64_Shdr *s)
{
	return (s->sh_type == SHT_RELA || s->sh_type == SHT_REL) &&
	       !(s->sh_flags & SHF_ALLOC);
}

/* Is link-time @t a function entry whose ENDBR a direct branch may skip? */
static bool fi_direct_target(const struct fi_image *im, uint64_t t)
{
	const uint8_t *p = fi_image_text(im, t, 8);
	const struct fi_sym *s;

	if (!p || !fi_exact_endbr(p))
		return false;
	for (int r = 0; r < 16; r++) {
		if (im->thunks[r] == t)
			return false;
	}
	if (t == im->bhi_args)
		return false;
	if (fi_image_func(im, t))
		return true;
	s = fi_image_sym(im, t);
	return s && s->addr == t;
}

/* One relocation at link-time @p (the rel32 field). */
static int fi_direct_one(struct fi_direct *d, uint64_t p)
{
	struct fi_image *im = &d->im;
	uint8_t *op = fi_image_text(im, p - 2, 6);
	int32_t rel;
	uint64_t t;

	if (!op)
		return 0;
	/* e8/e9 rel32, or 0f 80..8f rel32; never a cs-prefixed thunk call. */
	if (!(op[1] == 0xe8 || op[1] == 0xe9 ||
	      (op[0] == 0x0f && (op[1] & 0xf0) == 0x80)) || op[0] == 0x2e)
		return 0;
	d->seen++;
	rel = (int32_t)fi_load32(op + 2);
	t = p + 4 + (int64_t)rel;
	if (!fi_direct_target(im, t) || rel > INT32_MAX - 4)
		return 0;
	fi_store32(op + 2, (uint32_t)(rel + 4));
	if (pwrite(d->fd, op + 2, 4, (off_t)(op + 2 - im->file)) != 4)
		return -EIO;
	d->moved++;
	return 0;
}

static int fi_direct_section(struct fi_direct *d, const Elf64_Shdr *rs)
{
	const struct fi_image *im = &d->im;
	const Elf64_Shdr *ts;
	size_t ent = rs->sh_type == SHT_RELA ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel);
	int rc;

	if (rs->sh_info >= d->shnum || rs->sh_offset > im->file_size ||
	    rs->sh_size > im->file_size - rs->sh_offset || rs->sh_entsize != ent)
		return 0;
	ts = &d->sh[rs->sh_info];
	if (!(ts->sh_flags & SHF_EXECINSTR) || !(ts->sh_flags & SHF_ALLOC))
		return 0;
	for (uint64_t off = 0; off + ent <= rs->sh_size; off += ent) {
		Elf64_Rela r;
		uint32_t type;

		memcpy(&r, im->file + rs->sh_offset + off, ent);
		type = ELF64_R_TYPE(r.r_info);
		if (type != R_X86_64_PC32 && type != R_X86_64_PLT32)
			continue;
		/* The field must lie inside the section it relocates. */
		if (r.r_offset < ts->sh_addr + 2 ||
		    r.r_offset + 4 > ts->sh_addr + ts->sh_size)
			continue;
		rc = fi_direct_one(d, r.r_offset);
		if (rc)
			return rc;
	}
	return 0;
}

static const char *fi_objcopy(void)
{
	const char *objcopy = getenv("FINEIBT_CC_OBJCOPY");

	return objcopy && *objcopy ? objcopy : "llvm-objcopy-22";
}

/*
 * Strip the relocation sections --emit-relocs left in @path. An objcopy
 * that cannot be started gets the pass's one warning (the caller's),
 * not an error line of its own: the program is built all the same.
 */
static int fi_direct_strip(const struct fi_direct *d, const char *path,
			   int *spawn_err)
{
	struct fi_argv a = { 0 };
	size_t n = 0;
	int rc;

	fi_argv_add(&a, fi_objcopy());
	for (size_t i = 0; i < d->shnum; i++) {
		if (!fi_direct_kept_rela(&d->sh[i]))
			continue;
		fi_argv_addf(&a, "--remove-section=%s", fi_direct_name(d, &d->sh[i]));
		n++;
	}
	fi_argv_add(&a, path);
	*spawn_err = 0;
	rc = n ? fi_run_try(&a, spawn_err) : 0;
	fi_argv_free(&a);
	return rc;
}

int fi_direct_skip_endbr(const char *path)
{
	struct fi_direct d = { .fd = -1 };
	char err[256];
	int rc, spawn_err = 0;

	rc = fi_image_open(&d.im, path, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "fineibt-cc: warning: %s: %s: direct calls keep "
				"their ENDBR\n", path, err);
		return rc;
	}
	rc = -EINVAL;
	if (!fi_direct_shdrs(&d))
		goto out;
	d.fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (d.fd < 0) {
		rc = -errno;
		goto out;
	}
	rc = 0;
	for (size_t i = 0; i < d.shnum && !rc; i++) {
		if (fi_direct_kept_rela(&d.sh[i]))
			rc = fi_direct_section(&d, &d.sh[i]);
	}
	if (close(d.fd) && !rc)
		rc = -errno;
	d.fd = -1;
	if (!rc && fi_direct_strip(&d, path, &spawn_err))
		rc = -EIO;
	if (fi_verbose)
		fprintf(stderr, "fineibt-cc: %s: %u of %u direct branches skip "
				"an ENDBR\n", path, d.moved, d.seen);
out:
	if (spawn_err)
		fprintf(stderr, "fineibt-cc: warning: %s: direct-call pass: cannot "
			"run %s (%s): the relocation sections it read stay in "
			"the file; set FINEIBT_CC_OBJCOPY\n", path, fi_objcopy(),
			strerror(spawn_err));
	else if (rc)
		fprintf(stderr, "fineibt-cc: warning: %s: direct-call pass: %s\n",
			path, strerror(-rc));
	fi_image_close(&d.im);
	return rc;
}
