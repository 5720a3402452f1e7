// SPDX-License-Identifier: MIT
/*
 * The system-call wrappers and string functions libfineibt.so calls, as
 * its own code instead of imports from libc (libfineibt.so only, linked
 * with --wrap for each name, FI_SO_LIBC in the Makefile).
 *
 * Why: libfineibt.so is linked with -z now (its GOT read-only once
 * relocated: docs/protection.md), so the loader binds every function it
 * imports when the process starts, whether or not the process ever calls
 * it: a symbol lookup through the whole scope (each module's hash table,
 * a string compare and a version check), about 600 instructions each.
 * The first 39 were a third of what the loader spent on libfineibt.so in a
 * hello world (docs/bench.md, "A runtime that costs nothing"). Each is a
 * system call or a short loop, snprintf and vsnprintf the string
 * builder's printf, dladdr the dladdr1 imported anyway; what stays
 * imported is what needs libc's own state (the allocator, the dynamic
 * loader's lists, threads, errno, the environ array itself), and strrchr, which the trap report calls to
 * name an uninstrumented target's file: tests/e2e/trap_reentry.sh
 * interposes it to make a report re-enter the handler, the one way left
 * to reach that guard (docs/traps.md "Reports and interposers").
 *
 * It also means an LD_PRELOAD interposer of one of these (libfaketime
 * defines several) is never entered from inside the runtime, which
 * src/seq/rawsys.h already did by hand for the start-up's own calls.
 *
 * Conventions are libc's: -1 (MAP_FAILED) and errno on failure, the same
 * system calls glibc makes. pthread_sigmask and sigfillset leave out the
 * two signals glibc keeps for itself (cancellation and set*id), as glibc
 * does. This file is built with -fno-builtin (Makefile) so that the
 * compiler never turns a loop here back into a call to the function the
 * loop implements; the bulk copies use rep movsq / rep stosq.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "rawsys.h"
#include "strbuf.h"

/* glibc's internal signals: SIGCANCEL and SIGSETXID. */
#define FI_SIGCANCEL	32
#define FI_SIGSETXID	33
/* The kernel's sigset: 64 signals. */
#define FI_KSIGSET	8

static long fi_ret(long r)
{
	if ((unsigned long)r > -4096UL) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* ---------------------------------------------------------- system calls */

int __wrap_close(int fd)
{
	return (int)fi_ret(fi_sys3(SYS_close, fd, 0, 0));
}

int __wrap_open(const char *path, int flags, ...)
{
	int mode = 0;

	if (flags & (O_CREAT | __O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = va_arg(ap, int);
		va_end(ap);
	}
	return (int)fi_ret(fi_sys6(SYS_openat, AT_FDCWD, (long)path, flags,
				   mode, 0, 0));
}

ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off)
{
	return fi_ret(fi_sys6(SYS_pread64, fd, (long)buf, (long)n, off, 0, 0));
}

ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
	return fi_ret(fi_sys3(SYS_write, fd, (long)buf, (long)n));
}

ssize_t __wrap_readlink(const char *path, char *buf, size_t n)
{
	return fi_ret(fi_sys3(SYS_readlink, (long)path, (long)buf, (long)n));
}

int __wrap_fstat(int fd, struct stat *st)
{
	return (int)fi_ret(fi_sys3(SYS_fstat, fd, (long)st, 0));
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off)
{
	return (void *)fi_ret(fi_sys6(SYS_mmap, (long)addr, (long)len, prot,
				      flags, fd, off));
}

int __wrap_munmap(void *addr, size_t len)
{
	return (int)fi_ret(fi_sys3(SYS_munmap, (long)addr, (long)len, 0));
}

int __wrap_mprotect(void *addr, size_t len, int prot)
{
	return (int)fi_ret(fi_sys3(SYS_mprotect, (long)addr, (long)len, prot));
}

void *__wrap_mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *to = NULL;

	if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) {
		va_list ap;

		va_start(ap, flags);
		to = va_arg(ap, void *);
		va_end(ap);
	}
	return (void *)fi_ret(fi_sys6(SYS_mremap, (long)old, (long)old_len,
				      (long)new_len, flags, (long)to, 0));
}

int __wrap_madvise(void *addr, size_t len, int advice)
{
	return (int)fi_ret(fi_sys3(SYS_madvise, (long)addr, (long)len, advice));
}

