/* SPDX-License-Identifier: MIT */
/*
 * fineibt seq: every byte sequence the library can write, one line each
 * ("name: hex bytes"), straight from the templates and encoders of insn.c.
 * It is how users see the sequences and how the oracle test
 * (tests/e2e/insn_oracle.sh) gets the bytes it disassembles.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fineibt.h"
#include "insn.h"
#include "cli.h"

#define SEQ_MC		"llvm-mc-22"
#define SEQ_MAX		64	/* longest sequence printed, bytes */

struct seq_opts {
	uint32_t hash;
	int arity;		/* -1: every arity */
	uint64_t ip;		/* where each sequence starts */
	uint64_t thunk;		/* __x86_indirect_thunk_r11 */
	uint64_t stubs;		/* __bhi_args */
	int set;		/* FI_SET_*: the encoders' sequence set */
	bool as_asm;
	const char *mc;		/* llvm-mc path when as_asm */
};

static int seq_help(void)
{
	printf("Usage: fineibt seq [--hash HEX] [--arity N] [--ip HEX] [--thunk HEX]\n"
	       "                   [--stubs HEX] [--seq SET] [--asm]\n"
	       "  Print every byte sequence of fineibt, one line each: 'name: bytes',\n"
	       "  after a first line '# sequence set: SET' naming the encoders' set.\n"
	       "  Templates (fi_seq_all) come first, then the encoders' output:\n"
	       "  kcfi_preamble.aN, kcfi_caller.{call,jmp}, fineibt_preamble,\n"
	       "  fineibt_caller.{call,jmp}, paranoid.{call,jmp} and\n"
	       "  fineibt_bhi_preamble.aN[.warn] (preamble with its BHI tail; the\n"
	       "  arity-1 inline form is 20 bytes, running into func+0..3),\n"
	       "  then plt_direct and plt_sec_direct (a PLT entry made direct,\n"
	       "  jumping to --thunk).\n"
	       "  --hash HEX   type hash written into every hash slot (default 12345678)\n"
	       "  --arity N    only arity N (0..7) for the per-arity forms\n"
	       "  --ip HEX     run-time address of each sequence's first byte\n"
	       "               (default 401000; preambles sit at func-16)\n"
	       "  --thunk HEX  target of the kCFI call sites' rel32 (default 402000)\n"
	       "  --stubs HEX  address of __bhi_args[0] (default 403000; slot N at +N*%d)\n"
	       "  --seq SET    the encoders' sequence set: v4 (default) or v6.18;\n"
	       "               in v6.18 the preambles are printed with func+0 (the\n"
	       "               poison carrying their UDB), 20 bytes\n"
	       "  --asm        also disassemble each sequence with %s (from PATH)\n"
	       "  Exit status: 0 printed, 1 a sequence could not be encoded or\n"
	       "  disassembled (--asm without %s), 2 usage error.\n",
	       FI_BHI_SLOT_SIZE, SEQ_MC, SEQ_MC);
	return 0;
}

static bool seq_parse_hex(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 16);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

/* An executable called @name in $PATH, or NULL. */
static char *seq_find_in_path(const char *name)
{
	const char *path = getenv("PATH");
	static char buf[4096];

	while (path && *path) {
		size_t n = strcspn(path, ":");

		if (n && n + strlen(name) + 2 <= sizeof(buf)) {
			snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, name);
			if (access(buf, X_OK) == 0)
				return buf;
		}
		path += n;
		if (*path == ':')
			path++;
	}
	return NULL;
}

