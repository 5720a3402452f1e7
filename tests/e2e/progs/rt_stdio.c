// SPDX-License-Identifier: MIT
/*
 * rt_stdio: which files descriptors 0, 1 and 2 are in a program started
 * with them closed ("start"), and in the fork child of a program that
 * closed them, as a daemon does, after the child dlopen'ed a kCFI library
 * ("fork"; the child's runtime opens /proc/self/mem again there). The
 * runtime's own descriptors must not take these numbers: a program's
 * next open expects 0, and whatever holds 2 receives the reports.
 * Prints "fd0=closed fd1=closed fd2=closed", or the file a number names,
 * into OUT (opened after the check).
 * Usage: rt_stdio start|fork OUT [LIB]
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void sd_look(char *buf, size_t len)
{
	size_t at = 0;

	for (int fd = 0; fd < 3; fd++) {
		char link[32], name[256];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, name, sizeof(name) - 1);
		if (n < 0)
			snprintf(name, sizeof(name), "closed");
		else
			name[n] = '\0';
		at += (size_t)snprintf(buf + at, len - at, "%sfd%d=%s",
				       fd ? " " : "", fd, name);
	}
}

static int sd_put(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		return 1;
	dprintf(fd, "%s\n", s);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	char buf[1024];
	long (*call)(long);
	void *h;
	pid_t pid;
	int st;

	if (argc < 3)
		return 2;
	if (!strcmp(argv[1], "start")) {
		sd_look(buf, sizeof(buf));
		return sd_put(argv[2], buf);
	}
	if (argc < 4)
		return 2;
	close(0);
	close(1);
	close(2);
	pid = fork();
	if (pid < 0)
		return 3;
	if (pid == 0) {
		h = dlopen(argv[3], RTLD_NOW);
		call = h ? (long (*)(long))dlsym(h, "sl_call") : NULL;
		if (!call || call(21) != 42)
			_exit(4);
		sd_look(buf, sizeof(buf));
		_exit(sd_put(argv[2], buf));
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return 5;
	return WEXITSTATUS(st);
}
