/* SPDX-License-Identifier: MIT */
/*
 * The CLI's one argument parser and one message format. Every command
 * parses with cli_getopt (getopt_long, with our messages instead of
 * getopt's) and reports through cli_error / cli_usage:
 *
 *   fineibt: error: patch: unknown option '--bogus'; try 'fineibt help patch'
 *   fineibt: error: prog.so: not an ELF file
 *
 * Exit status: CLI_OK, CLI_FAIL (the command could not do its job) or
 * CLI_USAGE (the command line is wrong); man/fineibt.1, EXIT STATUS.
 * Modes are printed in one spelling (cli_mode_str, insp_mode).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fineibt.h"
#include "image.h"
#include "cli.h"

static void cli_vmsg(const char *kind, const char *cmd, const char *fmt,
		     va_list ap)
{
	char line[1024];
	int n;

	n = snprintf(line, sizeof(line), "fineibt: %s: ", kind);
	if (cmd && n >= 0 && (size_t)n < sizeof(line))
		n += snprintf(line + n, sizeof(line) - (size_t)n, "%s: ", cmd);
	if (n >= 0 && (size_t)n < sizeof(line))
		vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	/* One write: the line never interleaves with another process's. */
	fprintf(stderr, "%s\n", line);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vmsg("error", NULL, fmt, ap);
	va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vmsg("warning", NULL, fmt, ap);
	va_end(ap);
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (cmd)
		cli_error("%s: %s; try 'fineibt help %s'", cmd, msg, cmd);
	else
		cli_error("%s; try 'fineibt help'", msg);
	return CLI_USAGE;
}

/* The option as the user wrote it, without an "=value". */
static void cli_opt_name(char *buf, size_t len, const char *arg, int opt)
{
	if (arg && !strncmp(arg, "--", 2)) {
		snprintf(buf, len, "%.*s", (int)strcspn(arg, "="), arg);
		return;
	}
	snprintf(buf, len, "-%c", opt ? opt : '?');
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *longopts)
{
	char spec[64], name[64];
	const char *arg;
	bool stop = shortopts[0] == '+';
	int c;

	/* ':' first (after '+'): a missing argument returns ':', not '?'. */
	snprintf(spec, sizeof(spec), "%s:%s", stop ? "+" : "",
		 shortopts + stop);
	opterr = 0;
	c = getopt_long(argc, argv, spec, longopts, NULL);
	if (c != '?' && c != ':')
		return c;
	arg = optind > 0 && optind <= argc ? argv[optind - 1] : NULL;
	cli_opt_name(name, sizeof(name), arg, optopt);
	if (c == ':')
		cli_usage(cmd, "option '%s' needs an argument", name);
	else if (optopt && arg && !strncmp(arg, "--", 2) && strchr(arg, '='))
		cli_usage(cmd, "option '%s' takes no argument", name);
	else
		cli_usage(cmd, "unknown option '%s'", name);
	return '?';
}

void cli_getopt_reset(void)
{
	optind = 1;
	opterr = 0;
}

/* Every mode the CLI prints goes through here: one spelling, the words
 * FINEIBT_CFI and --cfi= take (fineibt-cfi(7)). */
void cli_mode_str(const struct fineibt_config *cfg, char *buf, size_t len)
{
	fineibt_config_str(cfg, buf, len);
}

/* The mode the sites are in, as a cfi= list; "mixed" when they disagree. */
void insp_mode(const struct fi_image *im, char *buf, size_t len)
{
	struct fineibt_config cfg;

	if (fi_image_mode(im, &cfg) < 0) {
		snprintf(buf, len, "mixed");
		return;
	}
	/* Randomisation cannot be seen in the bytes: only the note knows. */
	if (!im->note.present)
		cfg.flags |= FINEIBT_F_RAND;
	cli_mode_str(&cfg, buf, len);
}

/* @s as a JSON string: names are bytes, kept ASCII (\uXXXX). */
void cli_json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}
