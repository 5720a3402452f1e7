/* SPDX-License-Identifier: MIT */
/*
 * fineibt inspect --pid PID: the kCFI modules of a running process as
 * they are in its memory: mode, sites rewritten, hashes randomised or not
 * (the key itself is never printed). docs/ecosystem.md documents the
 * output.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fineibt.h"
#include "image.h"
#include "cli.h"

#define PID_MAX_MODS	512

struct pid_mod {
	char path[4096];
	uint64_t base;		/* lowest mapping at file offset 0 */
};

/*
 * The file-backed mappings of @pid, one per path. Whether they hold code
 * is not in the permissions: the runtime replaces a module's text (or its
 * site pages) with anonymous memory when it rewrites it on a copy, so its
 * text range no longer names the file, or only in part (pages written in
 * place still do). The module's ELF headers say where the text is.
 */
static int pid_maps(int pid, struct pid_mod *mods, size_t *nmods)
{
	char path[64], line[4352];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	*nmods = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perms[8], file[4096];
		size_t i;

		file[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &lo, &hi,
			   perms, &off, file) < 5 || file[0] != '/' ||
		    strstr(file, " (deleted)"))
			continue;
		for (i = 0; i < *nmods && strcmp(mods[i].path, file); i++)
			;
		if (i == *nmods) {
			if (*nmods == PID_MAX_MODS)
				continue;
			memset(&mods[i], 0, sizeof(mods[i]));
			snprintf(mods[i].path, sizeof(mods[i].path), "%s", file);
			mods[i].base = UINT64_MAX;
			(*nmods)++;
		}
		if (off == 0 && lo < mods[i].base)
			mods[i].base = lo;
	}
	fclose(f);
	return 0;
}

/* The live bytes of every executable view of @im, read from @memfd. */
static int pid_read_views(const struct fi_image *im, int memfd, uint64_t bias,
			  uint8_t **bufs)
{
	for (size_t i = 0; i < im->nviews; i++) {
		const struct fi_view *v = &im->views[i];

		bufs[i] = NULL;
		if (!v->exec || !v->size)
			continue;
		bufs[i] = malloc(v->size);
		if (!bufs[i])
			return -ENOMEM;
		if (pread(memfd, bufs[i], v->size, (off_t)(v->vaddr + bias)) !=
		    (ssize_t)v->size)
			return errno ? -errno : -EIO;
	}
	return 0;
}

/* @len live bytes at link-time @addr, or NULL. */
static const uint8_t *pid_bytes(const struct fi_image *im, uint8_t **bufs,
				uint64_t addr, size_t len)
{
	for (size_t i = 0; i < im->nviews; i++) {
		const struct fi_view *v = &im->views[i];

		if (bufs[i] && addr >= v->vaddr && addr - v->vaddr < v->size &&
		    v->size - (addr - v->vaddr) >= len)
			return bufs[i] + (addr - v->vaddr);
	}
	return NULL;
}

struct pid_summary {
	char mode[128];
	size_t pre, pre_changed, calls, calls_changed, hash_changed, hashes;
	bool rand;		/* rehashed at run time, or by a static patch */
	bool static_patch;	/* the file itself was rewritten (fineibt patch) */
};

/*
 * Classify the live sites of @im (loaded at @bias) and judge the mode
 * from them with the same rules as for a file (fi_image_mode), on a
 * copy of the image whose site forms are the live ones.
 */
/*
 * A call site the runtime opened for dlsym veneers (src/interpose/foreign.c) starts
 * with a jmp to its stub, whose first 6 bytes are the site's own: put
 * them back in @copy so that the site classifies as what it is.
 */
static const uint8_t *pid_opened_site(const uint8_t *p, uint64_t ip, int memfd,
				      uint8_t copy[FI_CALLSITE_SIZE])
{
	uint64_t stub;

	if (!fi_decode_site_jmp(p, ip, &stub))
		return p;
	memcpy(copy, p, FI_CALLSITE_SIZE);
	if (pread(memfd, copy, 6, (off_t)stub) != 6)
		return p;
	return copy;
}

