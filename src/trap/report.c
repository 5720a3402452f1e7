/* SPDX-License-Identifier: MIT */
/*
 * The parts of a CFI failure report that tell a user what went wrong
 * without a debugger (report.h): which functions have the type the caller
 * wanted, where the call is in the source, and a JSON record per failure
 * for fleet monitoring (FINEIBT_LOG).
 *
 * All of it runs inside the SIGILL handler, so: no allocation, no lock, no
 * stdio, only async-signal-safe system calls, and memory is read only
 * where it is known to be mapped (the executable views of registered
 * modules, the file buffers the runtime keeps for them, one stack slot
 * read with process_vm_readv).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ctor.h"
#include "hash.h"
#include "insn.h"
#include "rawsys.h"
#include "report.h"
#include "logsink.h"
#include "print.h"
#include "strbuf.h"
#include "trapmem.h"

/* ------------------------------------------------------ live text reads */

/* The run-time hash in the preamble of the function at run-time @func. */
static bool fi_rep_func_hash(const struct fi_module *m, uint64_t func,
			     uint32_t *hash)
{
	uint64_t pre = func - FI_PREAMBLE_SIZE;
	const uint8_t *p = fi_trap_text_in(m, pre, FI_PREAMBLE_SIZE + 4);
	struct fi_preamble_info info;

	if (!p || fi_classify_preamble(p, pre, &info) == FI_PRE_NONE)
		return false;
	*hash = info.hash;
	return true;
}

/* -------------------------------------------------------------- types */

struct fi_report_type fi_report_type_of(const struct fi_module *m, uint32_t rt)
{
	const struct fi_runtime *st = fi_rt();
	const struct fineibt_config *cfg = m ? &m->cfg : &st->cfg;
	struct fi_report_type ty = { .ct = rt, .rt = rt, .known = true };
	const struct fineibt_key *key;

	if (!(cfg->flags & FINEIBT_F_RAND))
		return ty;	/* norand, off: the hashes are the compiler's */
	/*
	 * A module patched statically keeps the key of its note; every other
	 * one, JIT regions included, was rehashed with the process's.
	 */
	key = m && m->img.note.present ? &m->rehash_key : &st->key;
	ty.known = fi_rehash_inverse(rt, key, &ty.ct) != -EINVAL;
	if (!ty.known)
		ty.ct = rt;
	return ty;
}

bool fi_report_show_runtime(void)
{
	const struct fi_runtime *st = fi_rt();

	return (st->cfg.flags & FINEIBT_F_DEBUG) && !st->secure;
}

/* -------------------------------------------------------------- as in */

static bool fi_rep_seen(const char **names, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++) {
		const char *a = names[i], *b = s;

		while (*a && *a == *b)
			a++, b++;
		if (*a == *b)
			return true;
	}
	return false;
}

/*
 * Compare the hash each preamble holds now, not the one recorded at
 * discovery: the caller's expected type is a run-time value (rehashed
 * with the process key), and so is what the preambles carry.
 */
static size_t fi_rep_as_in(uint32_t hash, uint64_t skip, const char **names,
			   size_t max, uint64_t *first)
{
	const struct fi_runtime *rt = fi_rt();
	size_t nmods = __atomic_load_n(&rt->nmods, __ATOMIC_ACQUIRE), n = 0;

	for (size_t i = 0; i < nmods && n < max; i++) {
		const struct fi_module *m =
			__atomic_load_n(&rt->mods[i], __ATOMIC_ACQUIRE);

		size_t nf = m ? fi_module_nfuncs(m) : 0;

		for (size_t k = 0; k < nf && n < max; k++) {
			uint64_t addr = fi_module_func(m, k);
			uint64_t func = addr + m->img.bias;
			const struct fi_sym *s;
			uint32_t h;

			if (func == skip || !fi_rep_func_hash(m, func, &h) ||
			    h != hash)
				continue;
			s = fi_image_sym(&m->img, addr);
			if (!s || s->addr != addr || !s->name || !s->name[0] ||
			    fi_rep_seen(names, n, s->name))
				continue;
			if (!n && first)
				*first = func;
			names[n++] = s->name;
		}
	}
	return n;
}

size_t fi_report_as_in(uint32_t hash, uint64_t skip, const char **names,
		       size_t max)
{
	return fi_rep_as_in(hash, skip, names, max, NULL);
}

