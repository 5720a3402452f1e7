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
int cmd_seq(int argc, char **argv);
int cmd_seq_help(void);
int cmd_patch(int argc, char **argv);
int cmd_patch_help(void);
int cmd_inspect(int argc, char **argv);
int cmd_inspect_help(void);
/* tools/cmd_inspect.c: the mode an image's sites are in, as a cfi= list. */
struct fi_image;
void insp_mode(const struct fi_image *im, char *buf, size_t len);
/* tools/cmd_inspect_ext.c: --diff and --pid; -1 if neither is asked for. */
int cmd_inspect_ext(int argc, char **argv);
/*
 * tools/cmd_inspect_audit.c: the forward-edge holes of a file no CFI
 * check covers (RELRO, BIND_NOW, writable GOT, executable stack, text
 * relocations, a setuid/setgid file's RUNPATH that others can change).
 * insp_audit returns 0 or -1 (cannot read); valid is false
 * for a file that is not an executable or shared object.
 */
#include <stdbool.h>
#include <stddef.h>
struct insp_audit {
	bool valid, dynamic, relro, bind_now, has_got, writable_got;
	bool exec_stack, textrel;
	/* Set-user/group-ID, with a RUNPATH/RPATH entry others can change. */
	bool setid, unsafe_runpath;
	char runpath_why[320];
};
int insp_audit(const char *path, struct insp_audit *a);
const char *insp_relro_name(const struct insp_audit *a);
/* Print the findings ("  audit: ..." lines, or JSON strings); their count. */
size_t insp_audit_print(const struct insp_audit *a, bool json);
int cmd_run(int argc, char **argv);
int cmd_run_help(void);
int cmd_cached(int argc, char **argv);
int cmd_cached_help(void);

/* Commands added by later work register here (one line each). */
#define FI_EXTRA_CMDS \
	{ "patch", cmd_patch, "FILE -o OUT [--cfi=LIST]", "statically rewrite a kCFI ELF file into a cfi= mode", cmd_patch_help }, \
	{ "inspect", cmd_inspect, "FILE [--json] [--list] | --diff A B | --pid PID", "report the kCFI/FineIBT sites of an ELF file", cmd_inspect_help }, \
	{ "seq", cmd_seq, "[--hash HEX] [--arity N] [--ip HEX] [--asm]", "print every byte sequence (templates and encoders)", cmd_seq_help }, \
	{ "run", cmd_run, "[--cfi=LIST] [--verbose] -- PROG [ARGS]", "run a kCFI program under a cfi= mode (preloads the runtime if needed)", cmd_run_help }, \
	{ "cached", cmd_cached, "[--dir DIR] [--max-size SIZE] [--verbose]", "serve the shared text cache (root; fineibt-cached(8))", cmd_cached_help }, \


#endif
