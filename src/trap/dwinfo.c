/* SPDX-License-Identifier: MIT */
/*
 * The C prototype of a function, from DWARF .debug_info (versions 4 and
 * 5), for the CFI failure report: "int by_value(const void *, const void *)".
 *
 * It runs in the SIGILL handler, so, like the line lookup (dwline.c), it
 * streams: the units are walked DIE by DIE until a DW_TAG_subprogram whose
 * DW_AT_low_pc is the address; its return and parameter types are then
 * followed by reference, with a depth limit, into a caller buffer. Nothing
 * is allocated; every read is bounded by its section; a form this reader
 * does not know ends the search (-EINVAL) rather than being guessed at.
 * Compressed sections, split DWARF and type units are not read.
 */
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "dwarf.h"
#include "report.h"

/* Abbreviation codes indexed per unit (512 bytes of stack); others searched. */
#define FI_DI_NABBR	256
/* Attributes per abbreviation, type references followed, parameters. */
#define FI_DI_NATTR	64
#define FI_DI_DEPTH	8
#define FI_DI_NPARAM	32
#define FI_DI_STEPS	2048
#define FI_DI_NONE	(~0ULL)

enum {
	DW_TAG_array_type = 0x01, DW_TAG_class_type = 0x02,
	DW_TAG_enumeration_type = 0x04, DW_TAG_formal_parameter = 0x05,
	DW_TAG_pointer_type = 0x0f, DW_TAG_reference_type = 0x10,
	DW_TAG_compile_unit = 0x11, DW_TAG_structure_type = 0x13,
	DW_TAG_subroutine_type = 0x15, DW_TAG_typedef = 0x16,
	DW_TAG_union_type = 0x17, DW_TAG_unspecified_parameters = 0x18,
	DW_TAG_base_type = 0x24, DW_TAG_const_type = 0x26,
	DW_TAG_subprogram = 0x2e, DW_TAG_volatile_type = 0x35,
	DW_TAG_restrict_type = 0x37, DW_TAG_unspecified_type = 0x3b,
	DW_TAG_rvalue_reference_type = 0x42, DW_TAG_atomic_type = 0x47,

	DW_AT_name = 0x03, DW_AT_low_pc = 0x11, DW_AT_prototyped = 0x27,
	DW_AT_abstract_origin = 0x31, DW_AT_specification = 0x47,
	DW_AT_type = 0x49, DW_AT_str_offsets_base = 0x72,
	DW_AT_addr_base = 0x73,

	DW_FORM_addr = 0x01, DW_FORM_block2 = 0x03, DW_FORM_block4 = 0x04,
	DW_FORM_data2 = 0x05, DW_FORM_data4 = 0x06, DW_FORM_data8 = 0x07,
	DW_FORM_string = 0x08, DW_FORM_block = 0x09, DW_FORM_block1 = 0x0a,
	DW_FORM_data1 = 0x0b, DW_FORM_flag = 0x0c, DW_FORM_sdata = 0x0d,
	DW_FORM_strp = 0x0e, DW_FORM_udata = 0x0f, DW_FORM_ref_addr = 0x10,
	DW_FORM_ref1 = 0x11, DW_FORM_ref2 = 0x12, DW_FORM_ref4 = 0x13,
	DW_FORM_ref8 = 0x14, DW_FORM_ref_udata = 0x15,
	DW_FORM_sec_offset = 0x17, DW_FORM_exprloc = 0x18,
	DW_FORM_flag_present = 0x19, DW_FORM_strx = 0x1a,
	DW_FORM_addrx = 0x1b, DW_FORM_ref_sup4 = 0x1c,
	DW_FORM_strp_sup = 0x1d, DW_FORM_data16 = 0x1e,
	DW_FORM_line_strp = 0x1f, DW_FORM_ref_sig8 = 0x20,
	DW_FORM_implicit_const = 0x21, DW_FORM_loclistx = 0x22,
	DW_FORM_rnglistx = 0x23, DW_FORM_ref_sup8 = 0x24,
	DW_FORM_strx1 = 0x25, DW_FORM_strx2 = 0x26, DW_FORM_strx3 = 0x27,
	DW_FORM_strx4 = 0x28, DW_FORM_addrx1 = 0x29, DW_FORM_addrx2 = 0x2a,
	DW_FORM_addrx3 = 0x2b, DW_FORM_addrx4 = 0x2c,
};

