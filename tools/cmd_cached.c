// SPDX-License-Identifier: MIT
/*
 * fineibt cached [--dir DIR] [--max-size SIZE] [--user-max SIZE]
 *                [--no-mount] [--verbose]
 *
 * The shared text cache's service (docs/runtime.md "Shared text",
 * docs/protection.md "The shared text cache", fineibt-cached(8)). Runs as
 * root, in the foreground (a systemd unit), for the whole boot. It:
 *
 *  - keeps DIR (default /run/fineibt) root-owned, mode 0711, on tmpfs
 *    (mounting a tmpfs of its own there when DIR is on another file
 *    system: a directory on disk would keep keys and text across reboots);
 *  - draws a master key once per boot (DIR/master, root 0400) and gives
 *    each user a key derived from it, in DIR/u<uid>/key (the user's, 0400,
 *    immutable where the file system allows), in a root-owned 0711
 *    directory nobody else can list;
 *  - takes fill requests (datagrams on DIR/sock) from processes that
 *    rewrote a module privately: who asks is the kernel's word
 *    (SCM_CREDENTIALS); each module comes with a descriptor of its file
 *    that the process opened for reading (so it may read it: nothing it
 *    could not read reaches its cache); the file read through it must be
 *    the one the request names; it is rewritten with the user's key
 *    (src/offline/cachefill.c) and linked in under the keyed name of its own
 *    identity, root-owned, 0444, within a size cap (the least recently
 *    mapped go first; nothing is written when space is short); each
 *    request by a child, within a deadline (cd_recv: a file whose file
 *    system never answers stalls only that child).
 *
 * Processes only ever read DIR: the runtime never writes there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cachefill.h"
#include "cacheid.h"
#include "cli.h"
#include "fineibt.h"

#define CD_MASTER_MAGIC	"FIBTMST1"
/* FUSE: its server may block a read for ever, or answer two reads apart */
#define CD_FUSE_MAGIC	0x65735546
/*
 * A request's deadline. A fill reads at most a quarter of --max-size from
 * the file, rewrites and writes it: well within this on any disk. A file
 * that takes longer is one whose file system does not answer (a user's
 * FUSE server under an overlay, or one mounted with allow_other).
 */
#define CD_DEADLINE_MS	10000
/*
 * Hex digits of an entry's name the log shows. Only the full name opens
 * an entry (a user's directory cannot be listed): the system log, which
 * more than root may read (groups adm, systemd-journal), must not give
 * one user's entries, whole copies of files that user could read, to
 * another. A prefix is enough to find the entry as root.
 */
#define CD_NAME_SHOWN	"8"
/* Requests abandoned at their deadline that still hang (one per user). */
#define CD_HUNG_MAX	64

struct cd_opts {
	const char *dir;
	uint64_t max, user_max;
	bool mount, verbose;
};

/* The service's state: its directory, master key, usage. */
struct cd_state {
	struct cd_opts o;
	int dfd;			/* DIR, checked */
	int sock;
	struct fineibt_key master;
	uint64_t used;			/* bytes of entries */
	/* the children serving abandoned requests, and for whom */
	struct { pid_t pid; uint32_t uid; } hung[CD_HUNG_MAX];
	size_t nhung;
	bool changed;			/* a child wrote or evicted an entry */
};

/* Who asks (the kernel's word) and the descriptors that came along. */
struct cd_peer {
	pid_t pid;
	uint32_t uid;
	int fd[FI_CACHE_REQ_MAX];
	size_t nfd;
};

static int cd_usage(FILE *f)
{
	fprintf(f,
		"Usage: fineibt cached [--dir DIR] [--max-size SIZE] [--user-max SIZE]\n"
		"                      [--no-mount] [--verbose]\n"
		"  The shared text cache's service (root only; fineibt-cached(8)).\n"
		"  Processes of each user map the text of their kCFI modules,\n"
		"  rewritten once per boot with that user's key, from DIR\n"
		"  instead of rewriting it each.\n"
		"  --dir DIR        the cache (default " FI_CACHE_DIR_DEFAULT "); must be\n"
		"                   root's and on tmpfs, else a tmpfs is mounted there\n"
		"  --max-size SIZE  bytes of entries in all (default 256M; K, M, G)\n"
		"  --user-max SIZE  bytes of entries of one user (default half)\n"
		"  --no-mount       refuse a DIR that is not on tmpfs instead\n"
		"  --verbose        one line per request on stderr\n"
		"  Exit status: 1 it cannot start (not root, a DIR it refuses, no\n"
		"  socket) or its socket fails, 2 usage error; else it serves until\n"
		"  killed.\n");
	return f == stdout ? 0 : 2;
}

