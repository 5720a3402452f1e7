/* SPDX-License-Identifier: MIT */
/*
 * The ELF reader: bad buffers, the accessors on a real kCFI program, and
 * fi_image_attach_live on a loaded kCFI DSO and on a scratch mapping whose
 * bytes are changed under it. Builds the test programs first
 * (tests/progs/build.sh $BUILD/progs; cwd is the repo root).
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "elf_int.h"
#include "image.h"
#include "insn.h"

static char progs[512];

static void t_bad_buffers(void)
{
	static const char *const inputs[] = { "", "hello", "\x7f\x45LF" };
	char err[128];

	for (size_t i = 0; i < 3; i++) {
		struct fi_image im;
		size_t n = strlen(inputs[i]);
		uint8_t *buf = malloc(n + 1);

		memcpy(buf, inputs[i], n + 1);
		err[0] = 0;
		/* the image owns (and on failure frees) the buffer */
		EXPECT("elf_bad_buffer_refused",
		       fi_image_from_buffer(&im, "t", buf, n, err, sizeof(err)) == -ENOEXEC);
		EXPECT("elf_bad_buffer_reason", err[0] && !strchr(err, '\n'));
	}
	CHECK("elf_bad_buffers", fi_check_failed == 0);
}

static void t_file_accessors(void)
{
	char path[600], err[128], buf[64];
	struct fi_image im;
	bool ok = true;

	snprintf(path, sizeof(path), "%s/prog_pie", progs);
	if (!CHECK("elf_open_prog_pie", fi_image_open(&im, path, err, sizeof(err)) == 0))
		return;
	CHECK("elf_has_sites", im.nfuncs >= 10 && im.ncalls >= 10 && im.nbad == 0);
	for (size_t i = 0; i < im.nfuncs; i++) {
		const struct fi_func *f = &im.funcs[i];
		const uint8_t *p = fi_image_text(&im, f->addr - FI_PREAMBLE_SIZE, 20);

		ok &= p && fi_match_kcfi_preamble(p, NULL, NULL) && f->endbr;
		ok &= fi_image_func(&im, f->addr) == f && !fi_image_func(&im, f->addr + 1);
		fi_image_symbolize(&im, f->addr, buf, sizeof(buf));
		ok &= strlen(buf) > 4 && !strcmp(buf + strlen(buf) - 4, "+0x0");
		ok &= i == 0 || im.funcs[i - 1].addr < f->addr;
	}
	CHECK("elf_funcs_preambles_lookup_symbolize", ok);
	ok = true;
	for (size_t i = 0; i < im.ncalls; i++) {
		ok &= fi_image_is_trap(&im, im.calls[i].addr + FI_KCFI_CALLER_UD);
		ok &= !fi_image_is_trap(&im, im.calls[i].addr);
		ok &= im.calls[i].form == FI_CALL_KCFI;
	}
	CHECK("elf_calls_are_traps", ok);
	CHECK("elf_mode_kcfi", fi_image_mode(&im, NULL) == FINEIBT_MODE_KCFI);
	CHECK("elf_is_kcfi_mode", fi_image_is_kcfi_mode(&im));
	fi_image_symbolize(&im, 0x10, buf, sizeof(buf));
	CHECK("elf_symbolize_no_symbol", !strcmp(buf, "0x10"));
	fi_image_symbolize(&im, im.funcs[0].addr + 0x1a, buf, 6);
	CHECK("elf_symbolize_truncates", strlen(buf) == 5);
	CHECK("elf_poke_outside_text", fi_image_poke(&im, 0, "x", 1) == -EFAULT &&
	      fi_image_poke(&im, im.funcs[0].addr, "x", 0x100000000ull) == -EFAULT);
	CHECK("elf_poke_text",
	      fi_image_poke(&im, im.funcs[0].addr, fi_seq_endbr_poison.bytes, 4) == 0 &&
	      fi_load32(fi_image_text(&im, im.funcs[0].addr, 4)) == FI_POISON_VAL &&
	      im.writes == 1 && im.bytes_written == 4);
	fi_image_close(&im);
	CHECK("elf_close_clears", im.file == NULL && im.nfuncs == 0);
}

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

static bool same_sites(const struct fi_image *a, const struct fi_image *b)
{
	if (a->nfuncs != b->nfuncs || a->ncalls != b->ncalls)
		return false;
	for (size_t i = 0; i < a->nfuncs; i++) {
		if (a->funcs[i].addr != b->funcs[i].addr ||
		    a->funcs[i].hash != b->funcs[i].hash ||
		    a->funcs[i].arity != b->funcs[i].arity)
			return false;
	}
	for (size_t i = 0; i < a->ncalls; i++) {
		if (a->calls[i].addr != b->calls[i].addr ||
		    a->calls[i].hash != b->calls[i].hash)
			return false;
	}
	return true;
}