/* ------------------------------------------------------------ sections */

struct fi_di {
	struct fi_dw_sect info, abbrev, str, line_str, str_offs, addr;
};

/* A NUL-terminated string at @off of @s, or NULL. */
static const char *fi_di_str_at(const struct fi_dw_sect *s, uint64_t off)
{
	if (!s->data || off >= s->size || !memchr(s->data + off, 0, s->size - off))
		return NULL;
	return (const char *)s->data + off;
}

/* ---------------------------------------------------------------- units */

struct fi_di_cu {
	const uint8_t *start, *die0, *end;	/* header, first DIE, end */
	unsigned int version;
	bool dwarf64;
	uint8_t addr_size;
	struct fi_dw_sect abbrev;		/* from the unit's table on */
	uint64_t str_base, addr_base;
	uint16_t abbr[FI_DI_NABBR];		/* offset + 1 of code i, or 0 */
};

/* A DIE as far as prototypes need it. */
struct fi_di_die {
	uint64_t tag;
	bool children;
	const uint8_t *next;		/* the DIE after its attributes */
	uint64_t name_form, name_val;
	const char *name_ptr;		/* DW_FORM_string */
	uint64_t low_form, low_val;
	bool have_low;
	uint64_t type, origin;		/* section offsets or FI_DI_NONE */
	bool prototyped;
	uint64_t str_base, addr_base;
	bool have_str_base, have_addr_base;
};

/* Skip one abbreviation's attribute specifications; false if malformed. */
static bool fi_di_abbrev_skip(struct fi_dw *a)
{
	for (unsigned int n = 0; n <= FI_DI_NATTR && !a->bad; n++) {
		uint64_t at = fi_dw_uleb(a), form = fi_dw_uleb(a);

		if (!at && !form)
			return !a->bad;
		if (form == DW_FORM_implicit_const)
			fi_dw_sleb(a);
	}
	return false;
}

static void fi_di_index_abbrevs(struct fi_di_cu *cu)
{
	struct fi_dw a = { .p = cu->abbrev.data,
			      .end = cu->abbrev.data + cu->abbrev.size };

	memset(cu->abbr, 0, sizeof(cu->abbr));
	while (!a.bad && a.p < a.end) {
		size_t off = (size_t)(a.p - cu->abbrev.data);
		uint64_t code = fi_dw_uleb(&a);

		if (!code)
			break;
		fi_dw_uleb(&a);		/* tag */
		fi_dw_uint(&a, 1);	/* children */
		/* Codes not indexed (large, or far in) are searched for. */
		if (code < FI_DI_NABBR && !cu->abbr[code] && off < UINT16_MAX)
			cu->abbr[code] = (uint16_t)(off + 1);
		if (!fi_di_abbrev_skip(&a))
			break;
	}
}

/* The abbreviation @code of @cu, positioned after its code; false if none. */
static bool fi_di_abbrev(const struct fi_di_cu *cu, uint64_t code,
			 struct fi_dw *a)
{
	*a = (struct fi_dw){ .p = cu->abbrev.data,
				.end = cu->abbrev.data + cu->abbrev.size };
	if (code < FI_DI_NABBR && cu->abbr[code]) {
		a->p += cu->abbr[code] - 1;
		return fi_dw_uleb(a) == code && !a->bad;
	}
	while (!a->bad && a->p < a->end) {
		uint64_t c = fi_dw_uleb(a);

		if (!c)
			return false;
		if (c == code)
			return !a->bad;
		fi_dw_uleb(a);
		fi_dw_uint(a, 1);
		if (!fi_di_abbrev_skip(a))
			return false;
	}
	return false;
}

/*
 * One attribute value of @form at @d: a number or offset in *@val (a
 * reference is made section-relative), a DW_FORM_string in *@s. Returns
 * false for a form this reader does not know.
 */