static int pid_summarise(struct fi_image *im, uint8_t **bufs, uint64_t bias,
			 int memfd, struct pid_summary *ps)
{
	struct fi_image live = *im;
	struct fineibt_config cfg;
	struct fi_func *funcs = calloc(im->nfuncs + 1, sizeof(*funcs));
	struct fi_call *calls = calloc(im->ncalls + 1, sizeof(*calls));

	if (!funcs || !calls) {
		free(funcs);
		free(calls);
		return -ENOMEM;
	}
	memset(ps, 0, sizeof(*ps));
	for (size_t i = 0; i < im->nfuncs; i++) {
		struct fi_preamble_info info = { 0 };
		uint64_t pre = im->funcs[i].addr - FI_PREAMBLE_SIZE;
		const uint8_t *p = pid_bytes(im, bufs, pre, FI_PREAMBLE_SIZE + 4);

		funcs[i] = im->funcs[i];
		if (p && fi_classify_preamble(p, pre + bias, &info) != FI_PRE_NONE) {
			funcs[i].form = info.form;
			funcs[i].hash = info.hash;
			funcs[i].set = (uint8_t)info.set;
		}
		ps->pre++;
		ps->pre_changed += funcs[i].form != im->funcs[i].form ||
				   funcs[i].set != im->funcs[i].set;
		ps->hashes++;
		ps->hash_changed += funcs[i].hash != im->funcs[i].hash;
	}
	for (size_t i = 0; i < im->ncalls; i++) {
		struct fi_caller_info ci = { 0 };
		const uint8_t *p = pid_bytes(im, bufs, im->calls[i].addr, FI_CALLSITE_SIZE);
		uint8_t copy[FI_CALLSITE_SIZE];

		if (p)
			p = pid_opened_site(p, im->calls[i].addr + bias, memfd, copy);
		calls[i] = im->calls[i];
		if (p && fi_classify_caller(p, im->calls[i].addr + bias, &ci) != FI_CALL_NONE) {
			calls[i].form = ci.form;
			calls[i].hash = ci.hash;
			calls[i].set = (uint8_t)ci.set;
		}
		ps->calls++;
		/* v6.18's kCFI callers keep their form, not their bytes */
		ps->calls_changed += calls[i].form != im->calls[i].form ||
				     calls[i].set != im->calls[i].set;
		ps->hashes++;
		ps->hash_changed += calls[i].hash != im->calls[i].hash;
	}
	/*
	 * A stock kCFI module's call sites (.kcfi_traps in clang's own
	 * layout): counted as 'inspect FILE' counts them. They stay caller
	 * checks in every mode (only their hashes change), so none is
	 * counted as rewritten.
	 */
	ps->calls += im->nscalls;
	live.funcs = funcs;
	live.calls = calls;
	/* Rehashed sites mean a key is in use; its value stays secret. */
	ps->static_patch = im->note.present;
	ps->rand = ps->hash_changed ||
		   (im->note.present && (im->note.cfg.flags & FINEIBT_F_RAND));
	if (fi_image_mode(&live, &cfg) < 0) {
		snprintf(ps->mode, sizeof(ps->mode), "mixed");
	} else {
		if (ps->rand)
			cfg.flags |= FINEIBT_F_RAND;
		else
			cfg.flags &= ~FINEIBT_F_RAND;
		cli_mode_str(&cfg, ps->mode, sizeof(ps->mode));
	}
	free(funcs);
	free(calls);
	return 0;
}

/* FINEIBT_CFI as the process was started with it, or "". */
static void pid_env_cfi(int pid, char *out, size_t len)
{
	char path[64], buf[65536];
	ssize_t n;
	int fd;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	for (ssize_t i = 0; n > 0 && i < n; i += (ssize_t)strlen(buf + i) + 1) {
		buf[n] = '\0';
		if (!strncmp(buf + i, "FINEIBT_CFI=", 12)) {
			snprintf(out, len, "%s", buf + i + 12);
			return;
		}
	}
}

