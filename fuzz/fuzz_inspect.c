/* SPDX-License-Identifier: MIT */
/*
 * `fineibt inspect` on arbitrary bytes: the CLI's own cmd_inspect() (this
 * harness links tools/cmd_inspect.c), text and JSON, with --list, on a
 * memfd holding the input. Its output goes to /dev/null.
 */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli.h"
#include "fuzz.h"

static int fd = -1;
static char path[64];
static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fd = memfd_create("fuzz-inspect", 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	devnull = fopen("/dev/null", "w");
	fuzz_silence();
	return 0;
}

static void run(const char *a, const char *b)
{
	char *argv[] = { "inspect", path, (char *)a, (char *)b, NULL };
	FILE *out = stdout, *err = stderr;

	stdout = devnull;
	stderr = devnull;
	cmd_inspect(b ? 4 : 3, argv);
	fflush(devnull);
	stdout = out;
	stderr = err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fd < 0 || !devnull || ftruncate(fd, 0) ||
	    pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	run("--list", NULL);
	run("--json", "--list");
	return 0;
}
