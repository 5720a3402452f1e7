/* SPDX-License-Identifier: MIT */
/*
 * The verification of a rewritten module's sealed copy (docs/protection.md;
 * made cheaper: docs/bench.md): a byte written into the scratch copy after the
 * passes ran and before it was sealed, as a racing thread would, must make
 * fi_live_copy_seal_verify refuse the copy (-EBADMSG), wherever it lands:
 * in a byte the passes changed, anywhere in a site window (preamble, call
 * site), between sites, in the page before the first site and in the page
 * padding after the text. An untouched copy verifies. Every mode and both
 * sequence sets, on a kCFI DSO loaded by the dynamic loader
 * (tests/e2e/protect_escape.sh `race` is the same attack from a thread).
 *
 * fi_live_patch skips the verification only when fi_live_alone() says no
 * other task shares the address space: checked here single-threaded (yes),
 * with a second thread alive (no), after it was joined (yes again) and in
 * a vfork child, which shares its parent's memory (no).
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "image.h"
#include "patch.h"
#include "rtlive.h"

static char progs[512];

struct find_mod {
	const char *suffix;
	uint64_t bias;
	bool found;
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find_mod *m = data;
	size_t n = strlen(info->dlpi_name), s = strlen(m->suffix);

	if (n >= s && !strcmp(info->dlpi_name + n - s, m->suffix)) {
		m->bias = info->dlpi_addr;
		m->found = true;
		return 1;
	}
	return 0;
}

/* The copy's byte for run-time address @a, or NULL. */
static uint8_t *copy_at(struct fi_live_copy *lc, uint64_t a)
{
	for (size_t i = 0; i < lc->n; i++) {
		if (a >= lc->sc[i].lo && a < lc->sc[i].lo + lc->sc[i].len)
			return lc->sc[i].copy + (a - lc->sc[i].lo);
	}
	return NULL;
}

/* Is link-time @a inside a site window the passes may write? */
static bool in_site(const struct fi_image *im, uint64_t a)
{
	for (size_t i = 0; i < im->nfuncs; i++) {
		if (a + FI_PREAMBLE_SIZE >= im->funcs[i].addr &&
		    a < im->funcs[i].addr + 4)
			return true;
	}
	for (size_t i = 0; i < im->ncalls; i++) {
		if (a >= im->calls[i].addr && a < im->calls[i].addr + FI_CALLSITE_SIZE)
			return true;
	}
	for (size_t i = 0; i < im->ntcalls; i++) {
		if (a >= im->tcalls[i].addr && a < im->tcalls[i].addr + 8)
			return true;
	}
	return false;
}

enum spot { CHANGED, PREAMBLE, CALLSITE, GAP, HEAD, TAIL, NSPOTS };
static const char *const spot_name[NSPOTS] = {
	"changed", "preamble", "callsite", "gap", "head", "tail",
};

/* Run-time address of the byte to overwrite for @s (0: none found). */
static uint64_t spot_addr(const struct fi_image *im, struct fi_live_copy *lc,
			  enum spot s)
{
	uint64_t b = im->bias, f = im->funcs[0].addr;

	switch (s) {
	case CHANGED:	/* the first byte the passes changed */
		for (size_t i = 0; i < im->nfuncs; i++) {
			uint64_t at = im->funcs[i].addr - FI_PREAMBLE_SIZE + b;

			for (uint64_t a = at; a < at + FI_PREAMBLE_SIZE + 4; a++) {
				uint8_t *c = copy_at(lc, a);

				if (c && *c != *(const uint8_t *)(uintptr_t)a)
					return a;
			}
		}
		return 0;
	case PREAMBLE:	/* the preamble's first byte */
		return f - FI_PREAMBLE_SIZE + b;
	case CALLSITE:	/* the call site's last byte */
		return im->ncalls ? im->calls[0].addr + FI_CALLSITE_SIZE - 1 + b : 0;
	case GAP:	/* the first byte after func+4 that no site holds */
		for (uint64_t a = f + 4; a < f + 4096; a++) {
			if (!in_site(im, a))
				return a + b;
		}
		return 0;
	case HEAD:	/* the copy's first byte (before any site) */
		return lc->sc[0].lo;
	case TAIL:	/* the copy's last byte (page padding after the text) */
		return lc->sc[lc->n - 1].lo + lc->sc[lc->n - 1].len - 1;
	default:
		return 0;
	}
}

static void *t_wait(void *arg)
{
	int *fd = arg;
	char c;

	return read(fd[0], &c, 1) == 1 ? NULL : arg;
}

static void t_alone(void)
{
	pthread_t th;
	int fd[2];
	pid_t pid;
	int st = -1;

	CHECK("live_alone_single", fi_live_alone());
	if (!CHECK("live_alone_pipe", pipe(fd) == 0))
		return;
	if (CHECK("live_alone_thread_start", !pthread_create(&th, NULL, t_wait, fd))) {
		CHECK("live_alone_thread", !fi_live_alone());
		CHECK("live_alone_thread_end", write(fd[1], "x", 1) == 1 &&
		      !pthread_join(th, NULL));
		CHECK("live_alone_joined", fi_live_alone());
	}
	close(fd[0]);
	close(fd[1]);
	/* the vfork child may only _exit: its status is the answer */
	pid = vfork();
	if (pid == 0)
		_exit(fi_live_alone() ? 1 : 2);
	CHECK("live_alone_vfork", pid > 0 && waitpid(pid, &st, 0) == pid &&
	      WIFEXITED(st) && WEXITSTATUS(st) == 2);
}