static void pid_print(bool json, bool *first, const char *path,
		      const struct pid_summary *ps)
{
	bool rand = ps->rand;

	if (!json) {
		printf("%-40s %-22s %5zu/%-5zu %5zu/%-5zu %s%s\n", path, ps->mode,
		       ps->pre_changed, ps->pre, ps->calls_changed, ps->calls,
		       rand ? "present" : "none",
		       ps->static_patch ? " (file patched statically)" : "");
		*first = false;
		return;
	}
	printf("%s\n    {\"module\": ", *first ? "" : ",");
	cli_json_str(path);
	printf(", \"mode\": \"%s\", \"preambles\": %zu, \"preambles_rewritten\": %zu, "
	       "\"call_sites\": %zu, \"call_sites_rewritten\": %zu, \"key\": %s, "
	       "\"static_patch\": %s}",
	       ps->mode, ps->pre, ps->pre_changed, ps->calls, ps->calls_changed,
	       rand ? "true" : "false", ps->static_patch ? "true" : "false");
	*first = false;
}

/* A cheap look at the magic before reading a whole mapped file. */
static bool pid_is_elf(const char *path)
{
	unsigned char m[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok = fd >= 0 && read(fd, m, 4) == 4 && !memcmp(m, "\177ELF", 4);

	if (fd >= 0)
		close(fd);
	return ok;
}

/* One module: open its file, read its text from the process, summarise. */
static int pid_module(const struct pid_mod *pm, int memfd, bool json, bool *first)
{
	struct fi_image im;
	struct pid_summary ps;
	uint8_t **bufs;
	uint64_t bias;
	char err[256];
	int ret;

	if (fi_image_open(&im, pm->path, err, sizeof(err)))
		return 0;		/* not an ELF file we read: not ours */
	if ((!im.nfuncs && !im.ncalls) || !im.nviews) {
		fi_image_close(&im);
		return 0;
	}
	bias = pm->base - (im.views[0].vaddr & ~(uint64_t)0xfff);
	bufs = calloc(im.nviews, sizeof(*bufs));
	ret = bufs ? pid_read_views(&im, memfd, bias, bufs) : -ENOMEM;
	if (!ret)
		ret = pid_summarise(&im, bufs, bias, memfd, &ps);
	if (!ret)
		pid_print(json, first, pm->path, &ps);
	for (size_t i = 0; bufs && i < im.nviews; i++)
		free(bufs[i]);
	free(bufs);
	fi_image_close(&im);
	if (ret)
		cli_error("inspect: %s: cannot read its text from the process (%s)",
			pm->path, strerror(-ret));
	return ret ? 1 : 0;
}

int insp_pid(int pid, bool json)
{
	struct pid_mod *mods = calloc(PID_MAX_MODS, sizeof(*mods));
	bool first = true;
	char path[64], cfi[256];
	int memfd, ret = 0;
	size_t n = 0;

	if (!mods) {
		cli_error("inspect: out of memory");
		return CLI_FAIL;
	}
	ret = pid_maps(pid, mods, &n);
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	memfd = ret ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	if (ret || memfd < 0) {
		cli_error("inspect: cannot read process %d (%s): it must exist "
			"and you need ptrace rights over it (same user; see "
			"kernel.yama.ptrace_scope)", pid, strerror(ret ? -ret : errno));
		free(mods);
		return 1;
	}
	pid_env_cfi(pid, cfi, sizeof(cfi));
	if (json) {
		printf("{\n  \"pid\": %d,\n  \"env_cfi\": ", pid);
		if (cfi[0])
			cli_json_str(cfi);
		else
			printf("null");
		printf(",\n  \"modules\": [");
	} else {
		printf("pid %d: FINEIBT_CFI=%s\n%-40s %-22s %11s %11s %s\n", pid,
		       cfi[0] ? cfi : "(unset: auto)", "module", "mode",
		       "rewr/pre", "rewr/calls", "key");
	}
	for (size_t i = 0; i < n; i++) {
		if (mods[i].base != UINT64_MAX && pid_is_elf(mods[i].path))
			ret |= pid_module(&mods[i], memfd, json, &first);
	}
	if (json)
		printf("%s]\n}\n", first ? "" : "\n  ");
	else if (first)
		printf("(no kCFI module)\n");
	close(memfd);
	free(mods);
	return ret;
}