static bool fi_di_form(struct fi_dw *d, const struct fi_di_cu *cu,
		       const struct fi_di *dw, uint64_t form, int64_t implicit,
		       uint64_t *val, const char **s)
{
	size_t osz = cu->dwarf64 ? 8 : 4;
	uint64_t cu_off = (uint64_t)(cu->start - dw->info.data);

	*val = 0;
	switch (form) {
	case DW_FORM_addr:
		*val = fi_dw_uint(d, cu->addr_size);
		return true;
	case DW_FORM_data1: case DW_FORM_flag: case DW_FORM_strx1:
	case DW_FORM_addrx1:
		*val = fi_dw_uint(d, 1);
		return true;
	case DW_FORM_data2: case DW_FORM_strx2: case DW_FORM_addrx2:
		*val = fi_dw_uint(d, 2);
		return true;
	case DW_FORM_strx3: case DW_FORM_addrx3:
		*val = fi_dw_uint(d, 3);
		return true;
	case DW_FORM_data4: case DW_FORM_strx4: case DW_FORM_addrx4:
	case DW_FORM_ref_sup4:
		*val = fi_dw_uint(d, 4);
		return true;
	case DW_FORM_data8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8:
		*val = fi_dw_uint(d, 8);
		return true;
	case DW_FORM_data16:
		fi_dw_skip(d, 16);
		return true;
	case DW_FORM_sdata:
		*val = (uint64_t)fi_dw_sleb(d);
		return true;
	case DW_FORM_udata: case DW_FORM_strx: case DW_FORM_addrx:
	case DW_FORM_loclistx: case DW_FORM_rnglistx:
		*val = fi_dw_uleb(d);
		return true;
	case DW_FORM_strp: case DW_FORM_line_strp: case DW_FORM_sec_offset:
	case DW_FORM_strp_sup:
		*val = fi_dw_uint(d, osz);
		return true;
	case DW_FORM_ref_addr:
		*val = fi_dw_uint(d, cu->version <= 2 ? cu->addr_size : osz);
		return true;
	case DW_FORM_ref1:
		*val = cu_off + fi_dw_uint(d, 1);
		return true;
	case DW_FORM_ref2:
		*val = cu_off + fi_dw_uint(d, 2);
		return true;
	case DW_FORM_ref4:
		*val = cu_off + fi_dw_uint(d, 4);
		return true;
	case DW_FORM_ref8:
		*val = cu_off + fi_dw_uint(d, 8);
		return true;
	case DW_FORM_ref_udata:
		*val = cu_off + fi_dw_uleb(d);
		return true;
	case DW_FORM_string:
		*s = (const char *)d->p;
		if (d->bad || !memchr(d->p, 0, (size_t)(d->end - d->p))) {
			d->bad = true;
			return true;
		}
		d->p += strlen(*s) + 1;
		return true;
	case DW_FORM_flag_present:
		*val = 1;
		return true;
	case DW_FORM_implicit_const:
		*val = (uint64_t)implicit;
		return true;
	case DW_FORM_block1:
		fi_dw_skip(d, fi_dw_uint(d, 1));
		return true;
	case DW_FORM_block2:
		fi_dw_skip(d, fi_dw_uint(d, 2));
		return true;
	case DW_FORM_block4:
		fi_dw_skip(d, fi_dw_uint(d, 4));
		return true;
	case DW_FORM_block: case DW_FORM_exprloc:
		fi_dw_skip(d, fi_dw_uleb(d));
		return true;
	default:
		return false;
	}
}

static bool fi_di_is_ref(uint64_t form)
{
	return (form >= DW_FORM_ref_addr && form <= DW_FORM_ref_udata);
}

