/* SPDX-License-Identifier: MIT */
/*
 * The shared text cache's names (src/elf/cacheid.c, docs/protection.md
 * "The shared text cache"): SipHash-2-4 against the specification's test
 * vector; an entry's name changes with every field of the module's
 * identity, of the configuration, and with the key (and only debug
 * leaves it alone); users' keys are distinct and none is the master key;
 * a key id is not the key; the build-id note parser takes the GNU note
 * among others and refuses truncated notes.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cacheid.h"
#include "check.h"

static struct fineibt_key key_of(uint8_t first)
{
	struct fineibt_key k;

	for (int i = 0; i < 16; i++)
		k.bytes[i] = (uint8_t)(first + i);
	return k;
}

static void test_siphash(void)
{
	/* The SipHash paper's vector: key 00..0f, message 00..0e. */
	struct fineibt_key k = key_of(0);
	uint8_t msg[15];

	for (int i = 0; i < 15; i++)
		msg[i] = (uint8_t)i;
	CHECK("siphash24_vector", fi_siphash24(&k, msg, sizeof(msg)) ==
				  0xa129ca6149be45e5ull);
}

static struct fi_cache_ident ident(void)
{
	struct fi_cache_ident id;

	memset(&id, 0, sizeof(id));
	id.dev = 0xfe01;
	id.ino = 1234;
	id.size = 56789;
	id.mtime_s = 1700000000;
	id.mtime_ns = 1;
	id.ctime_s = 1700000001;
	id.ctime_ns = 2;
	id.text_vaddr = 0x1860;
	id.text_off = 0x860;
	id.text_size = 0x2d0;
	id.nbuild_id = 20;
	for (int i = 0; i < 20; i++)
		id.build_id[i] = (uint8_t)(0x40 + i);
	return id;
}

static void name_of(const struct fineibt_key *k, const struct fi_cache_ident *id,
		    const struct fi_cache_conf *c, char *out)
{
	fi_cache_name(k, id, c, out);
}

static void test_name(void)
{
	struct fineibt_key k = key_of(1), k2 = key_of(2);
	struct fineibt_config cfg = { .mode = FINEIBT_MODE_FINEIBT,
				      .flags = FINEIBT_F_RAND | FINEIBT_F_PARANOID };
	struct fi_cache_conf c = fi_cache_conf_of(&cfg, true), c2;
	struct fi_cache_ident id = ident(), v;
	char base[FI_CACHE_NAME_LEN + 1], n[FI_CACHE_NAME_LEN + 1];
	bool all = true;

	name_of(&k, &id, &c, base);
	CHECK("name_hex", strlen(base) == FI_CACHE_NAME_LEN &&
			  strspn(base, "0123456789abcdef") == FI_CACHE_NAME_LEN);
	name_of(&k, &id, &c, n);
	CHECK("name_stable", !strcmp(base, n));
	name_of(&k2, &id, &c, n);
	CHECK("name_key", strcmp(base, n));
#define FIELD(f, val) do {						\
		v = ident();						\
		v.f = (val);						\
		name_of(&k, &v, &c, n);					\
		all &= EXPECT("name_field_" #f, strcmp(base, n));	\
	} while (0)
	FIELD(dev, 0xfe02);
	FIELD(ino, 1235);
	FIELD(size, 56790);
	FIELD(mtime_s, 1700000002);
	FIELD(mtime_ns, 3);
	FIELD(ctime_s, 1700000003);
	FIELD(ctime_ns, 4);
	FIELD(text_vaddr, 0x2860);
	FIELD(text_off, 0x960);
	FIELD(text_size, 0x2e0);
	FIELD(nbuild_id, 19);
	FIELD(build_id[19], 0);
#undef FIELD
	CHECK("name_every_identity_field", all);
	c2 = c;
	c2.cfg.flags |= FINEIBT_F_WARN;
	name_of(&k, &id, &c2, n);
	all = EXPECT("name_warn", strcmp(base, n));
	c2 = c;
	c2.cfg.flags |= FINEIBT_F_SEQ_V618;
	name_of(&k, &id, &c2, n);
	all &= EXPECT("name_set", strcmp(base, n));
	c2 = c;
	c2.cfg.flags &= ~FINEIBT_F_RAND;
	name_of(&k, &id, &c2, n);
	all &= EXPECT("name_rand", strcmp(base, n));
	c2 = c;
	c2.cfg.mode = FINEIBT_MODE_KCFI;
	name_of(&k, &id, &c2, n);
	all &= EXPECT("name_mode", strcmp(base, n));
	c2 = fi_cache_conf_of(&cfg, false);
	name_of(&k, &id, &c2, n);
	all &= EXPECT("name_arity_only_with_bhi", !strcmp(base, n));
	cfg.flags |= FINEIBT_F_BHI;
	c2 = fi_cache_conf_of(&cfg, false);
	name_of(&k, &id, &c2, n);
	all &= EXPECT("name_bhi", strcmp(base, n));
	c = fi_cache_conf_of(&cfg, true);
	name_of(&k, &id, &c, n);
	name_of(&k, &id, &c2, base);
	all &= EXPECT("name_arity_with_bhi", strcmp(base, n));
	cfg.flags &= ~FINEIBT_F_BHI;
	c = fi_cache_conf_of(&cfg, true);
	name_of(&k, &id, &c, base);
	CHECK("name_every_conf_field", all);
	cfg.flags |= FINEIBT_F_DEBUG;
	c2 = fi_cache_conf_of(&cfg, true);
	name_of(&k, &id, &c2, n);
	CHECK("name_debug_ignored", !strcmp(base, n));
}

