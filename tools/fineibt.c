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
	for (c = fi_cmds; c->name; c++) {
		if (strlen(c->args) > 28)
			printf("  %-8s %s\n  %-8s %-28s %s\n", c->name, c->args,
			       "", "", c->summary);
		else
			printf("  %-8s %-28s %s\n", c->name, c->args, c->summary);
	}
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