/* The DIE at @p of @cu into @die; false at the end or if malformed. */
static bool fi_di_die(const struct fi_di_cu *cu, const struct fi_di *dw,
		      const uint8_t *p, struct fi_di_die *die, bool *null)
{
	struct fi_dw d = { .p = p, .end = cu->end }, a;
	uint64_t code;

	*die = (struct fi_di_die){ .type = FI_DI_NONE, .origin = FI_DI_NONE };
	*null = false;
	code = fi_dw_uleb(&d);
	if (d.bad)
		return false;
	if (!code) {
		*null = true;
		die->next = d.p;
		return true;
	}
	if (!fi_di_abbrev(cu, code, &a))
		return false;
	die->tag = fi_dw_uleb(&a);
	die->children = fi_dw_uint(&a, 1);
	for (unsigned int n = 0; ; n++) {
		uint64_t at = fi_dw_uleb(&a), form = fi_dw_uleb(&a), val;
		int64_t imp = form == DW_FORM_implicit_const ? fi_dw_sleb(&a) : 0;
		const char *s = NULL;

		if (a.bad || n > FI_DI_NATTR)
			return false;
		if (!at && !form)
			break;
		if (!fi_di_form(&d, cu, dw, form, imp, &val, &s) || d.bad)
			return false;
		switch (at) {
		case DW_AT_name:
			die->name_form = form;
			die->name_val = val;
			die->name_ptr = s;
			break;
		case DW_AT_low_pc:
			die->low_form = form;
			die->low_val = val;
			die->have_low = true;
			break;
		case DW_AT_type:
			if (fi_di_is_ref(form))
				die->type = val;
			break;
		case DW_AT_abstract_origin:
		case DW_AT_specification:
			if (fi_di_is_ref(form))
				die->origin = val;
			break;
		case DW_AT_prototyped:
			die->prototyped = val != 0;
			break;
		case DW_AT_str_offsets_base:
			die->str_base = val;
			die->have_str_base = true;
			break;
		case DW_AT_addr_base:
			die->addr_base = val;
			die->have_addr_base = true;
			break;
		}
	}
	die->next = d.p;
	return true;
}

/* The unit header at @p; false if malformed (the walk then stops). */
static bool fi_di_cu_open(const struct fi_di *dw, const uint8_t *p,
			  struct fi_di_cu *cu)
{
	const uint8_t *iend = dw->info.data + dw->info.size;
	struct fi_dw d = { .p = p, .end = iend };
	uint64_t len = fi_dw_uint(&d, 4), aoff;
	struct fi_di_die die;
	bool null;

	*cu = (struct fi_di_cu){ .start = p, .die0 = p, .end = p };
	cu->dwarf64 = len == 0xffffffffu;
	if (cu->dwarf64)
		len = fi_dw_uint(&d, 8);
	if (d.bad || len > (uint64_t)(iend - d.p) || len < 2)
		return false;
	cu->end = d.p + len;
	d.end = cu->end;
	cu->version = (unsigned int)fi_dw_uint(&d, 2);
	if (cu->version >= 5) {
		uint8_t type = (uint8_t)fi_dw_uint(&d, 1);

		cu->addr_size = (uint8_t)fi_dw_uint(&d, 1);
		aoff = fi_dw_uint(&d, cu->dwarf64 ? 8 : 4);
		/* Only full and partial units; skeleton/type units differ. */
		if (type != 1 && type != 3)
			cu->version = 0;
	} else {
		aoff = fi_dw_uint(&d, cu->dwarf64 ? 8 : 4);
		cu->addr_size = (uint8_t)fi_dw_uint(&d, 1);
	}
	cu->die0 = d.p;
	if (d.bad)
		return false;
	if (cu->version < 2 || cu->version > 5 || cu->addr_size > 8 ||
	    !cu->addr_size || aoff >= dw->abbrev.size)
		return true;	/* a unit to skip, cu->version == 0 */
	cu->abbrev = (struct fi_dw_sect){ dw->abbrev.data + aoff,
					  dw->abbrev.size - aoff };
	fi_di_index_abbrevs(cu);
	/* The bases (DWARF 5): LLVM's defaults are just past the headers. */
	cu->str_base = cu->dwarf64 ? 16 : 8;
	cu->addr_base = 8;
	if (fi_di_die(cu, dw, cu->die0, &die, &null) && !null) {
		if (die.have_str_base)
			cu->str_base = die.str_base;
		if (die.have_addr_base)
			cu->addr_base = die.addr_base;
	}
	return true;
}

static bool fi_di_valid(const struct fi_di_cu *cu)
{
	return cu->version >= 2 && cu->version <= 5 && cu->abbrev.data;
}

/* The unit holding section offset @off, into @cu (reused if it does). */
static bool fi_di_cu_for(const struct fi_di *dw, uint64_t off,
			 struct fi_di_cu *cu)
{
	const uint8_t *p = dw->info.data, *end = p + dw->info.size;

	if (off >= dw->info.size)
		return false;
	if (cu->start && dw->info.data + off >= cu->die0 &&
	    dw->info.data + off < cu->end)
		return fi_di_valid(cu);
	while (p < end) {
		if (!fi_di_cu_open(dw, p, cu))
			return false;
		if (dw->info.data + off < cu->end)
			return dw->info.data + off >= cu->die0 && fi_di_valid(cu);
		p = cu->end;
	}
	return false;
}