static void t_mode(struct fi_image *im, const char *name, int mode,
		   unsigned flags)
{
	struct fi_patch_opts o = {
		.cfg = { .mode = mode, .flags = flags },
		.key = { { 0x5e, 0xed, 0x12, 0x34 } }, .dethunk = true, .quiet = true,
	};
	struct fi_patch_stats st;
	struct fi_live_copy lc;
	char what[128];
	int err;

	snprintf(what, sizeof(what), "live_verify_clean[%s]", name);
	if (!CHECK(what, fi_live_copy_make(im, &lc) == 0))
		return;
	err = fi_patch_image(im, &o, &st);
	CHECK(what, !err && st.preambles + st.callers > 0 &&
	      fi_live_copy_seal_verify(im, &o, &lc) == 0);
	fi_live_copy_drop(&lc);

	for (int s = 0; s < NSPOTS; s++) {
		uint64_t a;
		uint8_t *c;

		snprintf(what, sizeof(what), "live_verify_tampered[%s,%s]",
			 name, spot_name[s]);
		if (!CHECK(what, fi_live_copy_make(im, &lc) == 0))
			return;
		err = fi_patch_image(im, &o, &st);
		a = spot_addr(im, &lc, s);
		c = a ? copy_at(&lc, a) : NULL;
		/* kcfi without rand changes nothing: no "changed" byte */
		if (s == CHANGED && !c && !(flags & FINEIBT_F_RAND) &&
		    mode != FINEIBT_MODE_FINEIBT && mode != FINEIBT_MODE_OFF) {
			fi_live_copy_drop(&lc);
			continue;
		}
		if (c)
			*c ^= 0x5a;	/* the racing writer's byte */
		CHECK(what, !err && c && fi_live_copy_seal_verify(im, &o, &lc) == -EBADMSG);
		fi_live_copy_drop(&lc);
	}
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int mode;
		unsigned flags;
	} modes[] = {
		{ "kcfi", FINEIBT_MODE_KCFI, FINEIBT_F_RAND },
		{ "kcfi,norand", FINEIBT_MODE_KCFI, 0 },
		{ "off", FINEIBT_MODE_OFF, FINEIBT_F_RAND },
		{ "fineibt", FINEIBT_MODE_FINEIBT, FINEIBT_F_RAND },
		{ "fineibt,paranoid", FINEIBT_MODE_FINEIBT,
		  FINEIBT_F_RAND | FINEIBT_F_PARANOID },
		{ "fineibt,warn", FINEIBT_MODE_FINEIBT,
		  FINEIBT_F_RAND | FINEIBT_F_WARN },
		{ "fineibt,paranoid,v6.18", FINEIBT_MODE_FINEIBT,
		  FINEIBT_F_RAND | FINEIBT_F_PARANOID | FINEIBT_F_SEQ_V618 },
		{ "kcfi,v6.18", FINEIBT_MODE_KCFI,
		  FINEIBT_F_RAND | FINEIBT_F_SEQ_V618 },
	};
	struct find_mod m = { .suffix = "/libfiprog.so" };
	const char *build = getenv("BUILD");
	char cmd[1200], path[600], err[128];
	struct fi_image im;
	uint64_t lo, hi;
	uint8_t *before;
	void *h;

	/*
	 * The library must be met in its compiled form: the runtime it links
	 * (libfineibt.so) would otherwise rewrite it at the dlopen below, and
	 * every copy here would be refused as already rewritten (-EALREADY).
	 * kcfi,norand keeps it as compiled. The runtime reads its mode from
	 * the environment the process started with: set it, then start again.
	 */
	if (!getenv("FINEIBT_CFI") || strcmp(getenv("FINEIBT_CFI"), "kcfi,norand")) {
		setenv("FINEIBT_CFI", "kcfi,norand", 1);
		execv("/proc/self/exe", argv);
		return !CHECK("live_verify_reexec", false);
	}
	(void)argc;
	t_alone();
	snprintf(progs, sizeof(progs), "%s/progs", build ? build : "build");
	snprintf(cmd, sizeof(cmd), "bash tests/progs/build.sh '%s' >/dev/null", progs);
	if (!CHECK("live_verify_build_progs", system(cmd) == 0))
		return 1;
	snprintf(path, sizeof(path), "%s/libfiprog.so", progs);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!CHECK("live_verify_dlopen", h != NULL))
		return 1;
	dl_iterate_phdr(find_cb, &m);
	if (!CHECK("live_verify_open", m.found &&
		   fi_image_open_live(&im, path, m.bias, err, sizeof(err)) == 0 &&
		   im.nfuncs > 0 && im.ncalls > 0))
		return 1;
	/* the module's text, to show that nothing here changes it */
	fi_live_text_range(&im, &lo, &hi);
	before = malloc(hi - lo);
	if (!CHECK("live_verify_text", hi > lo && before))
		return 1;
	memcpy(before, (void *)(uintptr_t)lo, hi - lo);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		t_mode(&im, modes[i].name, modes[i].mode, modes[i].flags);
	CHECK("live_verify_text_untouched",
	      !memcmp(before, (void *)(uintptr_t)lo, hi - lo));
	free(before);
	fi_image_close(&im);
	dlclose(h);
	return fi_check_exit();
}
