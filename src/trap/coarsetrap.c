// SPDX-License-Identifier: MIT
/*
 * The SIGILL side of the coarse check (docs/compat.md, "Calls without a
 * kCFI check: the coarse check"; src/rt/coarse.S).
 *
 * At the ud2 of __fineibt_coarse_<reg> the stack holds, from the top,
 * the caller's rcx and rax (pushed by the check) and the return address
 * of the call that went through the module's thunk (for a tail jump
 * through a thunk: its caller's). The target is in %reg, or in the saved
 * rax / rcx slot for those two.
 *
 * Which call it was is read from the return address: the call through
 * the thunk is the instruction right before it, `2e e8 rel32` (or `e8
 * rel32`) reaching the thunk of that register in that module. Checked
 * against the module's own thunk address (from its index or symbols), so
 * a return address that merely follows some other call is not taken for
 * the site: then it was a tail jump and the site is not known.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>

#include "coarse.h"
#include "coarsetrap.h"
#include "upcall.h"
#include "insn.h"
#include "runtime.h"

/* coarse.S: per register, its ud2, self-relative. */
extern const int32_t fi_coarse_uds[FI_COARSE_NREGS];

#define FI_REG_RAX	0
#define FI_REG_RCX	1
#define FI_REG_RSP	4

static uint64_t fi_coarse_at(const int32_t *tab, int reg)
{
	return (uint64_t)(uintptr_t)tab + (uint64_t)(int64_t)tab[reg];
}

int fi_coarse_trap_reg(uint64_t ip, uint64_t *resume)
{
	for (int reg = 0; reg < FI_COARSE_NREGS; reg++) {
		uint64_t ud = fi_coarse_at(fi_coarse_uds, reg);

		if (ip == ud) {
			*resume = ud + 2;	/* past the ud2: pop, pop, jmp */
			return reg;
		}
	}
	return -1;
}

/* Does the call ending at @ret reach @m's thunk of @reg? Its start, or 0. */
static uint64_t fi_coarse_site(const struct fi_module *m, uint64_t ret, int reg)
{
	uint64_t thunk = m->img.thunks[reg];
	const uint8_t *p;
	int32_t rel;

	if (!thunk || ret - 6 < m->text_lo)
		return 0;
	thunk += m->img.bias;
	p = (const uint8_t *)(uintptr_t)(ret - 6);
	memcpy(&rel, p + 2, sizeof(rel));
	if (p[1] != 0xe8 || ret + (uint64_t)(int64_t)rel != thunk)
		return 0;
	/* cs call rel32 (the driver's flags), or a plain call rel32 */
	return p[0] == 0x2e ? ret - 6 : ret - 5;
}

bool fi_coarse_decode(const struct fi_trap_regs *r, struct fi_trap *t)
{
	const uint64_t *sp = (const uint64_t *)(uintptr_t)r->sp;
	const struct fi_module *m;
	uint64_t resume, ret;
	int reg = fi_coarse_trap_reg(r->ip, &resume);

	if (reg < 0)
		return false;
	ret = sp[2];
	*t = (struct fi_trap){
		.kind = FI_TRAP_COARSE, .resume = resume, .ret = ret,
		.target = reg == FI_REG_RAX ? sp[1] : reg == FI_REG_RCX ? sp[0] :
			  reg == FI_REG_RSP ? r->sp + 16 : r->gpr[reg],
	};
	m = fi_rt_module_at(ret - 1);
	if (m && (t->addr = fi_coarse_site(m, ret, reg)))
		t->site_known = true;
	t->mod = m;
	t->warn = !!((m ? m->cfg.flags : fi_rt()->cfg.flags) & FINEIBT_F_WARN);
	return true;
}

/*
 * A function of a registered module built without kCFI (an object
 * compiled with -fcf-protection but not -fsanitize=kcfi, linked by
 * fineibt-cc: its calls go through the module's thunks too): a symbol
 * exactly at @addr, and an ENDBR there, the landing pad IBT would accept.
 * A kCFI function with an ENDBR is in the table already; one without is
 * no address-taken function.
 */
static bool fi_coarse_naked(const struct fi_module *m, uint64_t addr)
{
	const struct fi_sym *s = fi_image_sym(&m->img, addr - m->img.bias);
	uint32_t v;

	if (!s || s->addr != addr - m->img.bias || addr + 4 > m->text_hi)
		return false;
	memcpy(&v, (const void *)(uintptr_t)addr, sizeof(v));
	return v == FI_ENDBR64_VAL || v == FI_ENDBR32_VAL;
}

bool fi_coarse_take(const struct fi_trap *t)
{
	const struct fi_module *m;
	const ElfW(Sym) *sym = NULL;
	Dl_info info, own;
	uint64_t entry;
	int type;

	if (t->kind == FI_TRAP_COARSE && (m = fi_rt_module_at(t->target)))
		return fi_coarse_naked(m, t->target);

	/* The veneers have their entries in the table: anything else in
	 * their region is not an entry. */
	if (t->kind != FI_TRAP_COARSE || fi_foreign_slot_target(t->target, &entry))
		return false;
	if (!dladdr1((void *)(uintptr_t)t->target, &info, (void **)&sym,
		     RTLD_DL_SYMENT) || !sym || !info.dli_sname ||
	    (uint64_t)(uintptr_t)info.dli_saddr != t->target)
		return false;
	type = ELF64_ST_TYPE(sym->st_info);
	if (type != STT_FUNC || sym->st_shndx == SHN_UNDEF ||
	    fi_flow_primitive(info.dli_sname) ||
	    !fi_export_real(t->target, info.dli_fbase, sym, info.dli_sname, true))
		return false;
	/* The runtime's own exports: its thunks jump to a register. */
	return !dladdr((void *)&fi_coarse_take, &own) ||
	       own.dli_fbase != info.dli_fbase;
}
