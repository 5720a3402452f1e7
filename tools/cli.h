/* SPDX-License-Identifier: MIT */
/*
 * The CLI's commands. Each lives in tools/cmd_<name>.c and is listed in
 * FI_EXTRA_CMDS below; main() in fineibt.c dispatches. Commands print
 * "Error: ..." on stderr and return non-zero on failure.
 */
#ifndef FI_CLI_H
#define FI_CLI_H

struct fi_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);	/* argv[0] is the command name */
	const char *args;
	const char *summary;
	int (*help_fn)(void);			/* detailed help, optional */
};

int cmd_demo(int argc, char **argv);

/* Commands added by later work register here (one line each). */
#define FI_EXTRA_CMDS

#endif