int __wrap_mincore(void *addr, size_t len, unsigned char *vec)
{
	return (int)fi_ret(fi_sys3(SYS_mincore, (long)addr, (long)len,
				   (long)vec));
}

pid_t __wrap_getpid(void)
{
	return (pid_t)fi_sys3(SYS_getpid, 0, 0, 0);
}

int __wrap_sched_yield(void)
{
	return (int)fi_ret(fi_sys3(SYS_sched_yield, 0, 0, 0));
}

ssize_t __wrap_process_vm_readv(pid_t pid, const struct iovec *local,
				unsigned long nlocal,
				const struct iovec *remote,
				unsigned long nremote, unsigned long flags)
{
	return fi_ret(fi_sys6(SYS_process_vm_readv, pid, (long)local,
			      (long)nlocal, (long)remote, (long)nremote,
			      (long)flags));
}

long __wrap_syscall(long nr, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	return fi_ret(fi_sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]));
}

int __wrap_getrlimit(int res, struct rlimit *rl)
{
	return (int)fi_ret(fi_sys6(SYS_prlimit64, 0, res, 0, (long)rl, 0, 0));
}

/* The report's timestamp only (not a hot path): no vDSO. */
int __wrap_clock_gettime(clockid_t clk, struct timespec *ts)
{
	return (int)fi_ret(fi_sys3(SYS_clock_gettime, clk, (long)ts, 0));
}

int __wrap_getpagesize(void)
{
	return (int)getauxval(AT_PAGESZ);
}

long __wrap_sysconf(int name)
{
	if (name == _SC_PAGESIZE)
		return (long)getauxval(AT_PAGESZ);
	errno = EINVAL;
	return -1;
}

/* ---------------------------------------------------------------- signals */

static int fi_sig_ok(int sig)
{
	if (sig > 0 && sig <= 64)
		return 1;
	errno = EINVAL;
	return 0;
}

int __wrap_sigemptyset(sigset_t *set)
{
	memset(set, 0, sizeof(*set));
	return 0;
}

int __wrap_sigfillset(sigset_t *set)
{
	memset(set, 0xff, sizeof(*set));
	set->__val[0] &= ~((1ul << (FI_SIGCANCEL - 1)) |
			   (1ul << (FI_SIGSETXID - 1)));
	return 0;
}

int __wrap_sigaddset(sigset_t *set, int sig)
{
	if (!fi_sig_ok(sig))
		return -1;
	set->__val[0] |= 1ul << (sig - 1);
	return 0;
}

int __wrap_sigismember(const sigset_t *set, int sig)
{
	if (!fi_sig_ok(sig))
		return -1;
	return (set->__val[0] >> (sig - 1)) & 1;
}

int __wrap_sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	return (int)fi_ret(fi_sys6(SYS_rt_sigprocmask, how, (long)set,
				   (long)old, FI_KSIGSET, 0, 0));
}

int __wrap_pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t s;
	long r;

	if (set && (set->__val[0] & ((1ul << (FI_SIGCANCEL - 1)) |
				     (1ul << (FI_SIGSETXID - 1))))) {
		s = *set;
		s.__val[0] &= ~((1ul << (FI_SIGCANCEL - 1)) |
				(1ul << (FI_SIGSETXID - 1)));
		set = &s;
	}
	r = fi_sys6(SYS_rt_sigprocmask, how, (long)set, (long)old, FI_KSIGSET,
		    0, 0);
	return r < 0 ? (int)-r : 0;
}

/* ---------------------------------------------------------------- memory */

void *__wrap_memcpy(void *dst, const void *src, size_t n)
{
	void *d = dst;
	size_t q = n / 8;

	__asm__ volatile("rep movsq" : "+D"(d), "+S"(src), "+c"(q) : : "memory");
	q = n % 8;
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(src), "+c"(q) : : "memory");
	return dst;
}

void *__wrap_memmove(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (d <= s || d >= s + n)
		return __wrap_memcpy(dst, src, n);
	while (n--)
		d[n] = s[n];
	return dst;
}

void *__wrap_memset(void *dst, int c, size_t n)
{
	uint64_t w = 0x0101010101010101ull * (unsigned char)c;
	void *d = dst;
	size_t q = n / 8;

	__asm__ volatile("rep stosq" : "+D"(d), "+c"(q) : "a"(w) : "memory");
	q = n % 8;
	__asm__ volatile("rep stosb" : "+D"(d), "+c"(q) : "a"(w) : "memory");
	return dst;
}

