// SPDX-License-Identifier: MIT
/*
 * src/trap/dwline.c and src/trap/report.c: the DWARF line lookup on this very test
 * binary (built with -g), against a damaged copy of its line table (every
 * corruption must end in 0/-ENOENT/-EINVAL, never a crash), through the
 * file-mapping path the runtime's frozen modules use; and the JSON record
 * of FINEIBT_LOG (fields, escaping, truncation).
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "image.h"
#include "report.h"

static const int probe_line = __LINE__ + 2;
__attribute__((noinline, used)) int fi_test_probe(int x)
{
	return x * 3 + 1;
}

static uint64_t exe_bias(void)
{
	extern const ElfW(Ehdr) __ehdr_start;
	const ElfW(Ehdr) *eh = &__ehdr_start;

	/* A PIE's first PT_LOAD is at link-time 0: the header is the bias. */
	return eh->e_type == ET_DYN ? (uint64_t)(uintptr_t)eh : 0;
}

static bool ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && !strcmp(s + n - m, suf);
}

static void test_lookup(struct fi_image *im, uint64_t addr)
{
	char file[192];
	unsigned int line = 0;
	int ret = fi_dwarf_line(im, addr, file, sizeof(file), &line);

	CHECK("dwarf_line_found", ret == 0);
	CHECK("dwarf_line_file", ends_with(file, "test_report.c"));
	/* The entry row carries the function's first line. */
	if (!CHECK("dwarf_line_line", line >= (unsigned)probe_line &&
		   line <= (unsigned)probe_line + 2))
		printf("  got %s:%u, want line %d..%d\n", file, line,
		       probe_line, probe_line + 2);
	CHECK("dwarf_line_no_row", fi_dwarf_line(im, 0x10, file, sizeof(file),
						 &line) == -ENOENT);
	CHECK("dwarf_line_small_buffer",
	      fi_dwarf_line(im, addr, file, 8, &line) == 0 && strlen(file) == 7);
}

/* The same through the mapped file (no buffer, as a frozen module). */
static void test_mapped(struct fi_image *im, uint64_t addr)
{
	struct fi_image m = *im;
	char file[192];
	unsigned int line = 0;

	m.file = NULL;
	m.file_size = 0;
	CHECK("dwarf_line_mapped", fi_dwarf_line(&m, addr, file, sizeof(file),
						 &line) == 0 &&
	      ends_with(file, "test_report.c"));
	m.path = "/nonexistent/fineibt-test";
	CHECK("dwarf_line_mapped_missing",
	      fi_dwarf_line(&m, addr, file, sizeof(file), &line) == -ENOENT);
}

static bool find_section(const uint8_t *f, size_t size, const char *name,
			 size_t *off, size_t *len)
{
	const Elf64_Ehdr *eh = (const void *)f;
	const Elf64_Shdr *sh = (const void *)(f + eh->e_shoff);
	const char *str = (const char *)f + sh[eh->e_shstrndx].sh_offset;

	for (unsigned i = 1; i < eh->e_shnum; i++) {
		if (!strcmp(str + sh[i].sh_name, name)) {
			*off = sh[i].sh_offset;
			*len = sh[i].sh_size;
			return *off + *len <= size;
		}
	}
	return false;
}

/* Damage .debug_line in many ways; every lookup must return cleanly. */
static void test_corrupt(struct fi_image *im, uint64_t addr)
{
	size_t off, len, runs = 3000;
	uint8_t *save;
	bool ok = true;
	unsigned int seed = 12345;

	if (!CHECK("dwarf_corrupt_section", find_section(im->file, im->file_size,
							 ".debug_line", &off, &len)))
		return;
	save = malloc(len);
	memcpy(save, im->file + off, len);
	for (size_t r = 0; r < runs && ok; r++) {
		char file[64];
		unsigned int line;
		int ret, nflip = 1 + rand_r(&seed) % 8;

		for (int k = 0; k < nflip; k++) {
			/* Mostly the headers, where lengths and forms live. */
			size_t at = (rand_r(&seed) % 4) ? rand_r(&seed) % (len < 256 ? len : 256)
							: rand_r(&seed) % len;

			im->file[off + at] = (uint8_t)rand_r(&seed);
		}
		ret = fi_dwarf_line(im, addr, file, sizeof(file), &line);
		ok &= EXPECT("dwarf_corrupt_returns", ret == 0 || ret == -ENOENT ||
			     ret == -EINVAL);
		ok &= EXPECT("dwarf_corrupt_terminated", memchr(file, 0, sizeof(file)));
		memcpy(im->file + off, save, len);
	}
	/* A table cut short: the section claims fewer bytes than the units. */
	CHECK("dwarf_corrupt_runs", ok);
	free(save);
}