int cmd_cached_help(void)
{
	return cd_usage(stdout);
}

static void cd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void cd_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("fineibt cached: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* Why the service cannot start: "fineibt: error: cached: ...", as every
 * command's failures (tools/cli.c); exit 1 follows. */
static void cd_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void cd_fail(const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cli_error("cached: %s", msg);
}

static bool cd_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end == s)
		return false;
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	else if (*end == 'G' || *end == 'g')
		v <<= 30, end++;
	if (*end || !v)
		return false;
	*out = v;
	return true;
}

static int cd_bad_size(const char *opt, const char *s)
{
	return cli_usage("cached", "%s needs a size (a number, optionally K, "
			 "M or G), got '%s'", opt, s);
}

/* The command line, with the CLI's one parser and message format
 * (tools/cli.c): a usage error is one line and exit 2. */
static int cd_parse(int argc, char **argv, struct cd_opts *o)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "max-size", required_argument, NULL, 'm' },
		{ "user-max", required_argument, NULL, 'u' },
		{ "no-mount", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	*o = (struct cd_opts){ .dir = FI_CACHE_DIR_DEFAULT, .max = 256ULL << 20,
			       .mount = true };
	cli_getopt_reset();
	while ((c = cli_getopt("cached", argc, argv, "", opts)) != -1) {
		switch (c) {
		case 'd':
			o->dir = optarg;
			break;
		case 'm':
			if (!cd_size(optarg, &o->max))
				return cd_bad_size("--max-size", optarg);
			break;
		case 'u':
			if (!cd_size(optarg, &o->user_max))
				return cd_bad_size("--user-max", optarg);
			break;
		case 'n':
			o->mount = false;
			break;
		case 'v':
			o->verbose = true;
			break;
		default:
			return CLI_USAGE;
		}
	}
	if (optind < argc)
		return cli_usage("cached", "unexpected argument '%s'",
				 argv[optind]);
	if (!o->user_max)
		o->user_max = o->max / 2;
	if (o->dir[0] != '/' || strlen(o->dir) >= 200)
		return cli_usage("cached", "--dir needs an absolute path shorter "
				 "than 200 bytes, got '%s'", o->dir);
	return 0;
}

/* ------------------------------------------------------------ directory */

static int cd_open_dir(const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};

	return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
}

static bool cd_is_tmpfs(int fd)
{
	struct statfs sf;

	return !fstatfs(fd, &sf) && (unsigned long)sf.f_type == TMPFS_MAGIC;
}

/*
 * Whether this process runs in a mount namespace other than init's (a
 * systemd unit with ProtectSystem=, PrivateTmp=... has one of its own): a
 * tmpfs mounted there would not be seen by the processes the cache
 * serves. 1 yes, 0 no; where pid 1's cannot be read (a pid 1 this process
 * may not inspect: without CAP_SYS_PTRACE, or a sandbox's), the parent's
 * answers instead: a namespace other than the parent's is one of its own
 * (unshare(1), a unit's); -errno when neither can be read, so that it
 * cannot be told. 0 without /proc at all.
 */
static int cd_own_mount_ns(void)
{
	struct stat self, other;
	char parent[64];

	if (stat("/proc/self/ns/mnt", &self))
		return 0;
	if (stat("/proc/1/ns/mnt", &other)) {
		int e = errno;

		snprintf(parent, sizeof(parent), "/proc/%d/ns/mnt", (int)getppid());
		if (stat(parent, &other))
			return -e;
	}
	return self.st_dev != other.st_dev || self.st_ino != other.st_ino;
}

/*
 * DIR, made ready: created 0711 if missing; root's and not writable by
 * group or others (never fixed for someone else's directory: refused);
 * on tmpfs, mounting one of its own unless told not to.
 */