/* --------------------------------------------------------------- values */

static const char *fi_di_name(const struct fi_di_cu *cu, const struct fi_di *dw,
			      const struct fi_di_die *die)
{
	size_t osz = cu->dwarf64 ? 8 : 4;
	uint64_t idx = die->name_val;
	struct fi_dw d;

	switch (die->name_form) {
	case DW_FORM_string:
		return die->name_ptr;
	case DW_FORM_strp:
		return fi_di_str_at(&dw->str, die->name_val);
	case DW_FORM_line_strp:
		return fi_di_str_at(&dw->line_str, die->name_val);
	case DW_FORM_strx: case DW_FORM_strx1: case DW_FORM_strx2:
	case DW_FORM_strx3: case DW_FORM_strx4:
		if (idx > dw->str_offs.size / osz ||
		    cu->str_base > dw->str_offs.size)
			return NULL;
		d = (struct fi_dw){ .p = dw->str_offs.data + cu->str_base,
				       .end = dw->str_offs.data + dw->str_offs.size };
		fi_dw_skip(&d, idx * osz);
		idx = fi_dw_uint(&d, osz);
		return d.bad ? NULL : fi_di_str_at(&dw->str, idx);
	default:
		return NULL;
	}
}

static bool fi_di_low_pc(const struct fi_di_cu *cu, const struct fi_di *dw,
			 const struct fi_di_die *die, uint64_t *pc)
{
	struct fi_dw d;

	if (!die->have_low)
		return false;
	if (die->low_form == DW_FORM_addr) {
		*pc = die->low_val;
		return true;
	}
	if (die->low_form != DW_FORM_addrx && (die->low_form < DW_FORM_addrx1 ||
					       die->low_form > DW_FORM_addrx4))
		return false;
	if (die->low_val > dw->addr.size / cu->addr_size ||
	    cu->addr_base > dw->addr.size)
		return false;
	d = (struct fi_dw){ .p = dw->addr.data + cu->addr_base,
			       .end = dw->addr.data + dw->addr.size };
	fi_dw_skip(&d, die->low_val * cu->addr_size);
	*pc = fi_dw_uint(&d, cu->addr_size);
	return !d.bad;
}

/* ---------------------------------------------------------------- text */

struct fi_di_out {
	char *buf;
	size_t len, cap;	/* cap includes the NUL */
	bool bad;		/* a DIE could not be read, or too many */
	unsigned int steps;	/* DIEs read, against looping references */
};

/* A budget for one prototype: types of types are a graph, not a tree. */
static bool fi_di_step(struct fi_di_out *o)
{
	if (++o->steps > FI_DI_STEPS)
		o->bad = true;
	return !o->bad;
}

static void fi_di_put(struct fi_di_out *o, const char *s)
{
	while (s && *s && o->len + 1 < o->cap)
		o->buf[o->len++] = *s++;
	o->buf[o->len] = '\0';
}

static void fi_di_type(const struct fi_di *dw, struct fi_di_cu *cu,
		       uint64_t off, unsigned int depth, struct fi_di_out *o);

/* The DIE at section offset @off (its unit into @cu). */
static bool fi_di_die_at(const struct fi_di *dw, struct fi_di_cu *cu,
			 uint64_t off, struct fi_di_die *die)
{
	bool null;

	return fi_di_cu_for(dw, off, cu) &&
	       fi_di_die(cu, dw, dw->info.data + off, die, &null) && !null;
}

/*
 * The parameter list of subprogram or subroutine type @die (at @off):
 * the types of its DW_TAG_formal_parameter children, "..." for
 * DW_TAG_unspecified_parameters. Nested children are skipped by depth.
 */
static void fi_di_params(const struct fi_di *dw, struct fi_di_cu *cu,
			 const struct fi_di_die *die, unsigned int depth,
			 struct fi_di_out *o)
{
	const uint8_t *p = die->next;
	unsigned int n = 0, level = 1;
	bool prototyped = die->prototyped;
	const uint8_t *cu_end = cu->end;