int __wrap_memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;

	for (; n >= 8; n -= 8, x += 8, y += 8) {
		uint64_t u, v;

		__builtin_memcpy(&u, x, 8);
		__builtin_memcpy(&v, y, 8);
		if (u != v)
			break;
	}
	for (; n; n--, x++, y++) {
		if (*x != *y)
			return *x - *y;
	}
	return 0;
}

int __wrap_bcmp(const void *a, const void *b, size_t n)
{
	return __wrap_memcmp(a, b, n);
}

/*
 * Eight bytes a step (a byte equal to @c makes its lane of w ^ rep zero,
 * and (x - 0x01..) & ~x & 0x80.. is non-zero exactly when some lane of x
 * is zero), then the byte: the cache's scan of /proc/self/maps for line
 * ends took 20k instructions a byte at a time.
 */
void *__wrap_memchr(const void *p, int c, size_t n)
{
	const unsigned char *s = p;
	const uint64_t ones = 0x0101010101010101ull, highs = ones << 7;
	const uint64_t rep = ones * (unsigned char)c;

	for (; n >= 8; n -= 8, s += 8) {
		uint64_t w;

		__builtin_memcpy(&w, s, 8);
		w ^= rep;
		if ((w - ones) & ~w & highs)
			break;
	}
	for (; n; n--, s++) {
		if (*s == (unsigned char)c)
			return (void *)s;
	}
	return NULL;
}

/* --------------------------------------------------------------- strings */

size_t __wrap_strlen(const char *s)
{
	const char *p = s;

	while (*p)
		p++;
	return (size_t)(p - s);
}

size_t __wrap_strnlen(const char *s, size_t max)
{
	size_t n = 0;

	while (n < max && s[n])
		n++;
	return n;
}

int __wrap_strcmp(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return (unsigned char)*a - (unsigned char)*b;
}

int __wrap_strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b || !*a)
			return (unsigned char)*a - (unsigned char)*b;
	}
	return 0;
}

char *__wrap_strchr(const char *s, int c)
{
	for (;; s++) {
		if (*s == (char)c)
			return (char *)s;
		if (!*s)
			return NULL;
	}
}

size_t __wrap_strcspn(const char *s, const char *reject)
{
	size_t n = 0;

	for (; s[n]; n++) {
		for (const char *r = reject; *r; r++) {
			if (s[n] == *r)
				return n;
		}
	}
	return n;
}

char *__wrap_strstr(const char *hay, const char *needle)
{
	size_t n = __wrap_strlen(needle);

	for (; *hay; hay++) {
		if (!__wrap_strncmp(hay, needle, n))
			return (char *)hay;
	}
	return n ? NULL : (char *)hay;
}

char *__wrap_stpcpy(char *d, const char *s)
{
	while ((*d = *s)) {
		d++;
		s++;
	}
	return d;
}

char *__wrap_strncpy(char *d, const char *s, size_t n)
{
	size_t i = 0;

	for (; i < n && s[i]; i++)
		d[i] = s[i];
	for (; i < n; i++)
		d[i] = '\0';
	return d;
}

char *__wrap_strcpy(char *d, const char *s)
{
	__wrap_stpcpy(d, s);
	return d;
}

/* ----------------------------------------------------------- environment */

/*
 * libc's own getenv reads environ the same way (the program's setenv and
 * putenv change environ, not a copy). The early start sets environ from
 * the initial stack before anything here runs (early.c).
 */
extern char **environ;

/*
 * Start-up's FINEIBT_* entries, found in one walk (fi_env_startup): the
 * start reads about ten of them (mode, sequences, cache, log, verbose,
 * the test hooks), each a walk over the whole environment. Only between
 * fi_env_startup(true) and (false), which bracket the first start with
 * the runtime's lock held: nothing in between changes the environment
 * (no code of the program runs in this thread; the runtime sets no
 * variable), and another thread's setenv races libc's getenv alike. In
 * order, so that the first of two equal names wins as in a walk.
 *
 * `environ`, not the initial block core/ldenv.c walks for the loader's
 * variables: this is getenv's answer made cheaper, and FINEIBT_* are the
 * runtime's own settings, read when it starts (docs/runtime.md), so they
 * are what the process's environment says then, as libc's getenv (the
 * static runtime's) would say; LD_* are what ld.so read before any code
 * ran and acted on, which a later setenv does not undo. At the first
 * start the two are usually the same array (the early start sets
 * environ to the initial block).
 */