static void test_json(void)
{
	struct fi_trap t = { .kind = FI_TRAP_KCFI, .addr = 0x1234, .target = 0xabc,
			     .type = 0xdeadbeef };
	/* Types: compile-time hash (ct) and the run-time one the check saw. */
	struct fi_report_info ri = {
		.as_in = { "a\"b", "c\\d" }, .nas_in = 2, .have_found = true,
		.found = { .ct = 0x1f, .rt = 0x5eed001f, .known = true },
		.expected = { .ct = 0xdeadbeef, .rt = 0x5eedbeef, .known = true },
		.site = 0x1228, .line = 42 };
	char buf[1536], small[64];
	size_t n;

	strcpy(ri.file, "dir/x\n.c");
	strcpy(ri.target_proto, "int f(const void *)");
	strcpy(ri.expected_proto, "int g(struct \"q\" *)");
	n = fi_report_json(&t, &ri, buf, sizeof(buf));
	CHECK("json_one_line", n > 0 && buf[n - 1] == '\n' && !memchr(buf, '\n', n - 1));
	CHECK("json_version_first", !strncmp(buf, "{\"version\":2,\"time\":", 20));
	CHECK("json_no_runtime_hash_by_default", !strstr(buf, "5eed") &&
	      !strstr(buf, "_runtime"));
	CHECK("json_fields", strstr(buf, "\"kind\":\"kcfi\"") &&
	      strstr(buf, "\"expected\":\"0xdeadbeef\"") &&
	      strstr(buf, "\"found\":\"0x0000001f\"") &&
	      strstr(buf, "\"at\":\"0x1234\",\"at_addr\":\"0x1234\"") &&
	      strstr(buf, "\"target_addr\":\"0xabc\"") &&
	      strstr(buf, "\"line\":42,\"action\":\"fatal\"}") &&
	      strstr(buf, "\"pid\":"));
	CHECK("json_mode_seq_unknown", strstr(buf, "\"mode\":\"?\",\"seq\":\"?\","));
	{
		/* the sequence set of the module that trapped, after its mode */
		struct fi_module m = { .cfg = { .mode = FINEIBT_MODE_FINEIBT,
			.flags = FINEIBT_F_PARANOID | FINEIBT_F_SEQ_V618 |
				 FINEIBT_F_RAND } };

		t.mod = &m;
		fi_report_json(&t, &ri, buf, sizeof(buf));
		/* The mode in its cfi= words, the set also on its own. */
		CHECK("json_mode_seq", strstr(buf, "\"mode\":\"fineibt,paranoid,seq=v6.18\","
					      "\"seq\":\"v6.18\","));
		m.cfg.flags &= ~FINEIBT_F_SEQ_V618;
		fi_report_json(&t, &ri, buf, sizeof(buf));
		CHECK("json_mode_seq_v4", strstr(buf, "\"mode\":\"fineibt,paranoid\",\"seq\":\"v4\","));
		t.mod = NULL;
		n = fi_report_json(&t, &ri, buf, sizeof(buf));
	}
	CHECK("json_escaped", strstr(buf, "\"as_in\":[\"a\\\"b\",\"c\\\\d\"]") &&
	      strstr(buf, "\"file\":\"dir/x\\u000a.c\""));
	CHECK("json_prototypes",
	      strstr(buf, "\"target_prototype\":\"int f(const void *)\","
			  "\"expected_prototype\":\"int g(struct \\\"q\\\" *)\""));
	ri.expected.known = false;
	fi_report_json(&t, &ri, buf, sizeof(buf));
	CHECK("json_expected_unknown", strstr(buf, "\"expected\":null,"
					      "\"expected_unknown\":\"0x5eedbeef\""));
	ri.have_found = false;
	ri.file[0] = '\0';
	ri.target_proto[0] = ri.expected_proto[0] = '\0';
	ri.site = 0;
	t.warn = true;
	fi_report_json(&t, &ri, buf, sizeof(buf));
	CHECK("json_nulls", strstr(buf, "\"found\":null") &&
	      strstr(buf, "\"call_site\":null") &&
	      strstr(buf, "\"target_prototype\":null,\"expected_prototype\":null") &&
	      strstr(buf, "\"file\":null,\"line\":null,\"action\":\"warn\"}"));
	CHECK("json_too_small_dropped", fi_report_json(&t, &ri, small, sizeof(small)) == 0);
}

int main(void)
{
	struct fi_image im;
	char err[160];
	uint64_t addr = (uint64_t)(uintptr_t)fi_test_probe - exe_bias();

	if (!CHECK("report_open_self",
		   fi_image_open(&im, "/proc/self/exe", err, sizeof(err)) == 0))
		return fi_check_exit();
	test_lookup(&im, addr);
	test_mapped(&im, addr);
	test_corrupt(&im, addr);
	test_json();
	fi_image_close(&im);
	return fi_check_exit();
}