static int cd_prepare_dir(const struct cd_opts *o)
{
	struct stat st;
	char opts[64];
	bool made;
	int fd, ns;

	made = !mkdir(o->dir, 0711);
	if (!made && errno != EEXIST) {
		cd_fail("cannot create %s: %s", o->dir, strerror(errno));
		return -1;
	}
	fd = cd_open_dir(o->dir);
	if (fd < 0 || fstat(fd, &st)) {
		cd_fail("cannot open %s (a symbolic link on its path?): %s",
		       o->dir, strerror(errno));
		return -1;
	}
	if (st.st_uid != 0 || (st.st_mode & 0022)) {
		cd_fail("%s is not root's, or group or others may write it; "
		       "refused", o->dir);
		close(fd);
		return -1;
	}
	if (!cd_is_tmpfs(fd)) {
		close(fd);
		/* Refused below: a directory made here goes again. */
		if (!o->mount) {
			if (made)
				rmdir(o->dir);
			cd_fail("%s is not on tmpfs (--no-mount): refused", o->dir);
			return -1;
		}
		ns = cd_own_mount_ns();
		if (ns < 0) {
			if (made)
				rmdir(o->dir);
			cd_fail("%s is not on tmpfs, and whether a tmpfs mounted "
				"there would be seen by other processes cannot be "
				"told (/proc/1/ns/mnt and the parent's: %s): put "
				"--dir on a tmpfs "
				"such as /run", o->dir, strerror(-ns));
			return -1;
		}
		if (ns) {
			if (made)
				rmdir(o->dir);
			cd_fail("%s is not on tmpfs, and a tmpfs mounted there "
				"by this service would not be seen by other "
				"processes (it runs in a mount namespace of its "
				"own, e.g. systemd's ProtectSystem=): put --dir "
				"on a tmpfs such as /run", o->dir);
			return -1;
		}
		/* room for the cap and cd_fs_room's reserve, a quarter */
		snprintf(opts, sizeof(opts), "mode=0711,size=%llu",
			 (unsigned long long)(o->max + o->max / 3 + (1ULL << 20)));
		if (mount("fineibt", o->dir, "tmpfs",
			  MS_NOSUID | MS_NODEV | MS_STRICTATIME, opts)) {
			int e = errno;

			if (made)
				rmdir(o->dir);
			cd_fail("%s is not on tmpfs and no tmpfs can be mounted "
			       "there: %s", o->dir, strerror(e));
			return -1;
		}
		fd = cd_open_dir(o->dir);
		if (fd < 0 || !cd_is_tmpfs(fd)) {
			cd_fail("cannot open the tmpfs mounted on %s", o->dir);
			return -1;
		}
	}
	if (fchmod(fd, 0711)) {
		cd_fail("cannot chmod %s: %s", o->dir, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Unlink every file of directory @name in @dfd, then the directory. */
static void cd_rmdir(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	while (d && (e = readdir(d))) {
		int f;

		if (e->d_name[0] == '.')
			continue;
		/* the key file is immutable: clear that first */
		f = openat(fd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (f >= 0) {
			int flags = 0;

			ioctl(f, FS_IOC_SETFLAGS, &flags);
			close(f);
		}
		unlinkat(fd, e->d_name, 0);
	}
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
	unlinkat(dfd, name, AT_REMOVEDIR);
}

static bool cd_user_name(const char *n)
{
	if (n[0] != 'u' || !n[1])
		return false;
	for (n++; *n; n++) {
		if (*n < '0' || *n > '9')
			return false;
	}
	return true;
}

/* Every user's directory gone (a new master key: their keys change). */
static void cd_wipe(int dfd)
{
	DIR *d;
	struct dirent *e;
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	d = fd >= 0 ? fdopendir(fd) : NULL;
	while (d && (e = readdir(d))) {
		if (cd_user_name(e->d_name))
			cd_rmdir(dfd, e->d_name);
	}
	if (d)
		closedir(d);
}

/* Write @len bytes at @p into new file @name of @dfd, @mode, owned by @uid. */
static int cd_write_new(int dfd, const char *name, const void *p, size_t len,
			mode_t mode, uid_t uid)
{
	char proc[64];
	int fd = openat(dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0400);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, p, len) != (ssize_t)len || fchown(fd, uid, 0) ||
	    fchmod(fd, mode))
		ret = -errno;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (!ret && linkat(AT_FDCWD, proc, dfd, name, AT_SYMLINK_FOLLOW))
		ret = -errno;
	if (!ret && uid) {
		/* the user cannot chmod or rewrite their key (tmpfs: 6.0) */
		int flags = FS_IMMUTABLE_FL;

		ioctl(fd, FS_IOC_SETFLAGS, &flags);
	}
	close(fd);
	return ret;
}

/* The version of the entries: another one (an upgrade) drops them all. */
static void cd_version(int dfd)
{
	char want[64], got[64] = { 0 };
	int fd, n;

	n = snprintf(want, sizeof(want), "fineibt %s cache %d\n",
		     FINEIBT_VERSION, FI_CACHE_FORMAT);
	fd = openat(dfd, FI_CACHE_VERFILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, got, sizeof(got) - 1) < 0)
			got[0] = '\0';
		close(fd);
		if (!strcmp(got, want))
			return;
	}
	cd_wipe(dfd);
	unlinkat(dfd, FI_CACHE_MASTER, 0);
	unlinkat(dfd, FI_CACHE_VERFILE, 0);
	cd_write_new(dfd, FI_CACHE_VERFILE, want, (size_t)n, 0444, 0);
}

