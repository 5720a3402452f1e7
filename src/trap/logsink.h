/* SPDX-License-Identifier: MIT */
/*
 * FINEIBT_LOG=syslog: CFI failure reports in the system log (trap/logsink.c).
 */
#ifndef FI_LOGSINK_H
#define FI_LOGSINK_H

#include <stdbool.h>
#include <stddef.h>

/* Does FINEIBT_LOG value @v name the system log ("syslog", "syslog:PATH")? */
bool fi_logsink_is_syslog(const char *v);

/*
 * At start-up, if FINEIBT_LOG asks for the system log: open an AF_UNIX
 * datagram socket, connect it to /dev/log (or PATH) and keep it in the
 * read-only runtime state. @secure (AT_SECURE): PATH is not honoured.
 * Where there is no log socket (a container, a seccomp filter), one
 * warning on stderr; reports then go to stderr only. Returns 0 or -errno.
 */
int fi_logsink_open(bool secure);

/*
 * From the SIGILL handler: send each line of the text report @text (@n
 * bytes) as one datagram "<PRI>ident[pid]: line" (RFC 3164 without a
 * timestamp: the receiver stamps it), severity LOG_CRIT, LOG_WARNING
 * with @warn. Nothing when no system log was asked for. Async-signal-safe.
 */
void fi_logsink_send(bool warn, const char *text, size_t n);

#endif
