/* SPDX-License-Identifier: MIT */
/*
 * FINEIBT_LOG=syslog[:PATH]: the CFI failure reports of a program whose
 * stderr goes nowhere (a daemon, a service) reach the system log, as the
 * kernel's CFI reports reach its log (docs/ecosystem.md, "FINEIBT_LOG=syslog:
 * the system log").
 *
 * syslog(3) is not async-signal-safe (it takes a lock and formats with
 * stdio), and the report is written from the SIGILL handler. So the
 * socket is opened at start-up, before main, and kept in the read-only
 * runtime state with the path it was connected to and the program's
 * name; the handler sends one datagram per report line with sendmsg(2),
 * the "<PRI>name[pid]: " prefix and the line as two iovecs (no copy, a
 * small stack). A log daemon restarted since start-up has a new socket:
 * the handler connects again once and resends. A program that closed
 * the kept socket (closefrom(3) at a daemon's start) gets a socket of
 * the handler's own for each report, connected to the same path and
 * closed again: the state, read-only then, is not written, and a number
 * the program reused is never written to.
 *
 * Raw system calls throughout: at start-up a program's interposer of
 * socket or connect is not rewritten yet, and the handler runs none.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "logsink.h"
#include "print.h"
#include "rawsys.h"
#include "runtime.h"
#include "strbuf.h"

#define FI_SYSLOG_PATH	"/dev/log"
#define FI_LOG_USER	(1 << 3)	/* facility LOG_USER */
#define FI_LOG_CRIT	2
#define FI_LOG_WARNING	4

bool fi_logsink_is_syslog(const char *v)
{
	return v && !strncmp(v, "syslog", 6) && (!v[6] || v[6] == ':');
}

static int fi_logsink_connect(int fd, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	memcpy(sa.sun_path, path, strnlen(path, sizeof(sa.sun_path) - 1));
	return (int)fi_sys3(SYS_connect, fd, (long)&sa, sizeof(sa));
}

int fi_logsink_open(bool secure)
{
	const char *v = getenv("FINEIBT_LOG");
	const char *path = FI_SYSLOG_PATH;
	struct fi_rt_syslog s = { 0 };
	struct stat st;
	long fd;
	int err;

	if (!fi_logsink_is_syslog(v))
		return 0;
	if (v[6] == ':' && secure)
		fi_warn("warning: FINEIBT_LOG=%.120s: a privileged (AT_SECURE) process "
			"logs to " FI_SYSLOG_PATH " only; PATH ignored\n", v);
	else if (v[6] == ':')
		path = v + 7;
	if (strlen(path) >= sizeof(s.path)) {
		fi_warn("warning: FINEIBT_LOG=%.64s...: socket path longer than %zu "
			"bytes; CFI failures are reported on stderr only\n", v,
			sizeof(s.path) - 1);
		return -ENAMETOOLONG;
	}
	fd = fi_fd_above_stdio(fi_sys3(SYS_socket, AF_UNIX,
				       SOCK_DGRAM | SOCK_CLOEXEC, 0));
	err = fd < 0 ? (int)fd : fi_logsink_connect((int)fd, path);
	if (err < 0) {
		if (fd >= 0)
			fi_raw_close((int)fd);
		/* @v is "syslog:" and a path that fits sun_path (above). */
		fi_warn("warning: FINEIBT_LOG=%s: cannot reach the system log at %s "
			"(%s); CFI failures are reported on stderr only\n", v,
			path, strerror(-err));
		return err;
	}
	if (fi_raw_fstat((int)fd, &st)) {
		fi_raw_close((int)fd);
		return -EBADF;
	}
	s.sock1 = (int)fd + 1;
	s.dev = (uint64_t)st.st_dev;
	s.ino = (uint64_t)st.st_ino;
	memcpy(s.path, path, strlen(path) + 1);
	strncpy(s.ident, program_invocation_short_name, sizeof(s.ident) - 1);
	err = fi_rt_set_syslog(&s);
	if (err)
		fi_raw_close((int)fd);
	return err;
}

/*
 * "<PRI>ident[pid]: " into @p[@len]; its length. The ident is cut at
 * its field's size: the state holds it without a NUL when it fills it.
 */
