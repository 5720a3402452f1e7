/* SPDX-License-Identifier: MIT */
/* Reading memory known to be mapped, from the SIGILL handler (trapmem.h). */
#include <errno.h>

#include "trapmem.h"

size_t fi_trap_span(const struct fi_module *m, uint64_t addr)
{
	const struct fi_image *im = &m->img;

	for (size_t i = 0; i < im->nviews; i++) {
		const struct fi_view *v = &im->views[i];
		uint64_t lo = v->vaddr + im->bias;

		if (v->exec && addr >= lo && addr - lo < v->size)
			return v->size - (addr - lo);
	}
	return 0;
}

const uint8_t *fi_trap_text_in(const struct fi_module *m, uint64_t addr,
			       size_t len)
{
	return m && fi_trap_span(m, addr) >= len ?
	       (const uint8_t *)(uintptr_t)addr : NULL;
}

const uint8_t *fi_trap_text(uint64_t addr, size_t len,
			    const struct fi_module **mp)
{
	const struct fi_module *m = fi_rt_module_at(addr);
	const uint8_t *p = fi_trap_text_in(m, addr, len);

	if (p && mp)
		*mp = m;
	return p;
}

bool fi_trap_read64(uint64_t addr, uint64_t *val)
{
	return fi_rt_read_self(val, addr, sizeof(*val)) == (ssize_t)sizeof(*val);
}

bool fi_trap_read_pushed(uint64_t addr, uint64_t *val)
{
	ssize_t n = fi_rt_read_self(val, addr, sizeof(*val));

	if (n == (ssize_t)sizeof(*val))
		return true;
	if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
		/*
		 * A sandbox without process_vm_readv: the slot at the top of
		 * the stack the stub was called with is where that call just
		 * pushed its return address, so it is mapped.
		 */
		__builtin_memcpy(val, (const void *)(uintptr_t)addr, sizeof(*val));
		return true;
	}
	return false;
}
