// SPDX-License-Identifier: MIT
/*
 * rt_env: run PROG with exactly the environment entries given, in order,
 * duplicates and entries without '=' included (what env(1) and shells
 * cannot make): rt_env_exec PROG [ENTRY...].
 */
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char *args[] = { argv[1], NULL };

	if (argc < 2) {
		fprintf(stderr, "usage: rt_env_exec PROG [ENTRY...]\n");
		return 2;
	}
	argv[argc] = NULL;
	execve(argv[1], args, argv + 2);
	perror("rt_env_exec: execve");
	return 127;
}