static void t_live_dso(void)
{
	struct find_mod m = { .suffix = "/libfiprog.so" };
	struct fi_image file, live;
	char path[600], err[128];
	uint64_t sum = 0;
	void *h;

	snprintf(path, sizeof(path), "%s/libfiprog.so", progs);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!CHECK("elf_live_dlopen", h != NULL))
		return;
	dl_iterate_phdr(find_cb, &m);
	CHECK("elf_live_found", m.found);
	if (fi_image_open(&file, path, err, sizeof(err)) ||
	    fi_image_open(&live, path, err, sizeof(err))) {
		CHECK("elf_live_open", false);
		return;
	}
	CHECK("elf_live_attach", fi_image_attach_live(&live, m.bias) == 0 &&
	      live.live && live.bias == m.bias);
	CHECK("elf_live_attach_twice", fi_image_attach_live(&live, m.bias) == -EINVAL);
	CHECK("elf_live_same_sites", live.nfuncs > 0 && same_sites(&file, &live));
	/* Every view byte is readable (no fault) and text equals the file. */
	for (size_t i = 0; i < live.nviews; i++) {
		for (uint64_t k = 0; k < live.views[i].size; k++)
			sum += live.views[i].mem[k];
	}
	CHECK("elf_live_views_readable", sum != 0);
	CHECK("elf_live_text_matches_file",
	      !memcmp(fi_image_text(&live, live.funcs[0].addr - 16, 64),
		      fi_image_text(&file, file.funcs[0].addr - 16, 64), 64));
	fi_image_close(&live);
	fi_image_close(&file);
	dlclose(h);
}

/* A private copy of the file laid out at its link-time addresses + bias. */
static uint8_t *scratch_map(const struct fi_image *im, size_t *len)
{
	uint64_t end = 0;
	uint8_t *base;

	for (size_t i = 0; i < im->nviews; i++)
		if (im->elf->segs[i].vaddr + im->elf->segs[i].memsz > end)
			end = im->elf->segs[i].vaddr + im->elf->segs[i].memsz;
	base = mmap(NULL, end, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	for (size_t i = 0; i < im->nviews; i++)
		memcpy(base + im->views[i].vaddr, im->views[i].mem, im->views[i].size);
	*len = end;
	return base;
}

static void t_live_rescan(void)
{
	struct fi_image im;
	char path[600], err[128];
	struct fineibt_config cfg;
	uint8_t *base, orig[20];
	struct fi_func last;
	struct fi_buf b;
	size_t len;
	uint64_t site;

	snprintf(path, sizeof(path), "%s/prog_nopie", progs);
	if (!CHECK("elf_rescan_open", fi_image_open(&im, path, err, sizeof(err)) == 0))
		return;
	base = scratch_map(&im, &len);
	if (!CHECK("elf_rescan_map", base != NULL))
		return;
	site = im.calls[0].addr;
	/* cfi=off over one call site, in the "live" bytes only */
	memcpy(base + site, fi_seq_caller_off.bytes, fi_seq_caller_off.len);
	/* and a FineIBT preamble (which carries no arity) over the last func */
	last = im.funcs[im.nfuncs - 1];
	memcpy(orig, base + last.addr - FI_PREAMBLE_SIZE, sizeof(orig));
	fi_buf_init(&b, base + last.addr - FI_PREAMBLE_SIZE, 20, 0);
	fi_emit_fineibt_preamble(&b, 0x1234);
	fi_emit_seq(&b, &fi_seq_endbr_poison, 0);
	CHECK("elf_rescan_attach", !b.err &&
	      fi_image_attach_live(&im, (uint64_t)(uintptr_t)base) == 0);
	CHECK("elf_rescan_sees_off", im.calls[0].form == FI_CALL_OFF &&
	      im.calls[1].form == FI_CALL_KCFI);
	CHECK("elf_rescan_sees_fineibt_keeps_arity",
	      im.funcs[im.nfuncs - 1].form == FI_PRE_FINEIBT &&
	      im.funcs[im.nfuncs - 1].hash == 0x1234 &&
	      im.funcs[im.nfuncs - 1].endbr && last.arity >= 0 &&
	      im.funcs[im.nfuncs - 1].arity == last.arity);
	CHECK("elf_rescan_mixed", fi_image_mode(&im, &cfg) == -1);
	CHECK("elf_rescan_mixed_not_kcfi", !fi_image_is_kcfi_mode(&im));
	/* the FineIBT preamble alone (every call in kCFI form again) */
	memcpy(base + site, fi_seq_kcfi_caller.bytes, fi_seq_caller_off.len);
	fi_elf_discover(&im);
	CHECK("elf_rescan_fineibt_pre", im.calls[0].form == FI_CALL_KCFI &&
	      fi_image_mode(&im, NULL) == -1 && !fi_image_is_kcfi_mode(&im));
	memcpy(base + site, fi_seq_caller_off.bytes, fi_seq_caller_off.len);
	memcpy(base + last.addr - FI_PREAMBLE_SIZE, orig, sizeof(orig));
	for (size_t i = 1; i < im.ncalls; i++)
		memcpy(base + im.calls[i].addr, fi_seq_caller_off.bytes, fi_seq_caller_off.len);
	CHECK("elf_rescan_file_untouched",
	      fi_image_ptr(&im, site, 2) == base + site);
	fi_elf_discover(&im);
	CHECK("elf_rescan_all_off", fi_image_mode(&im, &cfg) == FINEIBT_MODE_OFF &&
	      cfg.mode == FINEIBT_MODE_OFF && !fi_image_is_kcfi_mode(&im));
	fi_image_close(&im);
	munmap(base, len);
}

int main(void)
{
	const char *build = getenv("BUILD");
	char cmd[1200];

	snprintf(progs, sizeof(progs), "%s/progs", build ? build : "build");
	snprintf(cmd, sizeof(cmd), "bash tests/progs/build.sh '%s' >/dev/null", progs);
	if (!CHECK("elf_build_progs", system(cmd) == 0))
		return 1;
	t_bad_buffers();
	t_file_accessors();
	t_live_dso();
	t_live_rescan();
	return fi_check_exit();
}