static size_t fi_logsink_prefix(char *p, size_t len,
				const struct fi_rt_syslog *s, bool warn)
{
	char ident[sizeof(s->ident) + 1];
	struct fi_strbuf b;

	memcpy(ident, s->ident, sizeof(s->ident));
	ident[sizeof(s->ident)] = '\0';
	fi_strbuf_init(&b, p, len, 0);
	fi_strbuf_char(&b, '<');
	fi_strbuf_dec(&b, FI_LOG_USER | (warn ? FI_LOG_WARNING : FI_LOG_CRIT), 1);
	fi_strbuf_char(&b, '>');
	fi_strbuf_str(&b, ident);
	fi_strbuf_char(&b, '[');
	fi_strbuf_dec(&b, (uint64_t)fi_sys3(SYS_getpid, 0, 0, 0), 1);
	fi_strbuf_str(&b, "]: ");
	return b.len;
}

static long fi_logsink_sendmsg(int fd, struct iovec *iov)
{
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

	return fi_sys3(SYS_sendmsg, fd, (long)&mh, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/*
 * A socket of the handler's own to the path opened at start-up, for one
 * report (the program closed the kept one): above 0-2, whatever the
 * program left open, so a stderr copy written meanwhile never reaches
 * it. The descriptor, or -errno.
 */
static int fi_logsink_reopen(const struct fi_rt_syslog *s)
{
	long fd = fi_fd_above_stdio(fi_sys3(SYS_socket, AF_UNIX,
					    SOCK_DGRAM | SOCK_CLOEXEC, 0));
	int err;

	if (fd < 0)
		return (int)fd;
	err = fi_logsink_connect((int)fd, s->path);
	if (err < 0) {
		fi_raw_close((int)fd);
		return err;
	}
	return (int)fd;
}

void fi_logsink_send(bool warn, const char *text, size_t n)
{
	static bool warned, closed;
	const struct fi_rt_syslog *s = &fi_rt()->syslog;
	struct stat st;
	int fd = s->sock1 - 1;
	bool own = false;
	char pre[96];
	struct iovec iov[2] = { { pre, 0 } };
	size_t at = 0;
	long r = 0;

	if (fd < 0)
		return;
	/*
	 * A program that closes descriptors it did not open (closefrom(3),
	 * a daemon's loop over every number) closed this one too, and the
	 * number may be a socket of its own now, connected to a client:
	 * the kept number is used only while it is the socket opened at
	 * start-up, and a socket of this report's own goes to the same path
	 * otherwise.
	 */
	if (fi_raw_fstat(fd, &st) || (uint64_t)st.st_dev != s->dev ||
	    (uint64_t)st.st_ino != s->ino) {
		static const char msg[] = "fineibt: warning: FINEIBT_LOG=syslog: "
			"the program closed the system log's socket and a new one "
			"cannot reach it; reports are on stderr only\n";

		fd = fi_logsink_reopen(s);
		if (fd < 0) {
			if (!__atomic_exchange_n(&closed, true, __ATOMIC_RELAXED))
				fi_raw_write(STDERR_FILENO, msg, sizeof(msg) - 1);
			return;
		}
		own = true;
	}
	iov[0].iov_len = fi_logsink_prefix(pre, sizeof(pre), s, warn);
	while (at < n && r >= 0) {
		const char *nl = memchr(text + at, '\n', n - at);
		size_t len = (nl ? (size_t)(nl - text) : n) - at;

		iov[1].iov_base = (void *)(text + at);
		iov[1].iov_len = len;
		r = fi_logsink_sendmsg(fd, iov);
		/* The log daemon restarted: its socket is a new one. */
		if (r == -ECONNREFUSED || r == -ENOTCONN)
			r = fi_logsink_connect(fd, s->path) < 0 ? r :
			    fi_logsink_sendmsg(fd, iov);
		at += len + 1;
	}
	if (own)
		fi_raw_close(fd);
	if (r < 0 && !__atomic_exchange_n(&warned, true, __ATOMIC_RELAXED)) {
		static const char msg[] = "fineibt: warning: FINEIBT_LOG=syslog: "
			"the system log did not take the report; it is on stderr only\n";

		fi_raw_write(STDERR_FILENO, msg, sizeof(msg) - 1);
	}
}