/* The prototype of the function at run-time @func, from its module's DWARF. */
static void fi_rep_proto(uint64_t func, char *buf, size_t len)
{
	const struct fi_module *m = fi_rt_module_at(func);

	buf[0] = '\0';
	if (m && fi_dwarf_proto(&m->img, func - m->img.bias, buf, len))
		buf[0] = '\0';
}

/* ----------------------------------------------------------- call site */

/*
 * A FineIBT preamble (or the BHI stub it called) trapped: the caller's
 * `call *%r11` pushed the return address. The call site is the checked
 * site, listed in .kcfi_traps, that this call ends, and whose hash is the
 * one that failed (a tail call through a pointer leaves its caller's
 * return address instead: the hash test rejects that frame unless both
 * types are the same).
 */
static uint64_t fi_rep_caller(const struct fi_trap *t, uint64_t ret)
{
	for (uint64_t k = 1; k <= FI_CALLSITE_SIZE; k++) {
		uint64_t site = ret - k;
		const struct fi_module *m = fi_rt_module_at(site);
		struct fi_caller_info ci;
		const uint8_t *p;

		if (!m || !fi_image_is_trap(&m->img, site + FI_KCFI_CALLER_UD -
					    m->img.bias))
			continue;
		p = fi_trap_text_in(m, site, FI_CALLSITE_SIZE);
		if (!p || fi_classify_caller(p, site, &ci) == FI_CALL_NONE ||
		    ci.jmp || ci.hash != t->type)
			return 0;
		return site;
	}
	return 0;
}

static uint64_t fi_rep_site(const struct fi_trap *t, uint64_t sp)
{
	uint64_t ret;

	switch (t->kind) {
	case FI_TRAP_KCFI:
		return t->addr - FI_KCFI_CALLER_UD;
	case FI_TRAP_PARANOID:
		return t->addr - FI_PARANOID_UD;
	case FI_TRAP_PREAMBLE:
		return fi_trap_read64(sp, &ret) ? fi_rep_caller(t, ret) : 0;
	case FI_TRAP_BHI:
		/* (%rsp) returns into the target; the caller's is above it. */
		return fi_trap_read64(sp + 8, &ret) ? fi_rep_caller(t, ret) : 0;
	case FI_TRAP_COARSE:
		return t->site_known ? t->addr : 0;
	default:
		return 0;
	}
}

/*
 * The details of a failure seen before are reused: under cfi=warn a
 * failing call in a loop traps again and again, and the "as in" scan and
 * the line-table walk cost time proportional to the program's size. A
 * small fixed table, filled lock-free (a slot is claimed with a CAS,
 * filled, then published), keyed by everything the details depend on;
 * the modules are part of the key, so a library loaded at the address of
 * an unloaded one never inherits its entries. When full, details are
 * computed every time.
 */
#define FI_REP_CACHE	32

struct fi_rep_key {
	uint64_t addr, target, site;
	uint32_t type;
	const struct fi_module *mod_target, *mod_site;
};

static struct fi_rep_slot {
	int state;			/* 0 free, 1 being filled, 2 ready */
	struct fi_rep_key key;
	struct fi_report_info ri;
} fi_rep_cache[FI_REP_CACHE];

static bool fi_rep_key_eq(const struct fi_rep_key *a, const struct fi_rep_key *b)
{
	return a->addr == b->addr && a->target == b->target &&
	       a->site == b->site && a->type == b->type &&
	       a->mod_target == b->mod_target && a->mod_site == b->mod_site;
}

static bool fi_rep_cached(const struct fi_rep_key *k, struct fi_report_info *ri)
{
	for (size_t i = 0; i < FI_REP_CACHE; i++) {
		struct fi_rep_slot *s = &fi_rep_cache[i];

		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == 2 &&
		    fi_rep_key_eq(&s->key, k)) {
			__builtin_memcpy(ri, &s->ri, sizeof(*ri));
			return true;
		}
	}
	return false;
}

