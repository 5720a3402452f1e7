// SPDX-License-Identifier: MIT
/*
 * fuse_stall MNT FILE: a FUSE file system at MNT (mounted here, root
 * only, allow_other) holding one file, "prog", with FILE's bytes. It
 * answers every request of every user but root, and never answers
 * root's about the file (they wait until this process exits and the
 * connection is aborted): a file whose server does not answer, as a user's FUSE
 * server may do to a root service that reads the file through a
 * descriptor the user passed it (tests/e2e/cached_stall.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define PROG_INO	2

static int dev, file;
static struct stat fst;

static void reply(uint64_t unique, int error, const void *p, size_t len)
{
	struct fuse_out_header h = {
		.len = (uint32_t)(sizeof(h) + len), .error = error,
		.unique = unique,
	};
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)p, len } };

	if (writev(dev, iov, len ? 2 : 1) < 0 && errno != ENOENT)
		perror("fuse_stall: writev");
}

static void attr_of(uint64_t ino, struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->nlink = 1;
	if (ino == FUSE_ROOT_ID) {
		a->mode = S_IFDIR | 0755;
		a->nlink = 2;
		return;
	}
	a->mode = S_IFREG | 0755;
	a->size = (uint64_t)fst.st_size;
	a->blocks = ((uint64_t)fst.st_size + 511) / 512;
	a->mtime = a->ctime = a->atime = (uint64_t)fst.st_mtim.tv_sec;
	a->blksize = 4096;
}

static void serve(const struct fuse_in_header *in, const void *arg)
{
	switch (in->opcode) {
	case FUSE_INIT: {
		const struct fuse_init_in *i = arg;
		struct fuse_init_out o = {
			.major = FUSE_KERNEL_VERSION,
			.minor = FUSE_KERNEL_MINOR_VERSION,
			.max_readahead = i->max_readahead,
			.max_write = 65536, .max_background = 16,
			.congestion_threshold = 12, .time_gran = 1,
		};

		reply(in->unique, 0, &o, sizeof(o));
		return;
	}
	case FUSE_LOOKUP: {
		struct fuse_entry_out o = { .nodeid = PROG_INO };

		if (in->nodeid != FUSE_ROOT_ID || strcmp(arg, "prog")) {
			reply(in->unique, -ENOENT, NULL, 0);
			return;
		}
		attr_of(PROG_INO, &o.attr);
		reply(in->unique, 0, &o, sizeof(o));
		return;
	}
	case FUSE_GETATTR: {
		/* attr_valid 0: every stat asks again */
		struct fuse_attr_out o = { .attr_valid = 0 };

		attr_of(in->nodeid, &o.attr);
		reply(in->unique, 0, &o, sizeof(o));
		return;
	}
	case FUSE_OPEN:
	case FUSE_OPENDIR: {
		struct fuse_open_out o = { .fh = 1 };

		reply(in->unique, 0, &o, sizeof(o));
		return;
	}
	case FUSE_READ: {
		const struct fuse_read_in *r = arg;
		static char buf[1 << 17];
		size_t n = r->size < sizeof(buf) ? r->size : sizeof(buf);
		ssize_t got = pread(file, buf, n, (off_t)r->offset);

		reply(in->unique, got < 0 ? -EIO : 0, buf, got < 0 ? 0 : (size_t)got);
		return;
	}
	case FUSE_STATFS: {
		struct fuse_statfs_out o = { .st = { .bsize = 4096, .namelen = 255,
						     .frsize = 4096 } };

		reply(in->unique, 0, &o, sizeof(o));
		return;
	}
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
	case FUSE_FLUSH:
		reply(in->unique, 0, NULL, 0);
		return;
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
		return;
	default:
		reply(in->unique, -ENOSYS, NULL, 0);
	}
}

int main(int argc, char **argv)
{
	static char buf[(1 << 20) + 4096];
	char opts[128];

	if (argc != 3)
		return 2;
	file = open(argv[2], O_RDONLY | O_CLOEXEC);
	dev = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (file < 0 || fstat(file, &fst) || dev < 0) {
		perror("fuse_stall");
		return 1;
	}
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,"
		 "allow_other", dev);
	if (mount("fuse_stall", argv[1], "fuse", MS_NOSUID | MS_NODEV, opts)) {
		perror("fuse_stall: mount");
		return 1;
	}
	for (;;) {
		ssize_t n = read(dev, buf, sizeof(buf));
		const struct fuse_in_header *in = (const void *)buf;

		if (n < 0 && (errno == EINTR || errno == ENOENT || errno == EAGAIN))
			continue;
		if (n < (ssize_t)sizeof(*in))
			return n < 0 && errno == ENODEV ? 0 : 1;
		/* root's requests about the file: never answered */
		if (in->uid == 0 && in->opcode != FUSE_INIT &&
		    (in->nodeid == PROG_INO || in->opcode == FUSE_STATFS))
			continue;
		serve(in, in + 1);
	}
}
