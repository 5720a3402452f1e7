/* SPDX-License-Identifier: MIT */
/*
 * The CLI's commands. Each lives in tools/cmd_<name>.c and is listed in
 * FI_EXTRA_CMDS below; main() in fineibt.c dispatches. Commands parse
 * with cli_getopt, print "fineibt: error: ..." on stderr (cli_error,
 * cli_usage) and return CLI_FAIL or CLI_USAGE (tools/cli.c).
 */
#ifndef FI_CLI_H
#define FI_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLI_OK		0
#define CLI_FAIL	1	/* the command could not do its job */
#define CLI_USAGE	2	/* the command line is wrong */

/* "fineibt: error: <fmt>" / "fineibt: warning: <fmt>" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "fineibt: error: CMD: <fmt>; try 'fineibt help CMD'"; returns CLI_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * getopt_long for command @cmd, with cli_usage's messages for an unknown
 * option, a missing argument or an argument given to a flag; returns '?'
 * after printing one. A leading '+' in @shortopts stops at the first
 * operand (fineibt run: the program's own options follow). Call
 * cli_getopt_reset() before the first call.
 */
int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *longopts);
void cli_getopt_reset(void);
/*
 * The canonical cfi= spelling of a mode, for what the CLI prints (one
 * place, so that the spelling has one definition: tools/cli.c).
 */
struct fineibt_config;
void cli_mode_str(const struct fineibt_config *cfg, char *buf, size_t len);

struct fi_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);	/* argv[0] is the command name */
	const char *args;
	const char *summary;
	int (*help_fn)(void);			/* detailed help, optional */
};

int cmd_demo(int argc, char **argv);
int cmd_demo_help(void);
int cmd_seq(int argc, char **argv);
int cmd_seq_help(void);
int cmd_patch(int argc, char **argv);
int cmd_patch_help(void);
int cmd_inspect(int argc, char **argv);
int cmd_inspect_help(void);
/* tools/cli.c: @s as a JSON string (quoted, escaped). */
void cli_json_str(const char *s);
/* tools/cli.c: the mode an image's sites are in, as a cfi= list. */
struct fi_image;
void insp_mode(const struct fi_image *im, char *buf, size_t len);
/* tools/cmd_inspect_diff.c: inspect --diff A B. */
int insp_diff(const char *a, const char *b, bool list, bool json);
/* tools/cmd_inspect_pid.c: inspect --pid PID. */
int insp_pid(int pid, bool json);
/*
 * tools/cmd_inspect_audit.c: the forward-edge holes of a file no CFI
 * check covers (RELRO, BIND_NOW, writable GOT, executable stack, text
 * relocations, a setuid/setgid file's RUNPATH that others can change).
 * insp_audit returns 0 or -1 (cannot read); valid is false
 * for a file that is not an executable or shared object.
 */
struct insp_audit {
	bool valid, dynamic, relro, bind_now, has_got, writable_got;
	bool exec_stack, textrel;
	/* Set-user/group-ID, with a RUNPATH/RPATH entry others can change;
	 * with a library named by an absolute path in a directory others can
	 * change (fineibt-cc names the runtime so: docs/runtime.md). */
	bool setid, unsafe_runpath, unsafe_needed;
	char runpath_why[320], needed_why[320];
};
int insp_audit(const char *path, struct insp_audit *a);
const char *insp_relro_name(const struct insp_audit *a);
/* Print the findings ("  audit: ..." lines, or JSON strings); their count. */
size_t insp_audit_print(const struct insp_audit *a, bool json);
/* tools/cmd_inspect_load.c: what a file becomes at load. */
struct fineibt_config;
bool insp_has_runtime(const struct fi_image *im);
bool insp_load_cfg(const struct fi_image *im, struct fineibt_config *cfg);
void insp_load_str(const struct fi_image *im, char *buf, size_t len);
const char *insp_naked_origin(const struct fi_image *im, uint64_t addr);
bool insp_naked_matters(const struct fineibt_config *cfg);
void insp_naked_verdict(const struct fineibt_config *cfg, char *buf, size_t len);
int cmd_run(int argc, char **argv);
int cmd_run_help(void);
int cmd_cached(int argc, char **argv);
int cmd_cached_help(void);

/* Commands added by later work register here (one line each). */
#define FI_EXTRA_CMDS \
	{ "patch", cmd_patch, "FILE -o OUT|--in-place [--cfi=LIST] [--seq=SET] [--key HEX] [--no-dethunk] [-q]", "statically rewrite a kCFI ELF file into a cfi= mode", cmd_patch_help }, \
	{ "inspect", cmd_inspect, "FILE [--json] [--list] | --diff A B [--list] [--json] | --pid PID [--json]", "report the kCFI/FineIBT sites of an ELF file", cmd_inspect_help }, \
	{ "seq", cmd_seq, "[--hash HEX] [--arity N] [--ip HEX] [--thunk HEX] [--stubs HEX] [--seq SET] [--asm]", "print every byte sequence (templates and encoders)", cmd_seq_help }, \
	{ "run", cmd_run, "[--cfi=LIST] [--verbose] [-q] [--] PROG [ARGS]", "run a kCFI program under a cfi= mode (preloads the runtime if needed)", cmd_run_help }, \
	{ "cached", cmd_cached, "[--dir DIR] [--max-size SIZE] [--user-max SIZE] [--no-mount] [--verbose]", "serve the shared text cache (root; fineibt-cached(8))", cmd_cached_help }, \


#endif
