/* SPDX-License-Identifier: MIT */
/*
 * docs/protection.md, "The shared text cache", "Mapped where the kernel
 * says": fi_cache_entry_map maps an entry over a module's text only if
 * the kernel says the descriptor is a root-owned 0444 entry of one link
 * with the name the caller computed, and the range is the executable
 * text of the file the identity names, at its offset. The scan keeps the
 * descriptor, the identity and the range in writable scratch until then
 * (tests/e2e/cache_forge.sh moves the range with a write primitive).
 *
 * Here: a "module" file mapped read-execute (its text), an "entry" (a
 * copy with other bytes) and a "victim" file mapped read-execute too.
 * The entry maps over the module's text with its name and identity;
 * refused (-EPERM, nothing mapped, the victim's bytes kept): over the
 * victim's text, at another offset, under another name, from a file not
 * root's or not 0444. The accepted cases need root (the entry's owner);
 * the refusals run for anyone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "rtcache.h"

#define PAGE	4096

static char dir[] = "/tmp/fi-cache-map.XXXXXX";

/* A file DIR/@name of two pages of @byte, mode @mode; its descriptor. */
static int file_of(const char *name, int byte, mode_t mode)
{
	char path[128], buf[2 * PAGE];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	memset(buf, byte, sizeof(buf));
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != sizeof(buf) ||
	    fchmod(fd, mode))
		return -1;
	return fd;
}

static void ident_of(int fd, struct fi_cache_ident *id)
{
	struct stat st;

	memset(id, 0, sizeof(*id));
	fstat(fd, &st);
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	id->size = (uint64_t)st.st_size;
	id->text_off = 0;
	id->text_size = 2 * PAGE;
}

/* A read-only descriptor of DIR/@name. */
static int reopen(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return open(path, O_RDONLY | O_CLOEXEC);
}

static void cleanup(void)
{
	static const char *const names[] = {
		"module", "victim", "0123456789abcdef0123456789abcdef",
		"fedcba9876543210fedcba9876543210",
	};
	char path[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

static uint8_t *text_of(int fd)
{
	void *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

int main(void)
{
	static const char name[] = "0123456789abcdef0123456789abcdef";
	struct fi_cache_ident mod_id, vic_id;
	const char *why = NULL;
	int mod, vic, ent, other, fd;
	uint8_t *mod_text, *vic_text;
	bool root = geteuid() == 0;

	if (!CHECK("cache_map_dir", mkdtemp(dir)))
		return fi_check_exit();
	atexit(cleanup);
	mod = file_of("module", 0x11, 0644);
	vic = file_of("victim", 0x22, 0644);
	ent = file_of(name, 0x33, 0444);
	other = file_of("fedcba9876543210fedcba9876543210", 0x44, 0444);
	if (!CHECK("cache_map_files", mod >= 0 && vic >= 0 && ent >= 0 && other >= 0))
		return fi_check_exit();
	ident_of(mod, &mod_id);
	ident_of(vic, &vic_id);
	mod_text = text_of(mod);
	vic_text = text_of(vic);
	if (!CHECK("cache_map_texts", mod_text && vic_text))
		return fi_check_exit();

	/* The module's range moved onto the victim's text. */
	CHECK("cache_map_other_text_refused",
	      fi_cache_entry_map(reopen(name), &mod_id, (uintptr_t)vic_text,
				 2 * PAGE, name, &why) == -EPERM &&
	      vic_text[0] == 0x22);
	/* The identity moved to the victim's too: the entry's name is not
	 * the victim's (the caller computes it from the identity). */
	CHECK("cache_map_other_name_refused",
	      fi_cache_entry_map(reopen(name), &vic_id, (uintptr_t)vic_text,
				 2 * PAGE, "fedcba9876543210fedcba9876543210",
				 &why) == -EPERM && vic_text[0] == 0x22);
	/* Another offset of the module's file than its text's. */
	mod_id.text_off = PAGE;
	CHECK("cache_map_other_offset_refused",
	      fi_cache_entry_map(reopen(name), &mod_id, (uintptr_t)mod_text,
				 PAGE, name, &why) == -EPERM && mod_text[0] == 0x11);
	mod_id.text_off = 0;
	/* A file that is not an entry: the module's own, mode 0644. */
	CHECK("cache_map_not_entry_refused",
	      fi_cache_entry_map(reopen("module"), &mod_id, (uintptr_t)mod_text,
				 2 * PAGE, "module", &why) == -EPERM &&
	      mod_text[0] == 0x11);
	if (!root) {
		printf("cache_map: not root: the accepted cases need a root-owned entry\n");
		return fi_check_exit();
	}
	/* The entry of another name than the one asked. */
	CHECK("cache_map_wrong_entry_refused",
	      fi_cache_entry_map(reopen("fedcba9876543210fedcba9876543210"),
				 &mod_id, (uintptr_t)mod_text, 2 * PAGE, name,
				 &why) == -EPERM && mod_text[0] == 0x11);
	/* Its own: mapped over the module's text; the descriptor is left
	 * to the caller (closed with the scan's others), as a refused one
	 * is not. */
	fd = reopen(name);
	CHECK("cache_map_own_text_mapped",
	      fi_cache_entry_map(fd, &mod_id, (uintptr_t)mod_text,
				 2 * PAGE, name, &why) == 0 &&
	      mod_text[0] == 0x33 && mod_text[2 * PAGE - 1] == 0x33);
	CHECK("cache_map_mapped_fd_left_open",
	      fcntl(fd, F_GETFD) >= 0 && close(fd) == 0);
	fd = reopen(name);
	CHECK("cache_map_refused_fd_closed",
	      fi_cache_entry_map(fd, &mod_id, (uintptr_t)vic_text, 2 * PAGE,
				 name, &why) == -EPERM &&
	      fcntl(fd, F_GETFD) < 0 && errno == EBADF);
	return fi_check_exit();
}