#define FI_ENV_PREFIX	"FINEIBT_"
#define FI_ENV_PLEN	(sizeof(FI_ENV_PREFIX) - 1)
#define FI_ENV_MAX	16
static struct {
	char **env;		/* the environ walked; NULL: walk each time */
	size_t n;
	char *ent[FI_ENV_MAX];
	size_t len[FI_ENV_MAX];	/* of each entry's name (its '=') */
} fi_env_start;

/* Does NUL-terminated @s start with FINEIBT_? (Never reads past its end.) */
static bool fi_env_ours(const char *s)
{
	for (size_t i = 0; i < FI_ENV_PLEN; i++) {
		if (s[i] != FI_ENV_PREFIX[i])
			return false;
	}
	return true;
}

void fi_env_startup(bool on)
{
	size_t n = 0;

	fi_env_start.env = NULL;
	if (!on || !environ)
		return;
	for (char **e = environ; *e; e++) {
		const char *eq;

		if ((*e)[0] != 'F' || !fi_env_ours(*e))
			continue;
		if (n == FI_ENV_MAX)
			return;		/* that many: each getenv walks */
		eq = __wrap_strchr(*e, '=');
		fi_env_start.ent[n] = *e;
		fi_env_start.len[n++] = eq ? (size_t)(eq - *e) : SIZE_MAX;
	}
	fi_env_start.n = n;
	fi_env_start.env = environ;
}

/* @name (@n bytes) among start-up's FINEIBT_* entries; true if asked. */
static bool fi_env_started(const char *name, size_t n, char **val)
{
	*val = NULL;
	if (!fi_env_start.env || fi_env_start.env != environ ||
	    n < FI_ENV_PLEN || !fi_env_ours(name))
		return false;
	for (size_t i = 0; i < fi_env_start.n; i++) {
		char *e = fi_env_start.ent[i];

		if (fi_env_start.len[i] == n &&
		    !__wrap_memcmp(e + FI_ENV_PLEN, name + FI_ENV_PLEN,
				   n - FI_ENV_PLEN)) {
			*val = e + n + 1;
			break;
		}
	}
	return true;
}

char *__wrap_getenv(const char *name)
{
	size_t n = __wrap_strlen(name);
	char c = name[0], *v;

	if (!environ || !n)
		return NULL;
	if (fi_env_started(name, n, &v))
		return v;
	/* The first byte inline: most entries differ there. */
	for (char **e = environ; *e; e++) {
		if ((*e)[0] == c && !__wrap_strncmp(*e, name, n) &&
		    (*e)[n] == '=')
			return *e + n + 1;
	}
	return NULL;
}

/* glibc's test is __libc_enable_secure, which the loader sets from
 * AT_SECURE. */
char *__wrap_secure_getenv(const char *name)
{
	return getauxval(AT_SECURE) ? NULL : __wrap_getenv(name);
}

/* ------------------------------------------------------------ formatting */

/*
 * The runtime's messages, names and errors are formatted by the string
 * builder's printf (src/core/strbuf.c: the conversions the runtime uses,
 * the bytes glibc's would give, no locale, no allocation).
 */
int __wrap_vsnprintf(char *s, size_t n, const char *fmt, va_list ap)
{
	struct fi_strbuf b;
	size_t len;

	fi_strbuf_init(&b, s, n, 0);
	len = fi_strbuf_vprintf(&b, fmt, ap);
	if (len > INT_MAX) {
		errno = EOVERFLOW;
		return -1;
	}
	return (int)len;
}

int __wrap_snprintf(char *s, size_t n, const char *fmt, ...)
{
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = __wrap_vsnprintf(s, n, fmt, ap);
	va_end(ap);
	return len;
}

/* -------------------------------------------------------------- strerror */

/*
 * glibc's messages in the C locale, by number (Linux x86-64: 0..133, two
 * numbers unassigned). The runtime prints them in English whatever the
 * program's locale: the same text for every report, in every log.
 */
