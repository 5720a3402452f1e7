// SPDX-License-Identifier: MIT
/*
 * libfi_slot_payload.so (tests/e2e/protect_slot.sh): says when it is
 * loaded. protect_slot's "dlopen" case shows whether an open() call of the
 * program loaded it (a GOT slot forged to the runtime's dlopen).
 */
#include <unistd.h>

__attribute__((constructor)) static void loaded(void)
{
	static const char m[] = "loaded by open\n";

	if (write(1, m, sizeof(m) - 1) < 0)
		_exit(5);
}
