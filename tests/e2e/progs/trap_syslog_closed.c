// SPDX-License-Identifier: MIT
/*
 * trap_syslog_closed: a program run with FINEIBT_LOG=syslog:PATH that
 * closes every descriptor above 2 (closefrom(3), as daemons do), then
 * makes socket pairs until one end takes the number the system log's
 * socket had, then fails a CFI check (run under warn). Prints what the
 * other end of that pair received ("peer: ..."; nothing: "peer: none").
 * The report must not be sent to a socket the program made. With the
 * argument "unlink" it also removes the log's socket (PATH) before the
 * failure: then no new socket can reach it either.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef long (*tc_fn)(long);
static int tc_other(int a) { return a + 1; }
void *volatile tc_ptr = (void *)tc_other;

/* The first socket descriptor above 2: the runtime's, at start-up. */
static int tc_log_socket(void)
{
	for (int fd = 3; fd < 1024; fd++) {
		char link[32], name[64];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, name, sizeof(name) - 1);
		if (n > 0 && !strncmp(name, "socket:", 7))
			return fd;
	}
	return -1;
}

int main(int argc, char **argv)
{
	int logfd = tc_log_socket(), sv[2], peer = -1;
	char buf[4096];
	ssize_t n;

	if (logfd < 0) {
		printf("no log socket\n");
		return 2;
	}
	closefrom(3);
	for (int i = 0; i < 64 && peer < 0; i++) {
		if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv))
			return 3;
		if (sv[0] == logfd)
			peer = sv[1];
		else if (sv[1] == logfd)
			peer = sv[0];
	}
	if (peer < 0) {
		printf("number %d not taken\n", logfd);
		return 4;
	}
	if (argc > 1 && !strcmp(argv[1], "unlink") &&
	    unlink(getenv("FINEIBT_LOG") + strlen("syslog:")))
		return 5;
	((tc_fn)tc_ptr)(1);
	n = recv(peer, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	if (n > 0) {
		buf[n] = '\0';
		printf("peer: %s\n", buf);
	} else {
		printf("peer: none\n");
	}
	return 0;
}