static void test_keys(void)
{
	struct fineibt_key m = key_of(7), a, b, a2;
	uint64_t idm = fi_cache_keyid(&m);

	fi_cache_user_key(&m, 1000, &a);
	fi_cache_user_key(&m, 1001, &b);
	fi_cache_user_key(&m, 1000, &a2);
	CHECK("user_key_stable", !memcmp(&a, &a2, sizeof(a)));
	CHECK("user_keys_differ", memcmp(&a, &b, sizeof(a)));
	CHECK("user_key_not_master", memcmp(&a, &m, sizeof(a)) &&
				     memcmp(&b, &m, sizeof(b)));
	CHECK("keyid_not_key", memcmp(&idm, m.bytes, 8) &&
			       memcmp(&idm, m.bytes + 8, 8));
	CHECK("keyid_per_key", fi_cache_keyid(&a) != fi_cache_keyid(&b));
}

/* A note: namesz, descsz, type, name (padded), desc (padded). */
static size_t put_note(uint8_t *p, const char *name, uint32_t type,
		       const uint8_t *desc, uint32_t descsz)
{
	uint32_t namesz = (uint32_t)strlen(name) + 1, w[3] = { namesz, descsz, type };
	size_t at = sizeof(w);

	memcpy(p, w, sizeof(w));
	memset(p + at, 0, (namesz + 3) & ~3u);
	memcpy(p + at, name, namesz);
	at += (namesz + 3) & ~3u;
	memset(p + at, 0, (descsz + 3) & ~3u);
	memcpy(p + at, desc, descsz);
	return at + ((descsz + 3) & ~3u);
}

static void test_build_id(void)
{
	uint8_t notes[256], d[20], abi[16] = { 0 };
	struct fi_cache_ident id;
	size_t n = 0;

	for (int i = 0; i < 20; i++)
		d[i] = (uint8_t)(0xa0 + i);
	n += put_note(notes + n, "GNU", 1 /* ABI tag */, abi, sizeof(abi));
	n += put_note(notes + n, "FineIBT", 0x46490002, abi, 16);
	n += put_note(notes + n, "GNU", 3, d, sizeof(d));
	memset(&id, 0, sizeof(id));
	CHECK("build_id_found", fi_cache_build_id(notes, n, &id) &&
				id.nbuild_id == 20 && !memcmp(id.build_id, d, 20));
	CHECK("build_id_truncated", !fi_cache_build_id(notes, n - 4, &id));
	CHECK("build_id_none", !fi_cache_build_id(notes, 32, &id));
}

int main(void)
{
	test_siphash();
	test_name();
	test_keys();
	test_build_id();
	return fi_check_exit();
}