	fi_di_put(o, "(");
	while (die->children && level && !o->bad && n < FI_DI_NPARAM) {
		struct fi_di_die c;
		bool null;

		/* A type of another unit may have switched @cu: come back. */
		if (p >= cu_end ||
		    !fi_di_cu_for(dw, (uint64_t)(p - dw->info.data), cu)) {
			o->bad = true;
			break;
		}
		if (!fi_di_step(o) || !fi_di_die(cu, dw, p, &c, &null)) {
			o->bad = true;
			break;
		}
		p = c.next;
		if (null) {
			level--;
			continue;
		}
		if (level == 1 && c.tag == DW_TAG_formal_parameter) {
			fi_di_put(o, n++ ? ", " : "");
			fi_di_type(dw, cu, c.type, depth + 1, o);
		} else if (level == 1 && c.tag == DW_TAG_unspecified_parameters) {
			fi_di_put(o, n++ ? ", ..." : "...");
		}
		if (c.children)
			level++;
	}
	if (!n && prototyped)
		fi_di_put(o, "void");
	fi_di_put(o, ")");
}

static bool fi_di_is_ptrlike(uint64_t tag)
{
	return tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type ||
	       tag == DW_TAG_rvalue_reference_type;
}

/* The C spelling of the type at section offset @off (FI_DI_NONE: void). */
static void fi_di_type(const struct fi_di *dw, struct fi_di_cu *cu,
		       uint64_t off, unsigned int depth, struct fi_di_out *o)
{
	struct fi_di_die die, in;
	const char *name, *kw = NULL;

	if (off == FI_DI_NONE) {
		fi_di_put(o, "void");
		return;
	}
	if (!fi_di_step(o))
		return;
	if (depth > FI_DI_DEPTH) {
		fi_di_put(o, "...");
		return;
	}
	if (!fi_di_die_at(dw, cu, off, &die)) {
		o->bad = true;
		return;
	}
	name = fi_di_name(cu, dw, &die);
	switch (die.tag) {
	case DW_TAG_base_type: case DW_TAG_typedef:
	case DW_TAG_unspecified_type:
		fi_di_put(o, name ? name : "?");
		return;
	case DW_TAG_structure_type: kw = "struct "; break;
	case DW_TAG_union_type: kw = "union "; break;
	case DW_TAG_enumeration_type: kw = "enum "; break;
	case DW_TAG_class_type: kw = "class "; break;
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		if (die.type != FI_DI_NONE && fi_di_die_at(dw, cu, die.type, &in) &&
		    in.tag == DW_TAG_subroutine_type) {
			/* A function pointer: "ret (*)(params)". */
			fi_di_type(dw, cu, in.type, depth + 1, o);
			fi_di_put(o, " (*)");
			fi_di_params(dw, cu, &in, depth + 1, o);
			return;
		}
		fi_di_type(dw, cu, die.type, depth + 1, o);
		/* "char **", "int *" */
		if (o->len && o->buf[o->len - 1] != '*')
			fi_di_put(o, " ");
		fi_di_put(o, die.tag == DW_TAG_pointer_type ? "*" :
			  die.tag == DW_TAG_reference_type ? "&" : "&&");
		return;
	case DW_TAG_const_type: kw = "const"; break;
	case DW_TAG_volatile_type: kw = "volatile"; break;
	case DW_TAG_restrict_type: kw = "restrict"; break;
	case DW_TAG_atomic_type: kw = "_Atomic"; break;
	case DW_TAG_array_type:
		fi_di_type(dw, cu, die.type, depth + 1, o);
		fi_di_put(o, " []");
		return;
	case DW_TAG_subroutine_type:
		fi_di_type(dw, cu, die.type, depth + 1, o);
		fi_di_put(o, " ");
		fi_di_params(dw, cu, &die, depth + 1, o);
		return;
	default:
		fi_di_put(o, "?");
		return;
	}
	if (die.tag == DW_TAG_structure_type || die.tag == DW_TAG_union_type ||
	    die.tag == DW_TAG_enumeration_type || die.tag == DW_TAG_class_type) {
		fi_di_put(o, kw);
		fi_di_put(o, name ? name : "<anonymous>");
		return;
	}
	/* A qualifier: after a pointer ("char *const"), else before. */
	if (die.type != FI_DI_NONE && fi_di_die_at(dw, cu, die.type, &in) &&
	    fi_di_is_ptrlike(in.tag)) {
		fi_di_type(dw, cu, die.type, depth + 1, o);
		fi_di_put(o, kw);
		return;
	}
	fi_di_put(o, kw);
	fi_di_put(o, " ");
	fi_di_type(dw, cu, die.type, depth + 1, o);
}