/*
 * The master key: kept in DIR (tmpfs: gone at reboot) so that a restart
 * of the service within a boot keeps every user's key; a new one drops
 * every user's directory.
 */
static int cd_master(struct cd_state *s)
{
	struct {
		char magic[8];
		struct fineibt_key key;
	} m;
	struct stat st;
	int fd = openat(s->dfd, FI_CACHE_MASTER, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0) {
		bool ok = !fstat(fd, &st) && S_ISREG(st.st_mode) && !st.st_uid &&
			  (st.st_mode & 0077) == 0 &&
			  read(fd, &m, sizeof(m)) == sizeof(m) &&
			  !memcmp(m.magic, CD_MASTER_MAGIC, 8);

		close(fd);
		if (ok) {
			s->master = m.key;
			memset(&m, 0, sizeof(m));
			return 0;
		}
		unlinkat(s->dfd, FI_CACHE_MASTER, 0);
	}
	cd_wipe(s->dfd);
	memcpy(m.magic, CD_MASTER_MAGIC, 8);
	if (getrandom(&m.key, sizeof(m.key), 0) != sizeof(m.key) ||
	    cd_write_new(s->dfd, FI_CACHE_MASTER, &m, sizeof(m), 0400, 0)) {
		cd_fail("cannot make the master key: %s", strerror(errno));
		return -1;
	}
	s->master = m.key;
	memset(&m, 0, sizeof(m));
	return 0;
}

/* -------------------------------------------------------------- usage */

struct cd_entry {
	uint32_t uid;
	char name[FI_CACHE_NAME_LEN + 1];
	uint64_t size;
	struct timespec atime;
};

static bool cd_entry_name(const char *n)
{
	return strlen(n) == FI_CACHE_NAME_LEN &&
	       strspn(n, "0123456789abcdef") == FI_CACHE_NAME_LEN;
}

/* Every entry of every user (@uid or all when it is UINT32_MAX). */
static size_t cd_entries(int dfd, uint32_t uid, struct cd_entry **out)
{
	size_t n = 0, cap = 0;
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	*out = NULL;
	while (d && (e = readdir(d))) {
		int ufd;
		DIR *ud;
		struct dirent *f;
		uint32_t u;

		if (!cd_user_name(e->d_name))
			continue;
		u = (uint32_t)strtoul(e->d_name + 1, NULL, 10);
		if (uid != UINT32_MAX && u != uid)
			continue;
		ufd = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY |
			     O_NOFOLLOW | O_CLOEXEC);
		ud = ufd >= 0 ? fdopendir(ufd) : NULL;
		while (ud && (f = readdir(ud))) {
			struct stat st;

			if (!cd_entry_name(f->d_name) ||
			    fstatat(ufd, f->d_name, &st, AT_SYMLINK_NOFOLLOW))
				continue;
			if (n == cap) {
				struct cd_entry *g;

				cap = cap ? 2 * cap : 64;
				g = realloc(*out, cap * sizeof(**out));
				if (!g)
					break;
				*out = g;
			}
			(*out)[n].uid = u;
			strcpy((*out)[n].name, f->d_name);
			(*out)[n].size = (uint64_t)st.st_size;
			(*out)[n].atime = st.st_atim;
			n++;
		}
		if (ud)
			closedir(ud);
		else if (ufd >= 0)
			close(ufd);
	}
	if (d)
		closedir(d);
	return n;
}

static uint64_t cd_used(int dfd, uint32_t uid)
{
	struct cd_entry *e;
	size_t n = cd_entries(dfd, uid, &e);
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += e[i].size;
	free(e);
	return sum;
}

