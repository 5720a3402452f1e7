/* SPDX-License-Identifier: MIT */
/*
 * The cfi= parser (FINEIBT_CFI, --cfi=) on arbitrary strings, with and
 * without arity, with and without a message buffer, then the canonical
 * string of the result must parse back to the same configuration.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

static void roundtrip(const char *s, bool arity, char *msgs, size_t len)
{
	struct fineibt_config cfg, again;
	char canon[256];

	fineibt_parse_cfi(s, arity, &cfg, msgs, len);
	if (fineibt_config_str(&cfg, canon, sizeof(canon)) < 0)
		return;
	if (fineibt_parse_cfi(canon, arity, &again, NULL, 0) != 0 ||
	    again.mode != cfg.mode || again.flags != cfg.flags)
		abort();
	fineibt_resolve_auto(&again);
	if (again.mode == FINEIBT_MODE_AUTO)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), msgs[64], big[4096];

	if (!s)
		return 0;
	fuzz_silence();
	memcpy(s, data, size);
	s[size] = '\0';
	roundtrip(s, true, NULL, 0);
	roundtrip(s, false, msgs, sizeof(msgs));
	roundtrip(s, true, big, sizeof(big));
	roundtrip(s, false, msgs, 1);
	free(s);
	return 0;
}