static const char *const fi_errmsg[] = {
	[0] = "Success",
	[EPERM] = "Operation not permitted",
	[ENOENT] = "No such file or directory",
	[ESRCH] = "No such process",
	[EINTR] = "Interrupted system call",
	[EIO] = "Input/output error",
	[ENXIO] = "No such device or address",
	[E2BIG] = "Argument list too long",
	[ENOEXEC] = "Exec format error",
	[EBADF] = "Bad file descriptor",
	[ECHILD] = "No child processes",
	[EAGAIN] = "Resource temporarily unavailable",
	[ENOMEM] = "Cannot allocate memory",
	[EACCES] = "Permission denied",
	[EFAULT] = "Bad address",
	[ENOTBLK] = "Block device required",
	[EBUSY] = "Device or resource busy",
	[EEXIST] = "File exists",
	[EXDEV] = "Invalid cross-device link",
	[ENODEV] = "No such device",
	[ENOTDIR] = "Not a directory",
	[EISDIR] = "Is a directory",
	[EINVAL] = "Invalid argument",
	[ENFILE] = "Too many open files in system",
	[EMFILE] = "Too many open files",
	[ENOTTY] = "Inappropriate ioctl for device",
	[ETXTBSY] = "Text file busy",
	[EFBIG] = "File too large",
	[ENOSPC] = "No space left on device",
	[ESPIPE] = "Illegal seek",
	[EROFS] = "Read-only file system",
	[EMLINK] = "Too many links",
	[EPIPE] = "Broken pipe",
	[EDOM] = "Numerical argument out of domain",
	[ERANGE] = "Numerical result out of range",
	[EDEADLOCK] = "Resource deadlock avoided",
	[ENAMETOOLONG] = "File name too long",
	[ENOLCK] = "No locks available",
	[ENOSYS] = "Function not implemented",
	[ENOTEMPTY] = "Directory not empty",
	[ELOOP] = "Too many levels of symbolic links",
	[ENOMSG] = "No message of desired type",
	[EIDRM] = "Identifier removed",
	[ECHRNG] = "Channel number out of range",
	[EL2NSYNC] = "Level 2 not synchronized",
	[EL3HLT] = "Level 3 halted",
	[EL3RST] = "Level 3 reset",
	[ELNRNG] = "Link number out of range",
	[EUNATCH] = "Protocol driver not attached",
	[ENOCSI] = "No CSI structure available",
	[EL2HLT] = "Level 2 halted",
	[EBADE] = "Invalid exchange",
	[EBADR] = "Invalid request descriptor",
	[EXFULL] = "Exchange full",
	[ENOANO] = "No anode",
	[EBADRQC] = "Invalid request code",
	[EBADSLT] = "Invalid slot",
	[EBFONT] = "Bad font file format",
	[ENOSTR] = "Device not a stream",
	[ENODATA] = "No data available",
	[ETIME] = "Timer expired",
	[ENOSR] = "Out of streams resources",
	[ENONET] = "Machine is not on the network",
	[ENOPKG] = "Package not installed",
	[EREMOTE] = "Object is remote",
	[ENOLINK] = "Link has been severed",
	[EADV] = "Advertise error",
	[ESRMNT] = "Srmount error",
	[ECOMM] = "Communication error on send",
	[EPROTO] = "Protocol error",
	[EMULTIHOP] = "Multihop attempted",
	[EDOTDOT] = "RFS specific error",
	[EBADMSG] = "Bad message",
	[EOVERFLOW] = "Value too large for defined data type",
	[ENOTUNIQ] = "Name not unique on network",
	[EBADFD] = "File descriptor in bad state",
	[EREMCHG] = "Remote address changed",
	[ELIBACC] = "Can not access a needed shared library",
	[ELIBBAD] = "Accessing a corrupted shared library",
	[ELIBSCN] = ".lib section in a.out corrupted",
	[ELIBMAX] = "Attempting to link in too many shared libraries",
	[ELIBEXEC] = "Cannot exec a shared library directly",
	[EILSEQ] = "Invalid or incomplete multibyte or wide character",
	[ERESTART] = "Interrupted system call should be restarted",
	[ESTRPIPE] = "Streams pipe error",
	[EUSERS] = "Too many users",
	[ENOTSOCK] = "Socket operation on non-socket",
	[EDESTADDRREQ] = "Destination address required",
	[EMSGSIZE] = "Message too long",
	[EPROTOTYPE] = "Protocol wrong type for socket",
	[ENOPROTOOPT] = "Protocol not available",
	[EPROTONOSUPPORT] = "Protocol not supported",
	[ESOCKTNOSUPPORT] = "Socket type not supported",
	[ENOTSUP] = "Operation not supported",
	[EPFNOSUPPORT] = "Protocol family not supported",
	[EAFNOSUPPORT] = "Address family not supported by protocol",
	[EADDRINUSE] = "Address already in use",
	[EADDRNOTAVAIL] = "Cannot assign requested address",
	[ENETDOWN] = "Network is down",
	[ENETUNREACH] = "Network is unreachable",
	[ENETRESET] = "Network dropped connection on reset",
	[ECONNABORTED] = "Software caused connection abort",
	[ECONNRESET] = "Connection reset by peer",
	[ENOBUFS] = "No buffer space available",
	[EISCONN] = "Transport endpoint is already connected",
	[ENOTCONN] = "Transport endpoint is not connected",
	[ESHUTDOWN] = "Cannot send after transport endpoint shutdown",
	[ETOOMANYREFS] = "Too many references: cannot splice",
	[ETIMEDOUT] = "Connection timed out",
	[ECONNREFUSED] = "Connection refused",
	[EHOSTDOWN] = "Host is down",
	[EHOSTUNREACH] = "No route to host",
	[EALREADY] = "Operation already in progress",
	[EINPROGRESS] = "Operation now in progress",
	[ESTALE] = "Stale file handle",
	[EUCLEAN] = "Structure needs cleaning",
	[ENOTNAM] = "Not a XENIX named type file",
	[ENAVAIL] = "No XENIX semaphores available",
	[EISNAM] = "Is a named type file",
	[EREMOTEIO] = "Remote I/O error",
	[EDQUOT] = "Disk quota exceeded",
	[ENOMEDIUM] = "No medium found",
	[EMEDIUMTYPE] = "Wrong medium type",
	[ECANCELED] = "Operation canceled",
	[ENOKEY] = "Required key not available",
	[EKEYEXPIRED] = "Key has expired",
	[EKEYREVOKED] = "Key has been revoked",
	[EKEYREJECTED] = "Key was rejected by service",
	[EOWNERDEAD] = "Owner died",
	[ENOTRECOVERABLE] = "State not recoverable",
	[ERFKILL] = "Operation not possible due to RF-kill",
	[EHWPOISON] = "Memory page has hardware error",
	[41] = "Unknown error 41",
	[58] = "Unknown error 58",
};

