/* SPDX-License-Identifier: MIT */
/* fineibt: the command-line tool. A dispatch table of commands (bpftool-style). */
#include <stdio.h>
#include <string.h>

#include "fineibt.h"
#include "cli.h"

static int cmd_version(int argc, char **argv)
{
	if (argc > 1)
		return cli_usage("version", "takes no arguments");
	printf("fineibt %s\n", fineibt_version());
	return 0;
}

static int cmd_help(int argc, char **argv);

static const struct fi_cmd fi_cmds[] = {
	{ "help",    cmd_help,    "[COMMAND]", "show help for all or one command" },
	{ "version", cmd_version, "", "print the version" },
	{ "demo",    cmd_demo,    "", "attack a program built with fineibt-cc in every mode",
	  cmd_demo_help },
	FI_EXTRA_CMDS
	{ NULL, NULL, NULL, NULL },
};

static const struct fi_cmd *fi_find_cmd(const char *name)
{
	for (const struct fi_cmd *c = fi_cmds; c->name; c++) {
		if (!strcmp(c->name, name))
			return c;
	}
	return NULL;
}

/*
 * One command of the overview: its synopsis (every option its own help
 * names: tests/e2e/cli_docs.sh) and its summary. A synopsis too long for
 * the column is printed alone, wrapped before a '[' or '|' word (an
 * option stays with its argument) ahead of column 76, and the summary
 * goes on a line of its own.
 */
static size_t help_unit(const char *a)
{
	size_t n = strcspn(a, " ");

	while (a[n] == ' ' && a[n + 1] != '[' && a[n + 1] != '|')
		n += 1 + strcspn(a + n + 1, " ");
	return n;
}

static void help_line(const struct fi_cmd *c)
{
	const char *a = c->args;
	int col = 0;

	if (strlen(a) <= 28) {
		printf("  %-8s %-28s %s\n", c->name, a, c->summary);
		return;
	}
	printf("  %-8s", c->name);
	while (*a) {
		size_t w = help_unit(a);

		if (col && col + 1 + (int)w > 65) {
			printf("\n  %-8s", "");
			col = 0;
		}
		printf(" %.*s", (int)w, a);
		col += 1 + (int)w;
		a += w + strspn(a + w, " ");
	}
	printf("\n  %-8s %-28s %s\n", "", "", c->summary);
}

static int cmd_help(int argc, char **argv)
{
	const struct fi_cmd *c;

	if (argc > 2)
		return cli_usage("help", "one COMMAND at a time");
	if (argc > 1) {
		c = fi_find_cmd(argv[1]);
		if (!c)
			return cli_usage(NULL, "unknown command '%s'", argv[1]);
		if (c->help_fn)
			return c->help_fn();
		printf("Usage: fineibt %s%s%s\n  %s\n", c->name, *c->args ? " " : "",
		       c->args, c->summary);
		return 0;
	}
	printf("Usage: fineibt COMMAND [OPTIONS] [ARGS]\n\n"
	       "FineIBT control-flow integrity for userspace programs built with\n"
	       "clang -fsanitize=kcfi.\n\nCommands:\n");
	for (c = fi_cmds; c->name; c++)
		help_line(c);
	printf("\n'fineibt help COMMAND' or 'fineibt COMMAND --help' for details\n"
	       "('fineibt --help' is 'fineibt help', 'fineibt --version' 'fineibt version');\n"
	       "manuals: fineibt(1), fineibt-cc(1), fineibt-cfi(7), fineibt-cached(8).\n"
	       "Exit status: 0 done, 1 failed, 2 usage error.\n");
	return 0;
}

int main(int argc, char **argv)
{
	const struct fi_cmd *c;

	if (argc < 2)
		return cli_usage(NULL, "no command");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(1, argv);
	if (!strcmp(argv[1], "--version"))
		return cmd_version(1, argv);
	c = fi_find_cmd(argv[1]);
	if (!c)
		return cli_usage(NULL, "unknown command '%s'", argv[1]);
	if (argc > 2 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
		char *hargv[] = { "help", argv[1], NULL };

		return cmd_help(2, hargv);
	}
	return c->fn(argc - 1, argv + 1);
}