static int cd_by_atime(const void *a, const void *b)
{
	const struct cd_entry *x = a, *y = b;

	if (x->atime.tv_sec != y->atime.tv_sec)
		return x->atime.tv_sec < y->atime.tv_sec ? -1 : 1;
	return (x->atime.tv_nsec > y->atime.tv_nsec) -
	       (x->atime.tv_nsec < y->atime.tv_nsec);
}

/*
 * Does the file system of @dfd have room for @need more bytes and keep a
 * quarter of its size free (1 MiB at least)? The shipped unit's DIR is on
 * /run, a tmpfs the whole system shares (systemd's and journald's runtime
 * files; a tenth or a fifth of RAM): with only 1 MiB kept, any two users'
 * entries filled it to its last MiB whenever it was smaller than the cap.
 */
static bool cd_fs_room(int dfd, uint64_t need)
{
	struct statfs sf;
	uint64_t size, keep;

	if (fstatfs(dfd, &sf))
		return false;
	size = (uint64_t)sf.f_blocks * (uint64_t)sf.f_bsize;
	keep = size / 4 > (1ULL << 20) ? size / 4 : 1ULL << 20;
	return (uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize >= need + keep;
}

/*
 * Room for @need more bytes of @uid's: the least recently mapped entries
 * go first (their atime: the service's tmpfs is mounted strictatime),
 * @uid's own when @uid is over its share. A mapped entry that is unlinked
 * stays whole for the processes that map it. False when there is no room
 * even so (or the file system has too little free space): nothing is
 * written then.
 */
static bool cd_room(struct cd_state *s, uint32_t uid, uint64_t need)
{
	uint64_t mine = cd_used(s->dfd, uid);
	struct cd_entry *e;
	size_t n;
	bool own = mine + need > s->o.user_max;

	if (need > s->o.max / 4 || need > s->o.user_max)
		return false;
	n = cd_entries(s->dfd, own ? uid : UINT32_MAX, &e);
	qsort(e, n, sizeof(*e), cd_by_atime);
	for (size_t i = 0; i < n; i++) {
		char path[64];

		if (cd_fs_room(s->dfd, need) &&
		    s->used + need <= s->o.max && mine + need <= s->o.user_max)
			break;
		snprintf(path, sizeof(path), "u%u/%s", e[i].uid, e[i].name);
		if (unlinkat(s->dfd, path, 0))
			continue;
		s->used -= e[i].size < s->used ? e[i].size : s->used;
		s->changed = true;
		if (e[i].uid == uid)
			mine -= e[i].size < mine ? e[i].size : mine;
		if (s->o.verbose)
			cd_log("evicted u%u/%." CD_NAME_SHOWN "s... (%llu bytes)",
			       e[i].uid, e[i].name,
			       (unsigned long long)e[i].size);
	}
	free(e);
	return cd_fs_room(s->dfd, need) &&
	       s->used + need <= s->o.max && mine + need <= s->o.user_max;
}

/* ---------------------------------------------------------------- users */

/*
 * u<uid>, with the user's key in it (made at the user's first request):
 * the directory root's, 0711; the key file the user's, 0400.
 */
static int cd_user_dir(struct cd_state *s, uint32_t uid)
{
	struct fi_cache_keyfile kf;
	char name[24];
	struct stat st;
	int fd;

	fi_cache_user_dir(uid, name, sizeof(name));
	if (mkdirat(s->dfd, name, 0711) && errno != EEXIST)
		return -1;
	fd = openat(s->dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || st.st_uid || fchmod(fd, 0711)) {
		close(fd);
		return -1;
	}
	if (!fstatat(fd, FI_CACHE_KEYFILE, &st, AT_SYMLINK_NOFOLLOW))
		return fd;
	memcpy(kf.magic, FI_CACHE_KEY_MAGIC, 8);
	fi_cache_user_key(&s->master, uid, &kf.key);
	if (cd_write_new(fd, FI_CACHE_KEYFILE, &kf, sizeof(kf), 0400, uid)) {
		memset(&kf, 0, sizeof(kf));
		close(fd);
		return -1;
	}
	memset(&kf, 0, sizeof(kf));
	if (s->o.verbose)
		cd_log("made the key of user %u", uid);
	return fd;
}

/* ----------------------------------------------------------------- fill */

static bool cd_same_stat(const struct fi_cache_ident *id, const struct stat *st)
{
	return id->dev == st->st_dev && id->ino == st->st_ino &&
	       id->size == (uint64_t)st->st_size &&
	       id->mtime_s == st->st_mtim.tv_sec &&
	       id->mtime_ns == (uint32_t)st->st_mtim.tv_nsec &&
	       id->ctime_s == st->st_ctim.tv_sec &&
	       id->ctime_ns == (uint32_t)st->st_ctim.tv_nsec;
}

static bool cd_conf_ok(const struct fi_cache_conf *c)
{
	return c->cfg.mode >= FINEIBT_MODE_OFF && c->cfg.mode <= FINEIBT_MODE_FINEIBT &&
	       c->cfg.mode != FINEIBT_MODE_AUTO && c->have_arity <= 1;
}

/* One module of a request: the file behind @fd, checked, rewritten, linked in. */
static void cd_fill_one(struct cd_state *s, const struct cd_peer *p, int ufd,
			const struct fi_cache_conf *conf,
			const struct fi_cache_req_mod *rm, int fd)
{
	struct fineibt_key key;
	struct fi_cache_ident got;
	char what[64], name[FI_CACHE_NAME_LEN + 1], err[160];
	uint8_t *buf = NULL;
	struct statfs sf;
	struct stat st;
	size_t size;
	int ret;
	const char *why = NULL;

	/* the file, not where the process mapped it: the log is read by
	 * others, and the address would give them its layout (ASLR) */
	snprintf(what, sizeof(what), "inode %llu",
		 (unsigned long long)rm->id.ino);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || fstatfs(fd, &sf) ||
	    (unsigned long)sf.f_type == CD_FUSE_MAGIC ||
	    (fcntl(fd, F_GETFL) & O_ACCMODE) == O_WRONLY) {
		why = "not a regular file open for reading (or on FUSE)";
		goto out;
	}
	if (!cd_same_stat(&rm->id, &st)) {
		why = "the file is not the one named";
		goto out;
	}
	fi_cache_user_key(&s->master, p->uid, &key);
	fi_cache_name(&key, &rm->id, conf, name);
	if (rm->name[0] && strncmp(rm->name, name, sizeof(name))) {
		cd_log("pid %d (uid %u) names its entries otherwise than this "
		       "service: a runtime of another build (restart the service "
		       "after an upgrade)", p->pid, p->uid);
		goto out;
	}
	if (!fstatat(ufd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		why = "the entry is there already";
		goto out;
	}
	if (!cd_room(s, p->uid, rm->id.size)) {
		why = "no room within the size cap";
		goto out;
	}
	ret = fi_cache_fill(fd, what, conf, &key, &got, &buf, &size, err,
			    sizeof(err));
	if (ret) {
		why = err;
		goto out;
	}
	/* The name's identity is the file's own, read through @fd. */
	if (memcmp(&got, &rm->id, sizeof(got))) {
		why = "the file's build-id or text segment is not the one named";
		goto out;
	}
	ret = fi_cache_write_entry(ufd, name, buf, size);
	if (ret && ret != -EEXIST) {
		snprintf(err, sizeof(err), "cannot write the entry: %s",
			 strerror(-ret));
		why = err;
		goto out;
	}
	if (!ret) {
		s->used += size;
		s->changed = true;
	}
	if (s->o.verbose)
		cd_log("filled u%u/%." CD_NAME_SHOWN "s... for pid %d (%zu bytes)",
		       p->uid, name, p->pid, size);
out:
	memset(&key, 0, sizeof(key));
	if (why && s->o.verbose)
		cd_log("pid %d (uid %u), %s: not filled: %s", p->pid, p->uid,
		       what, why);
	free(buf);
}

static void cd_handle(struct cd_state *s, const struct fi_cache_req *r,
		      size_t len, struct cd_peer *p)
{
	int ufd;

	if (len < fi_cache_req_size(0) || memcmp(r->magic, FI_CACHE_REQ_MAGIC, 8) ||
	    r->format != FI_CACHE_FORMAT || r->n > FI_CACHE_REQ_MAX ||
	    len != fi_cache_req_size(r->n) || !cd_conf_ok(&r->conf) ||
	    strncmp(r->version, FINEIBT_VERSION, sizeof(r->version))) {
		if (s->o.verbose)
			cd_log("pid %d: not a request of this version; ignored",
			       p->pid);
		return;
	}
	/* Root keeps a key of its own; one descriptor a module. */
	if (!p->uid || p->nfd != r->n) {
		if (s->o.verbose)
			cd_log("pid %d (uid %u): not a request this serves; "
			       "ignored", p->pid, p->uid);
		return;
	}
	ufd = cd_user_dir(s, p->uid);
	if (ufd < 0) {
		cd_log("cannot make the directory of user %u: %s", p->uid,
		       strerror(errno));
		return;
	}
	for (uint32_t i = 0; i < r->n; i++)
		cd_fill_one(s, p, ufd, &r->conf, &r->mod[i], p->fd[i]);
	close(ufd);
}

/*
 * The hung requests that are over (their file system answered at last,
 * or gave up: the child, killed, exits then without writing anything).
 */
static void cd_reap(struct cd_state *s)
{
	size_t i = 0, n = s->nhung;

	while (i < s->nhung) {
		pid_t r = waitpid(s->hung[i].pid, NULL, WNOHANG);

		if (r == s->hung[i].pid || (r < 0 && errno == ECHILD))
			s->hung[i] = s->hung[--s->nhung];
		else
			i++;
	}
	if (s->nhung != n)
		s->used = cd_used(s->dfd, UINT32_MAX);
}

/* Wait for child @pid up to the deadline; true when it is over (*@st). */
static bool cd_wait(pid_t pid, int *st)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd p = { .fd = pfd, .events = POLLIN };
	int n;

	if (pfd < 0)		/* before Linux 5.3: no deadline */
		return waitpid(pid, st, 0) == pid;
	do
		n = poll(&p, 1, CD_DEADLINE_MS);
	while (n < 0 && errno == EINTR);
	close(pfd);
	return n == 1 && waitpid(pid, st, 0) == pid;
}