char *__wrap_strerror(int err)
{
	/* Numbers no system call returns: glibc's text, in one of a few
	 * buffers taken in turn (glibc's is per thread). */
	static char unknown[8][32];
	static unsigned int next;
	struct fi_strbuf b;
	char *buf;

	if (err >= 0 && (size_t)err < sizeof(fi_errmsg) / sizeof(fi_errmsg[0]) &&
	    fi_errmsg[err])
		return (char *)fi_errmsg[err];
	buf = unknown[__atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) % 8];
	fi_strbuf_init(&b, buf, sizeof(unknown[0]), 0);
	fi_strbuf_printf(&b, "Unknown error %d", err);
	return buf;
}

/* ---------------------------------------------------------------- dladdr */

/*
 * dladdr is dladdr1 without the extra answer (glibc: both are _dl_addr),
 * and dladdr1 is imported anyway (coarsetrap.c, foreign.c, rtone.c).
 */
int __wrap_dladdr(const void *addr, Dl_info *info)
{
	struct link_map *map;

	return dladdr1(addr, info, (void **)&map, RTLD_DL_LINKMAP);
}

/* ------------------------------------------------------ without crt files */

/*
 * libfineibt.so is linked without the compiler's crt files (-nostartfiles,
 * Makefile): crtbeginS.o brought a destructor calling __cxa_finalize and
 * the weak references _ITM_registerTMCloneTable,
 * _ITM_deregisterTMCloneTable and __gmon_start__, four symbols the loader
 * looked up at every start (the weak ones through the whole scope, to
 * find nothing). Constructors and destructors need none of it: the loader
 * runs DT_INIT_ARRAY and DT_FINI_ARRAY itself. What the crt file gave that
 * is used is __dso_handle, the handle pthread_atfork passes on (libc's
 * libc_nonshared.a): the library's own address, as crtbeginS.o defines it.
 * The library is linked -z nodelete: nothing ever unregisters its fork
 * handlers now, and nothing could unload it safely anyway (the kernel's
 * SIGILL handler, the interposers and veneers other modules hold are its
 * code).
 */
void *const __dso_handle __attribute__((visibility("hidden"))) = (void *)&__dso_handle;