/* ---------------------------------------------------------------- search */

/* The subprogram at @addr: its DIE's section offset, or FI_DI_NONE. */
static uint64_t fi_di_find(const struct fi_di *dw, struct fi_di_cu *cu,
			   uint64_t addr, int *err)
{
	const uint8_t *p = dw->info.data, *end = p + dw->info.size;

	while (p < end) {
		const uint8_t *q;

		if (!fi_di_cu_open(dw, p, cu)) {
			*err = -EINVAL;
			return FI_DI_NONE;
		}
		for (q = cu->die0; fi_di_valid(cu) && q < cu->end; ) {
			struct fi_di_die die;
			uint64_t pc;
			bool null;

			if (!fi_di_die(cu, dw, q, &die, &null)) {
				*err = -EINVAL;
				break;	/* the next unit may still be readable */
			}
			if (!null && die.tag == DW_TAG_subprogram &&
			    fi_di_low_pc(cu, dw, &die, &pc) && pc == addr)
				return (uint64_t)(q - dw->info.data);
			q = die.next;
		}
		p = cu->end;
	}
	return FI_DI_NONE;
}

static int fi_di_proto(const struct fi_di *dw, uint64_t addr, char *buf,
		       size_t len)
{
	struct fi_di_cu cu = { 0 };
	struct fi_di_die die, def;
	struct fi_di_out o = { .buf = buf, .cap = len };
	uint64_t off, def_off;
	const char *name;
	int err = -ENOENT;

	off = fi_di_find(dw, &cu, addr, &err);
	if (off == FI_DI_NONE)
		return err;
	/*
	 * An out-of-line copy of an inlined function, or a definition of a
	 * declaration, points at the DIE that has the name and the types.
	 */
	def_off = off;
	if (!fi_di_die_at(dw, &cu, off, &die))
		return -EINVAL;
	for (unsigned int i = 0; die.origin != FI_DI_NONE && i < 4; i++) {
		def_off = die.origin;
		if (!fi_di_die_at(dw, &cu, def_off, &def) ||
		    def.tag != DW_TAG_subprogram)
			return -EINVAL;
		die = def;
	}
	name = fi_di_name(&cu, dw, &die);
	if (!name || !name[0])
		return -ENOENT;
	fi_di_type(dw, &cu, die.type, 0, &o);
	/* "char *name", "int name" */
	if (o.len && buf[o.len - 1] != '*')
		fi_di_put(&o, " ");
	fi_di_put(&o, name);
	if (!fi_di_die_at(dw, &cu, def_off, &die))
		return -EINVAL;
	fi_di_params(dw, &cu, &die, 0, &o);
	if (o.bad) {
		buf[0] = '\0';
		return -EINVAL;
	}
	return 0;
}

static int fi_di_lookup(const uint8_t *file, size_t size, uint64_t addr,
			char *buf, size_t len)
{
	struct fi_di dw;

	if (!fi_dw_section(file, size, ".debug_info", &dw.info) ||
	    !fi_dw_section(file, size, ".debug_abbrev", &dw.abbrev))
		return -ENOENT;
	fi_dw_section(file, size, ".debug_str", &dw.str);
	fi_dw_section(file, size, ".debug_line_str", &dw.line_str);
	fi_dw_section(file, size, ".debug_str_offsets", &dw.str_offs);
	fi_dw_section(file, size, ".debug_addr", &dw.addr);
	return fi_di_proto(&dw, addr, buf, len);
}

/* As fi_dwarf_line: the image's buffer, else its file mapped read-only. */
int fi_dwarf_proto(const struct fi_image *im, uint64_t addr, char *buf,
		   size_t len)
{
	struct fi_dw_sect bytes;
	int ret;

	if (!len)
		return -EINVAL;
	buf[0] = '\0';
	ret = fi_dw_file_open(im, &bytes);
	if (ret)
		return ret;
	ret = fi_di_lookup(bytes.data, bytes.size, addr, buf, len);
	fi_dw_file_close(im, &bytes);
	if (ret)
		buf[0] = '\0';
	return ret;
}