/* ---------------------------------------------------------------- loop */

static int cd_socket(struct cd_state *s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int one = 1, big = 1 << 20;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", s->o.dir,
		 FI_CACHE_SOCK);
	unlinkat(s->dfd, FI_CACHE_SOCK, 0);
	s->sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s->sock < 0 || bind(s->sock, (struct sockaddr *)&sa, sizeof(sa)) ||
	    fchmodat(s->dfd, FI_CACHE_SOCK, 0666, 0) ||
	    setsockopt(s->sock, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one))) {
		cd_fail("cannot listen on %s: %s", sa.sun_path, strerror(errno));
		return -1;
	}
	setsockopt(s->sock, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	return 0;
}

/* The credentials and descriptors of a datagram into @p. */
static bool cd_cmsgs(struct msghdr *mh, struct cd_peer *p)
{
	bool creds = false;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
			struct ucred uc;

			memcpy(&uc, CMSG_DATA(c), sizeof(uc));
			p->pid = uc.pid;
			p->uid = uc.uid;
			creds = true;
		} else if (c->cmsg_type == SCM_RIGHTS) {
			size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (size_t i = 0; i < n; i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int),
				       sizeof(fd));
				if (p->nfd < FI_CACHE_REQ_MAX)
					p->fd[p->nfd++] = fd;
				else
					close(fd);
			}
		}
	}
	return creds;
}