static void fi_rep_remember(const struct fi_rep_key *k,
			    const struct fi_report_info *ri)
{
	for (size_t i = 0; i < FI_REP_CACHE; i++) {
		struct fi_rep_slot *s = &fi_rep_cache[i];
		int free_state = 0;

		if (!__atomic_compare_exchange_n(&s->state, &free_state, 1, false,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		s->key = *k;
		__builtin_memcpy(&s->ri, ri, sizeof(*ri));
		__atomic_store_n(&s->state, 2, __ATOMIC_RELEASE);
		return;
	}
}

void fi_report_collect(const struct fi_trap *t, uint64_t sp,
		       struct fi_report_info *ri)
{
	const struct fi_module *m;
	struct fi_rep_key key;
	uint64_t first = 0;

	*ri = (struct fi_report_info){ 0 };
	ri->site = fi_rep_site(t, sp);
	key = (struct fi_rep_key){
		.addr = t->addr, .target = t->target, .site = ri->site,
		.type = t->type, .mod_target = fi_rt_module_at(t->target),
		.mod_site = ri->site ? fi_rt_module_at(ri->site) : NULL,
	};
	if (fi_rep_cached(&key, ri))
		return;
	ri->expected = fi_report_type_of(t->mod, t->type);
	m = key.mod_target;
	if (m)
		ri->have_found = fi_rep_func_hash(m, t->target, &ri->found.rt);
	if (ri->have_found)
		ri->found = fi_report_type_of(m, ri->found.rt);
	/* A coarse stop had no type to check: no "as in". */
	if (t->kind != FI_TRAP_COARSE)
		ri->nas_in = fi_rep_as_in(t->type, t->target, ri->as_in,
					  FI_REPORT_NAMES, &first);
	if (m)
		fi_rep_proto(t->target, ri->target_proto, sizeof(ri->target_proto));
	if (ri->nas_in)
		fi_rep_proto(first, ri->expected_proto, sizeof(ri->expected_proto));
	m = key.mod_site;
	if (m && fi_dwarf_line(&m->img, ri->site - m->img.bias, ri->file,
			       sizeof(ri->file), &ri->line))
		ri->file[0] = '\0';
	fi_rep_remember(&key, ri);
}

/* ------------------------------------------------------------- the text */

void fi_report_sym(struct fi_strbuf *b, const struct fi_module *m,
		   uint64_t addr)
{
	char sym[256];

	sym[0] = '\0';
	if (m)
		fi_image_symbolize(&m->img, addr - m->img.bias, sym, sizeof(sym));
	sym[sizeof(sym) - 1] = '\0';
	if (sym[0])
		fi_strbuf_str(b, sym);
	else
		fi_strbuf_hex(b, addr, 1);
}

/* "sym+0xoff" via the module holding run-time @addr, else "0xaddr". */
static void fi_rep_addr(struct fi_strbuf *b, uint64_t addr)
{
	fi_report_sym(b, fi_rt_module_at(addr), addr);
}

bool fi_report_at(struct fi_strbuf *b, const struct fi_trap *t)
{
	uint64_t pre = t->target - FI_PREAMBLE_SIZE;
	const struct fi_module *m;
	const struct fi_sym *s;

	if (t->kind == FI_TRAP_BHI) {
		fi_strbuf_str(b, "__bhi_args+");
		fi_strbuf_hex(b, t->addr - t->stubs, 1);
		return true;
	}
	if (t->kind != FI_TRAP_PREAMBLE)
		return false;
	m = fi_rt_module_at(t->target);
	if (!m || t->addr < pre || t->addr >= t->target)
		return false;
	s = fi_image_sym(&m->img, t->target - m->img.bias);
	if (!s || !s->name || s->addr != t->target - m->img.bias)
		return false;
	fi_strbuf_str(b, "__cfi_");
	fi_strbuf_str(b, s->name);
	fi_strbuf_str(b, "+");
	fi_strbuf_hex(b, t->addr - pre, 1);
	return true;
}

size_t fi_report_type_str(const struct fi_report_type *ty, char *buf,
			  size_t len)
{
	struct fi_strbuf o;

	fi_strbuf_init(&o, buf, len, 0);
	fi_strbuf_hex(&o, ty->known ? ty->ct : ty->rt, 8);
	if (!ty->known)
		fi_strbuf_str(&o, " (no type of this process)");
	else if (ty->ct != ty->rt && fi_report_show_runtime()) {
		fi_strbuf_str(&o, " (run-time ");
		fi_strbuf_hex(&o, ty->rt, 8);
		fi_strbuf_str(&o, ")");
	}
	return o.len;
}

size_t fi_report_format(const struct fi_trap *t, const struct fi_report_info *ri,
			char *buf, size_t used, size_t len)
{
	struct fi_strbuf o;

	if (used >= len)
		return used;
	fi_strbuf_init(&o, buf, len, used);
	if (ri->nas_in) {
		char ty[64];

		fi_report_type_str(&ri->expected, ty, sizeof(ty));
		fi_strbuf_str(&o, "fineibt:   expected type ");
		fi_strbuf_str(&o, ty);
		fi_strbuf_str(&o, ", as in: ");
		for (size_t i = 0; i < ri->nas_in; i++) {
			fi_strbuf_str(&o, i ? ", " : "");
			fi_strbuf_str(&o, ri->as_in[i]);
		}
		fi_strbuf_str(&o, "\n");
	}
	/* Without DWARF the site is only in the FINEIBT_LOG record. */
	if (ri->site && ri->file[0]) {
		fi_strbuf_str(&o, "fineibt:   call site: ");
		fi_strbuf_str(&o, ri->file);
		/* Line 0 is DWARF's "no line" (code the compiler merged
		 * from several lines): the file alone. */
		if (ri->line) {
			fi_strbuf_str(&o, ":");
			fi_strbuf_dec(&o, ri->line, 1);
		}
		fi_strbuf_str(&o, " (");
		fi_rep_addr(&o, ri->site);
		fi_strbuf_str(&o, ")\n");
	}
	/*
	 * The prototypes, when the modules have DWARF (.debug_info); last,
	 * so that a report cut by the buffer loses these first.
	 */
	if (ri->target_proto[0]) {
		fi_strbuf_str(&o, "fineibt:   target: ");
		fi_strbuf_str(&o, ri->target_proto);
		fi_strbuf_str(&o, "\n");
	}
	if (ri->nas_in && ri->expected_proto[0]) {
		fi_strbuf_str(&o, "fineibt:   expected: ");
		fi_strbuf_str(&o, ri->expected_proto);
		fi_strbuf_str(&o, "\n");
	}
	/* Truncated: keep the last line whole-looking. */
	if (o.len > used && buf[o.len - 1] != '\n')
		buf[o.len - 1] = '\n';
	return o.len;
}

/* ------------------------------------------------------------ FINEIBT_LOG */

static int fi_log_fd = -1;
static dev_t fi_log_dev;
static ino_t fi_log_ino;
static char fi_log_exe[256];

/*
 * Opened before main and before any constructor of the program (a
 * -static-fineibt program's share the .init_array: src/rt/ctor.h),
 * never in the handler. O_NONBLOCK: a FIFO reader that stalls must not
 * stall the program; O_APPEND keeps concurrent records whole.
 * System calls, not libc's functions: a program's interposer of open or
 * fstat is not rewritten yet here, and the handler must not run one.
 */
__attribute__((constructor(FI_CTOR_REPORT))) static void fi_report_open_log(void)
{
	const char *path = secure_getenv("FINEIBT_LOG");
	struct stat st;
	ssize_t n;
	long r;
	int fd;

	if (!path || !*path || fi_log_fd >= 0 || fi_logsink_is_syslog(path))
		return;
	r = fi_fd_above_stdio(fi_sys_open(path, O_WRONLY | O_CREAT | O_APPEND |
					  O_NONBLOCK | O_CLOEXEC, 0600));
	if (r < 0) {
		fi_warn("warning: FINEIBT_LOG=%.200s: cannot open (%s); CFI failures are "
			"reported on stderr only\n", path, strerror((int)-r));
		return;
	}
	fd = (int)r;
	if (fi_raw_fstat(fd, &st)) {
		fi_raw_close(fd);
		return;
	}
	fi_log_dev = st.st_dev;
	fi_log_ino = st.st_ino;
	n = fi_sys3(SYS_readlink, (long)"/proc/self/exe", (long)fi_log_exe,
		    sizeof(fi_log_exe) - 1);
	fi_log_exe[n > 0 ? n : 0] = '\0';
	__atomic_store_n(&fi_log_fd, fd, __ATOMIC_RELEASE);
}

/* A JSON string: quotes, backslashes and control bytes escaped. */
static void fi_json_str(struct fi_strbuf *o, const char *s)
{
	fi_strbuf_str(o, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			fi_strbuf_str(o, c == '"' ? "\\\"" : "\\\\");
		} else if (c < 0x20) {
			fi_strbuf_str(o, "\\u00");
			fi_strbuf_xdigits(o, c, 2);
		} else {
			fi_strbuf_char(o, (char)c);
		}
	}
	fi_strbuf_str(o, "\"");
}

static void fi_json_addr(struct fi_strbuf *o, const char *key, uint64_t addr,
			 const struct fi_trap *at)
{
	char sym[256];
	struct fi_strbuf s;

	fi_strbuf_str(o, ",\"");
	fi_strbuf_str(o, key);
	fi_strbuf_str(o, "\":");
	if (!addr) {
		fi_strbuf_str(o, "null");
		return;
	}
	fi_strbuf_init(&s, sym, sizeof(sym), 0);
	/* Where @at trapped as the first line names it (report.h). */
	if (!at || !fi_report_at(&s, at))
		fi_rep_addr(&s, addr);
	fi_json_str(o, sym);
	fi_strbuf_str(o, ",\"");
	fi_strbuf_str(o, key);
	fi_strbuf_str(o, "_addr\":\"");
	fi_strbuf_hex(o, addr, 1);
	fi_strbuf_str(o, "\"");
}

/*
 * ,"KEY":"0x<compile-time hash>" (null when not @have), and with run-time
 * hashes shown (cfi=debug) ,"KEY_runtime":"0x<run-time hash>"; a value
 * that is no rehash of a type: its "KEY" is null, "KEY_unknown" holds it.
 */
/* ,"KEY[SUFFIX]":"0x<@v>" */
static void fi_json_hash(struct fi_strbuf *o, const char *key, const char *suffix,
			 uint32_t v)
{
	fi_strbuf_str(o, ",\"");
	fi_strbuf_str(o, key);
	fi_strbuf_str(o, suffix);
	fi_strbuf_str(o, "\":\"");
	fi_strbuf_hex(o, v, 8);
	fi_strbuf_str(o, "\"");
}

static void fi_json_type(struct fi_strbuf *o, const char *key,
			 const struct fi_report_type *ty, bool have)
{
	if (!have || !ty->known) {
		fi_strbuf_str(o, ",\"");
		fi_strbuf_str(o, key);
		fi_strbuf_str(o, "\":null");
		if (have)
			fi_json_hash(o, key, "_unknown", ty->rt);
		return;
	}
	fi_json_hash(o, key, "", ty->ct);
	if (fi_report_show_runtime())
		fi_json_hash(o, key, "_runtime", ty->rt);
}

static const char *const fi_kind_names[] = {
	[FI_TRAP_NONE] = "none", [FI_TRAP_KCFI] = "kcfi",
	[FI_TRAP_PREAMBLE] = "preamble", [FI_TRAP_PARANOID] = "paranoid",
	[FI_TRAP_BHI] = "bhi", [FI_TRAP_COARSE] = "coarse",
};

/* The record's head, "version" to "kind", from its opening brace. */
static void fi_json_head(struct fi_strbuf *o, const struct fi_trap *t)
{
	struct timespec ts = { 0 };
	char mode[64];

	/* Directly, as every call of the report path (rawsys.h): libfaketime
	 * defines clock_gettime and getpid, which libfineibt.a would call. */
	fi_sys3(SYS_clock_gettime, CLOCK_REALTIME, (long)&ts, 0);
	fi_strbuf_str(o, "{\"version\":" FI_REPORT_JSON_VERSION ",\"time\":");
	fi_strbuf_dec(o, (uint64_t)ts.tv_sec, 1);
	fi_strbuf_str(o, ".");
	fi_strbuf_dec(o, (uint64_t)ts.tv_nsec / 1000, 6);
	fi_strbuf_str(o, ",\"pid\":");
	fi_strbuf_dec(o, (uint64_t)fi_sys3(SYS_getpid, 0, 0, 0), 1);
	fi_strbuf_str(o, ",\"exe\":");
	fi_json_str(o, fi_log_exe);
	fi_strbuf_str(o, ",\"mode\":");
	if (t->mod)
		fineibt_config_str(&t->mod->cfg, mode, sizeof(mode));
	fi_json_str(o, t->mod ? mode : "?");
	fi_strbuf_str(o, ",\"seq\":");
	fi_json_str(o, !t->mod ? "?" : fi_set_name(t->mod->cfg.flags &
						  FINEIBT_F_SEQ_V618 ?
						  FI_SET_V618 : FI_SET_V4));
	fi_strbuf_str(o, ",\"kind\":");
	fi_json_str(o, t->kind <= FI_TRAP_COARSE ? fi_kind_names[t->kind] : "?");
}

/* A record that does not fit is not valid JSON: 0, to drop it whole. */
static size_t fi_json_end(struct fi_strbuf *o, char *buf, size_t len)
{
	if (o->len + 2 > len)
		return 0;
	buf[o->len++] = '\n';
	buf[o->len] = '\0';
	return o->len;
}

size_t fi_report_json(const struct fi_trap *t, const struct fi_report_info *ri,
		      char *buf, size_t len)
{
	struct fi_strbuf o;

	if (!len)
		return 0;
	fi_strbuf_init(&o, buf, len, 0);
	fi_json_head(&o, t);
	fi_json_addr(&o, "at", t->addr, t);
	fi_json_addr(&o, "call_site", ri->site, NULL);
	fi_json_addr(&o, "target", t->target, NULL);
	fi_json_type(&o, "expected", &ri->expected, true);
	fi_json_type(&o, "found", &ri->found, ri->have_found);
	fi_strbuf_str(&o, ",\"as_in\":[");
	for (size_t i = 0; i < ri->nas_in; i++) {
		fi_strbuf_str(&o, i ? "," : "");
		fi_json_str(&o, ri->as_in[i]);
	}
	fi_strbuf_str(&o, "]");
	fi_strbuf_str(&o, ",\"target_prototype\":");
	if (ri->target_proto[0])
		fi_json_str(&o, ri->target_proto);
	else
		fi_strbuf_str(&o, "null");
	fi_strbuf_str(&o, ",\"expected_prototype\":");
	if (ri->expected_proto[0])
		fi_json_str(&o, ri->expected_proto);
	else
		fi_strbuf_str(&o, "null");
	fi_strbuf_str(&o, ",\"file\":");
	if (ri->file[0]) {
		fi_json_str(&o, ri->file);
		fi_strbuf_str(&o, ",\"line\":");
		if (ri->line)
			fi_strbuf_dec(&o, ri->line, 1);
		else
			fi_strbuf_str(&o, "null");
	} else {
		fi_strbuf_str(&o, "null,\"line\":null");
	}
	fi_strbuf_str(&o, t->warn ? ",\"action\":\"warn\"}" : ",\"action\":\"fatal\"}");
	return fi_json_end(&o, buf, len);
}

size_t fi_report_json_repeat(const struct fi_trap *t, uint64_t caller,
			     uint64_t n, char *buf, size_t len)
{
	struct fi_strbuf o;

	if (!len)
		return 0;
	fi_strbuf_init(&o, buf, len, 0);
	fi_json_head(&o, t);
	fi_json_addr(&o, "at", t->addr, t);
	fi_json_addr(&o, "target", t->target, NULL);
	/* Where "at" does not tell the callers apart (report.h). */
	if (t->kind == FI_TRAP_PREAMBLE || t->kind == FI_TRAP_BHI ||
	    (t->kind == FI_TRAP_COARSE && !t->site_known))
		fi_json_addr(&o, "caller", caller, NULL);
	fi_strbuf_str(&o, ",\"repeated\":");
	fi_strbuf_dec(&o, n, 1);
	fi_strbuf_str(&o, ",\"action\":\"warn\"}");
	return fi_json_end(&o, buf, len);
}

/* The FINEIBT_LOG descriptor, if it is still the file opened at start-up. */
static int fi_log_ok(void)
{
	int fd = __atomic_load_n(&fi_log_fd, __ATOMIC_ACQUIRE);
	struct stat st;

	if (fd < 0)
		return -1;
	/* The program may have closed our fd and reused the number. */
	if (fi_raw_fstat(fd, &st) || st.st_dev != fi_log_dev ||
	    st.st_ino != fi_log_ino)
		return -1;
	return fd;
}

void fi_report_log(const struct fi_trap *t, const struct fi_report_info *ri)
{
	int fd = fi_log_ok();
	char rec[2048];
	size_t n;

	if (fd < 0)
		return;
	n = fi_report_json(t, ri, rec, sizeof(rec));
	/* One write: O_APPEND places it whole; EAGAIN drops it. */
	if (n)
		(void)fi_raw_write(fd, rec, n);
}

void fi_report_log_repeat(const struct fi_trap *t, uint64_t caller, uint64_t n)
{
	int fd = fi_log_ok();
	char rec[1024];
	size_t len;

	if (fd < 0)
		return;
	len = fi_report_json_repeat(t, caller, n, rec, sizeof(rec));
	if (len)
		(void)fi_raw_write(fd, rec, len);
}
