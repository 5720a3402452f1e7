// SPDX-License-Identifier: MIT
/*
 * Names of the shared text cache (src/elf/cacheid.h): entry names, key ids
 * and users' keys, all keyed hashes (SipHash-2-4) over fields laid out
 * one after the other, little-endian, so that the runtime and the service
 * compute the same bytes whatever their structures' padding.
 */
#include <string.h>

#include "cacheid.h"
#include "strbuf.h"

/* A message being laid out: fixed capacity, overflow ignored (none fits). */
struct fi_cmsg {
	uint8_t b[256];
	size_t n;
};

static void fi_cmsg_put(struct fi_cmsg *m, const void *p, size_t len)
{
	if (len > sizeof(m->b) - m->n)
		len = sizeof(m->b) - m->n;
	memcpy(m->b + m->n, p, len);
	m->n += len;
}

static void fi_cmsg_u64(struct fi_cmsg *m, uint64_t v)
{
	uint8_t b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	fi_cmsg_put(m, b, sizeof(b));
}

uint64_t fi_cache_keyid(const struct fineibt_key *key)
{
	static const char what[] = "fineibt cache key id";

	return fi_siphash24(key, what, sizeof(what));
}

struct fi_cache_conf fi_cache_conf_of(const struct fineibt_config *cfg,
				      bool have_arity)
{
	struct fi_cache_conf c;

	memset(&c, 0, sizeof(c));
	c.cfg.mode = cfg->mode;
	/* debug changes what is said, not a byte of the text */
	c.cfg.flags = cfg->flags & ~(unsigned int)FINEIBT_F_DEBUG;
	/* arity support decides whether bhi may be asked for, nothing
	 * else: without bhi in the mode it changes no byte */
	c.have_arity = (cfg->flags & FINEIBT_F_BHI) ? have_arity : 0;
	return c;
}

void fi_cache_name(const struct fineibt_key *key,
		   const struct fi_cache_ident *id,
		   const struct fi_cache_conf *conf, char *out)
{
	static const char tag[] = "fineibt cache entry";
	struct fi_cmsg m = { .n = 0 };
	uint8_t ver[16] = { 0 };
	struct fi_strbuf b;
	uint64_t h[2];

	fi_cmsg_put(&m, tag, sizeof(tag));
	fi_cmsg_u64(&m, FI_CACHE_FORMAT);
	strncpy((char *)ver, FINEIBT_VERSION, sizeof(ver));
	fi_cmsg_put(&m, ver, sizeof(ver));
	fi_cmsg_u64(&m, id->dev);
	fi_cmsg_u64(&m, id->ino);
	fi_cmsg_u64(&m, id->size);
	fi_cmsg_u64(&m, (uint64_t)id->mtime_s);
	fi_cmsg_u64(&m, id->mtime_ns);
	fi_cmsg_u64(&m, (uint64_t)id->ctime_s);
	fi_cmsg_u64(&m, id->ctime_ns);
	fi_cmsg_u64(&m, id->text_vaddr);
	fi_cmsg_u64(&m, id->text_off);
	fi_cmsg_u64(&m, id->text_size);
	fi_cmsg_u64(&m, id->nbuild_id);
	fi_cmsg_put(&m, id->build_id,
		    id->nbuild_id < FI_BUILD_ID_MAX ? id->nbuild_id : FI_BUILD_ID_MAX);
	fi_cmsg_u64(&m, (uint64_t)conf->cfg.mode);
	fi_cmsg_u64(&m, conf->cfg.flags & ~(unsigned int)FINEIBT_F_DEBUG);
	fi_cmsg_u64(&m, conf->have_arity);
	fi_cmsg_u64(&m, fi_cache_keyid(key));
	/* 128 bits: the hash of the message, then a hash of that hash */
	h[0] = fi_siphash24(key, m.b, m.n);
	h[1] = fi_siphash24(key, h, sizeof(h[0]));
	_Static_assert(FI_CACHE_NAME_LEN == 2 * FI_STRBUF_HEX_MAX,
		       "the name is the two words in hex");
	fi_strbuf_init(&b, out, FI_CACHE_NAME_LEN + 1, 0);
	fi_strbuf_xdigits(&b, h[0], FI_STRBUF_HEX_MAX);
	fi_strbuf_xdigits(&b, h[1], FI_STRBUF_HEX_MAX);
}

void fi_cache_user_key(const struct fineibt_key *master, uint32_t uid,
		       struct fineibt_key *out)
{
	static const char tag[] = "fineibt cache user key";
	struct fi_cmsg m = { .n = 0 };

	fi_cmsg_put(&m, tag, sizeof(tag));
	fi_cmsg_u64(&m, uid);
	for (int i = 0; i < 2; i++) {
		uint64_t h;
		uint8_t which = (uint8_t)i;

		fi_cmsg_put(&m, &which, 1);
		h = fi_siphash24(master, m.b, m.n);
		m.n--;
		for (int b = 0; b < 8; b++)
			out->bytes[8 * i + b] = (uint8_t)(h >> (8 * b));
	}
}

void fi_cache_user_dir(uint32_t uid, char *buf, size_t len)
{
	struct fi_strbuf b;

	fi_strbuf_init(&b, buf, len, 0);
	fi_strbuf_char(&b, 'u');
	fi_strbuf_dec(&b, uid, 1);
	/* All or nothing: a cut name would be another user's directory. */
	if (b.over && len)
		buf[0] = '\0';
}

size_t fi_cache_path(char *buf, size_t len, const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);

	if (a + b + 2 > len)
		return 0;
	memcpy(buf, dir, a);
	buf[a] = '/';
	memcpy(buf + a + 1, name, b + 1);
	return a + b + 1;
}

static uint32_t fi_cid_word(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

bool fi_cache_build_id(const uint8_t *notes, uint64_t size,
		       struct fi_cache_ident *id)
{
	uint64_t at = 0;

	while (size - at >= 12) {
		uint32_t namesz = fi_cid_word(notes + at);
		uint32_t descsz = fi_cid_word(notes + at + 4);
		uint32_t type = fi_cid_word(notes + at + 8);
		uint64_t name = at + 12;
		uint64_t desc = name + (((uint64_t)namesz + 3) & ~3ull);

		if (desc > size || descsz > size - desc)
			return false;
		if (type == 3 /* NT_GNU_BUILD_ID */ && namesz == 4 &&
		    !memcmp(notes + name, "GNU", 4)) {
			if (!descsz || descsz > FI_BUILD_ID_MAX)
				return false;
			id->nbuild_id = descsz;
			memcpy(id->build_id, notes + desc, descsz);
			return true;
		}
		at = desc + (((uint64_t)descsz + 3) & ~3ull);
	}
	return false;
}