/*
 * The datagram at the head of the queue, received in full: its
 * descriptors are this process's then, and close(2) of one on FUSE waits
 * for its server's answer (FLUSH). Only a child that serves the request
 * does this.
 */
static void cd_take(struct cd_state *s)
{
	union {
		struct fi_cache_req r;
		char b[sizeof(struct fi_cache_req) + 1];
	} u;
	char cbuf[CMSG_SPACE(sizeof(struct ucred)) +
		  CMSG_SPACE(sizeof(int) * FI_CACHE_REQ_MAX)];
	struct iovec iov = { .iov_base = &u, .iov_len = sizeof(u) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cd_peer p = { .pid = 0, .nfd = 0 };
	ssize_t n = recvmsg(s->sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);

	if (n < 0)
		return;
	if (cd_cmsgs(&mh, &p) && p.pid > 0 &&
	    !(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		cd_handle(s, &u.r, (size_t)n, &p);
	for (size_t i = 0; i < p.nfd; i++)
		close(p.fd[i]);
}

/*
 * Who sent the datagram at the head of the queue (@peek) or, without
 * @peek, the datagram dropped: room for the credentials only, so no
 * descriptor that came with it is ever this process's (the kernel drops
 * them without a close(2), which on FUSE would ask its server). Left
 * open: when a dropped descriptor is the file's last reference, its
 * release runs here, and FUSE with writeback caching writes dirty pages
 * back there and waits for the server (the sender would have dirtied
 * them through a shared mapping it then unmapped).
 */
static ssize_t cd_sender(struct cd_state *s, struct cd_peer *p, bool peek)
{
	char cbuf[CMSG_SPACE(sizeof(struct ucred))];
	char b;
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	ssize_t n = recvmsg(s->sock, &mh, MSG_CMSG_CLOEXEC |
			    (peek ? MSG_PEEK : MSG_DONTWAIT));

	*p = (struct cd_peer){ .pid = 0, .nfd = 0 };
	if (n >= 0 && !cd_cmsgs(&mh, p))
		p->pid = 0;
	return n;
}

/* Is @p's user's request to be served now (none of theirs hangs)? */
static bool cd_admit(struct cd_state *s, const struct cd_peer *p)
{
	cd_reap(s);
	for (size_t i = 0; i < s->nhung; i++) {
		if (s->hung[i].uid == p->uid) {
			if (s->o.verbose)
				cd_log("pid %d (uid %u): an earlier request of "
				       "this user still hangs; ignored", p->pid,
				       p->uid);
			return false;
		}
	}
	if (s->nhung == CD_HUNG_MAX) {
		if (s->o.verbose)
			cd_log("pid %d (uid %u): %d requests hang; ignored",
			       p->pid, p->uid, CD_HUNG_MAX);
		return false;
	}
	return p->pid > 0;
}

/*
 * One datagram; false when the service stops. The service reads the
 * user's file through the user's descriptor: on a file system that never
 * answers (a FUSE server of the user's own), fstat, read and even close
 * wait uninterruptibly, and the service, which serves one request at a
 * time, served nobody again. So a child receives and serves each request
 * within a deadline, the service itself never holding a descriptor of a
 * user's. Requests stay one at a time (the size accounting and eviction
 * assume it); one that overruns is abandoned (its child killed: it dies
 * as soon as its system call returns, before it writes anything), and
 * its user's requests are dropped while it still hangs, so that no user
 * holds more than one process here.
 */
static bool cd_recv(struct cd_state *s)
{
	struct cd_peer p;
	int st = -1;
	pid_t pid;

	if (cd_sender(s, &p, true) < 0)
		return errno == EINTR;
	if (!cd_admit(s, &p)) {
		cd_sender(s, &p, false);
		return true;
	}
	pid = fork();
	if (pid < 0) {
		cd_log("cannot fork: %s", strerror(errno));
		cd_sender(s, &p, false);
		return true;
	}
	if (!pid) {
		s->changed = false;
		cd_take(s);
		_exit(s->changed ? 1 : 0);
	}
	if (!cd_wait(pid, &st)) {
		kill(pid, SIGKILL);
		if (waitpid(pid, NULL, WNOHANG) != pid) {
			s->hung[s->nhung].pid = pid;
			s->hung[s->nhung++].uid = p.uid;
		}
		cd_log("pid %d (uid %u): the request did not finish within %d s "
		       "(a file system that does not answer?); abandoned",
		       p.pid, p.uid, CD_DEADLINE_MS / 1000);
	} else if (WIFSIGNALED(st)) {
		/* a module the passes crashed on: the service goes on */
		cd_log("pid %d (uid %u): the request's child died of signal %d",
		       p.pid, p.uid, WTERMSIG(st));
	}
	/* what the child wrote and evicted, unless it says it did nothing
	 * (a request for entries that are there: no scan of them all) */
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		s->used = cd_used(s->dfd, UINT32_MAX);
	return true;
}

int cmd_cached(int argc, char **argv)
{
	struct cd_state s = { .dfd = -1, .sock = -1 };
	int ret = cd_parse(argc, argv, &s.o);

	if (ret)
		return ret;
	if (geteuid()) {
		cli_error("cached: must run as root (it opens other users' "
			  "mappings and owns their entries)");
		return CLI_FAIL;
	}
	umask(077);
	s.dfd = cd_prepare_dir(&s.o);
	if (s.dfd < 0)
		return 1;
	cd_version(s.dfd);
	if (cd_master(&s) || cd_socket(&s))
		return 1;
	s.used = cd_used(s.dfd, UINT32_MAX);
	cd_log("serving %s (entries %llu bytes, cap %llu, per user %llu)",
	       s.o.dir, (unsigned long long)s.used, (unsigned long long)s.o.max,
	       (unsigned long long)s.o.user_max);
	/* Until killed (SIGTERM: the socket stays; the next start replaces
	 * it, and the master key in DIR keeps every user's key). */
	while (cd_recv(&s))
		;
	cd_log("cannot receive: %s", strerror(errno));
	return 1;
}