/* Feed @p to llvm-mc --disassemble; its instructions go to stdout, indented. */
static int seq_disasm(const char *mc, const uint8_t *p, size_t n)
{
	int in[2], out[2], status;
	char text[SEQ_MAX * 5 + 2], line[256];
	size_t at = 0;
	FILE *f;
	pid_t pid;

	for (size_t i = 0; i < n; i++)
		at += (size_t)snprintf(text + at, sizeof(text) - at, "0x%02x ", p[i]);
	text[at++] = '\n';
	if (pipe(in) || pipe(out))
		return -errno;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]), close(in[1]), close(out[0]), close(out[1]);
		execl(mc, SEQ_MC, "--disassemble", "-triple=x86_64", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	/* A few hundred bytes: fits the pipe, no need to interleave. */
	if (write(in[1], text, at) != (ssize_t)at)
		cli_error("writing to %s failed", mc);
	close(in[1]);
	f = fdopen(out[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, ".text"))
			continue;
		printf("\t%s", line[0] == '\t' ? line + 1 : line);
	}
	if (f)
		fclose(f);
	else
		close(out[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -EIO;
	return 0;
}

static int seq_print(const struct seq_opts *o, const char *name,
		     const struct fi_buf *b)
{
	if (b->err == -ERANGE) {
		cli_error("%s: --thunk or --stubs is out of rel32 reach (+-2 GiB) of --ip",
			name);
		return b->err;
	}
	if (b->err) {
		cli_error("%s: cannot encode: %s", name,
			strerror(-b->err));
		return b->err;
	}
	printf("%s:", name);
	for (size_t i = 0; i < b->len; i++)
		printf(" %02x", b->mem[i]);
	printf("\n");
	if (!o->as_asm)
		return 0;
	if (seq_disasm(o->mc, b->mem, b->len)) {
		cli_error("%s failed on %s", o->mc, name);
		return -EIO;
	}
	return 0;
}

static int seq_templates(const struct seq_opts *o, uint8_t *mem)
{
	struct fi_buf b;
	int err = 0;

	for (const struct fi_seq *const *s = fi_seq_all; *s && !err; s++) {
		fi_buf_init(&b, mem, SEQ_MAX, o->ip);
		fi_emit_seq(&b, *s, o->hash);
		err = seq_print(o, (*s)->name, &b);
	}
	return err;
}

static bool seq_arity_wanted(const struct seq_opts *o, int arity)
{
	return o->arity < 0 || o->arity == arity;
}

static int seq_kcfi(const struct seq_opts *o, uint8_t *mem)
{
	struct fi_buf b;
	char name[64];
	int err = 0;

	for (int a = 0; a <= FI_MAX_ARITY && !err; a++) {
		if (!seq_arity_wanted(o, a))
			continue;
		fi_buf_init_set(&b, mem, SEQ_MAX, o->ip, o->set);
		fi_emit_kcfi_preamble(&b, o->hash, a);
		snprintf(name, sizeof(name), "kcfi_preamble.a%d", a);
		err = seq_print(o, name, &b);
	}
	for (int jmp = 0; jmp <= 1 && !err; jmp++) {
		fi_buf_init_set(&b, mem, SEQ_MAX, o->ip, o->set);
		fi_emit_kcfi_caller(&b, o->hash, jmp, o->thunk);
		err = seq_print(o, jmp ? "kcfi_caller.jmp" : "kcfi_caller.call", &b);
	}
	return err;
}

/* A set whose preambles trap inside func+0 is shown with it. */
static void seq_poison(struct fi_buf *b)
{
	if (fi_set_forms(b->set)->poison_needed)
		fi_emit_poison(b);
}

static int seq_fineibt(const struct seq_opts *o, uint8_t *mem)
{
	struct fi_buf b;
	int err;

	fi_buf_init_set(&b, mem, SEQ_MAX, o->ip, o->set);
	fi_emit_fineibt_preamble(&b, o->hash);
	seq_poison(&b);
	err = seq_print(o, "fineibt_preamble", &b);
	for (int jmp = 0; jmp <= 1 && !err; jmp++) {
		fi_buf_init_set(&b, mem, SEQ_MAX, o->ip, o->set);
		fi_emit_fineibt_caller(&b, o->hash, jmp);
		err = seq_print(o, jmp ? "fineibt_caller.jmp" : "fineibt_caller.call", &b);
	}
	for (int jmp = 0; jmp <= 1 && !err; jmp++) {
		fi_buf_init_set(&b, mem, SEQ_MAX, o->ip, o->set);
		fi_emit_paranoid_caller(&b, o->hash, jmp);
		err = seq_print(o, jmp ? "paranoid.jmp" : "paranoid.call", &b);
	}
	return err;
}

/* The FineIBT preamble with its BHI tail, for each arity, warn or not. */
static int seq_bhi(const struct seq_opts *o, uint8_t *mem)
{
	struct fi_buf b;
	char name[64];
	int err = 0;

	for (int a = 0; a <= FI_MAX_ARITY && !err; a++) {
		for (int warn = 0; warn <= 1 && !err; warn++) {
			if (!seq_arity_wanted(o, a))
				continue;
			fi_buf_init_set(&b, mem, SEQ_MAX, o->ip, o->set);
			fi_emit_fineibt_preamble(&b, o->hash);
			b.len = FI_FINEIBT_PREAMBLE_BHI;
			fi_emit_bhi_tail(&b, a, warn, o->stubs);
			seq_poison(&b);
			snprintf(name, sizeof(name), "fineibt_bhi_preamble.a%d%s",
				 a, warn ? ".warn" : "");
			err = seq_print(o, name, &b);
		}
	}
	return err;
}

/* The direct PLT entries (src/interpose/plt.c), jumping to --thunk. */
static int seq_plt(const struct seq_opts *o, uint8_t *mem)
{
	uint8_t e[FI_PLT_ENTRY];
	struct fi_buf b;
	int err;

	fi_emit_plt_direct(e, o->thunk);
	fi_buf_init(&b, mem, SEQ_MAX, o->ip);
	fi_emit_bytes(&b, e, sizeof(e));
	err = seq_print(o, "plt_direct", &b);
	if (err)
		return err;
	fi_buf_init(&b, mem, SEQ_MAX, o->ip);
	if (!fi_emit_plt_sec_direct(e, o->ip, o->thunk))
		b.err = -ERANGE;
	else
		fi_emit_bytes(&b, e, sizeof(e));
	return seq_print(o, "plt_sec_direct", &b);
}

/* 0, CLI_USAGE, or -1 after --help. */
static int seq_parse_args(int argc, char **argv, struct seq_opts *o)
{
	static const struct option opts[] = {
		{ "hash", required_argument, NULL, 'H' },
		{ "arity", required_argument, NULL, 'a' },
		{ "ip", required_argument, NULL, 'i' },
		{ "thunk", required_argument, NULL, 't' },
		{ "stubs", required_argument, NULL, 's' },
		{ "seq", required_argument, NULL, 'S' },
		{ "asm", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	cli_getopt_reset();
	while ((c = cli_getopt("seq", argc, argv, "h", opts)) != -1) {
		bool ok = true;

		switch (c) {
		case 'A':
			o->as_asm = true;
			continue;
		case 'h':
			seq_help();
			return -1;
		case 'S':
			o->set = fi_set_parse(optarg);
			if (o->set < 0)
				return cli_usage("seq", "--seq needs v4 or v6.18, got '%s'",
						 optarg);
			continue;
		case 'H':
			ok = seq_parse_hex(optarg, UINT32_MAX, &v) &&
			     ((o->hash = (uint32_t)v), 1);
			break;
		case 'a':
			ok = strlen(optarg) == 1 && optarg[0] >= '0' &&
			     optarg[0] <= '0' + FI_MAX_ARITY &&
			     ((o->arity = optarg[0] - '0'), 1);
			break;
		case 'i':
			ok = seq_parse_hex(optarg, UINT64_MAX, &o->ip);
			break;
		case 't':
			ok = seq_parse_hex(optarg, UINT64_MAX, &o->thunk);
			break;
		case 's':
			ok = seq_parse_hex(optarg, UINT64_MAX, &o->stubs);
			break;
		default:
			return CLI_USAGE;
		}
		if (!ok) {
			const struct option *l = opts;

			while (l->val != c)
				l++;
			return cli_usage("seq", "--%s needs %s, got '%s'", l->name,
					 c == 'a' ? "a number 0..7" : "a hex number",
					 optarg);
		}
	}
	if (optind < argc)
		return cli_usage("seq", "unexpected argument '%s'", argv[optind]);
	return 0;
}

int cmd_seq(int argc, char **argv)
{
	struct seq_opts o = {
		.hash = 0x12345678, .arity = -1, .ip = 0x401000,
		.thunk = 0x402000, .stubs = 0x403000,
	};
	uint8_t mem[SEQ_MAX];
	int err;

	err = seq_parse_args(argc, argv, &o);
	if (err)
		return err < 0 ? CLI_OK : err;
	if (o.as_asm) {
		o.mc = seq_find_in_path(SEQ_MC);
		if (!o.mc) {
			cli_error("seq: --asm needs %s in PATH (Debian: apt-get install llvm-22)",
				SEQ_MC);
			return 1;
		}
	}
	/* the one line that is not a sequence: which set the encoders write */
	printf("# sequence set: %s\n", fi_set_name(o.set));
	err = seq_templates(&o, mem);
	if (!err)
		err = seq_kcfi(&o, mem);
	if (!err)
		err = seq_fineibt(&o, mem);
	if (!err)
		err = seq_bhi(&o, mem);
	if (!err)
		err = seq_plt(&o, mem);
	return err ? 1 : 0;
}

int cmd_seq_help(void)
{
	return seq_help();
}
