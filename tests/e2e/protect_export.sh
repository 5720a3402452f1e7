#!/usr/bin/env bash
# protect_export (docs/protection.md, "Values read from writable memory"):
# what dladdr names as an export, which a dlsym veneer (valid for every
# type) and the SIGILL handler's exemption for an uninstrumented
# library's export both take, rests on the object's link_map: l_addr, and
# l_info[DT_SYMTAB] / l_info[DT_STRTAB], pointers to its dynamic entries
# that a write primitive can aim at entries of its own (ld.so's heap).
# The kernel checked the answer's file offset against the symbol's value
# (fi_export_real), and that the symbol and its name lay read-only in the
# object, not that they were the object's own. Now the symbol must be one
# of the object's .dynsym and its name its own in .dynstr, both read
# from its PT_DYNAMIC in read-only memory, never from the link_map.
#  - symtab: PLAIN's symbol table aimed 8 bytes into its .rela.dyn (a
#    RELATIVE relocation read as a symbol has its addend as value: a
#    static function's address), and a second copy's aimed at a writable
#    symbol of the program, so that libc's dlsym of plain_entry there
#    answers PLAIN's static plain_hidden: it got a veneer, and a call of
#    another type through it ran ("forged ran 7", exit 0, on the tree
#    before). Now: the plain address, the checking caller traps (132).
#  - jmpveneer: the same lookup answering libc's longjmp, a real export
#    truly named: it got a veneer under the name asked for, and the
#    program's call through it longjmp'ed ("longjmp reached"). Now the
#    export's own name is checked against the names that never get one.
#  - strtab: libc's string table aimed so that longjmp's symbol reads
#    "abs" (libc's own bytes), then a call without a kCFI check (the
#    coarse check) to longjmp: the handler's exemption took it
#    ("longjmp reached (forged 1)"). Now: the coarse check's report, 132.
#  - none: the control of strtab, unforged: refused by name (132).
#  - cross: libc's symbol table aimed at the program's, where labs's
#    index holds an absolute symbol (dladdr skips those) naming the middle
#    of labs: dladdr named no export there, and the answer was taken when
#    libc, asked for the name again (the same forged lookup), gave it
#    again ("cross veneer": a veneer to any address of libc's text, the
#    middle of a function or longjmp alike). Now only an IFUNC of the
#    object's own tables whose resolver answers it: "cross plain".
# On the tree before: symtab, jmpveneer, strtab and cross fail in every
# mode.
. "$(dirname "$0")/progs/protect_common.bash"

EX=$PR_OUT/export
mkdir -p "$EX"
PROG=$EX/protect_export
PLAIN=$EX/libfi_export_plain.so
COPY=$EX/libfi_export_copy.so
{ pr_fresh "$PROG" "$PR_SRC/protect_export.c" ||
  "$FCC" -O2 -Wall -Wno-deprecated-non-prototype "$PR_SRC/protect_export.c" -o "$PROG"; } &&
{ pr_fresh "$PLAIN" "$PR_SRC/protect_export_lib.c" ||
  clang-22 -O2 -fPIC -shared -Wl,-z,nopack-relative-relocs \
	"$PR_SRC/protect_export_lib.c" -o "$PLAIN"; } &&
cp "$PLAIN" "$COPY" ||
	{ pr_fail build "could not build protect_export"; exit 1; }

NOTINST='^fineibt: CFI failure at [^ ]+ \(target: [^ ]+ in libfi_export_plain\.so, not instrumented; '
for m in $(fi_with_sets kcfi fineibt,paranoid auto); do
	pr_run export_symtab "$m" "$PROG" symtab "$PLAIN" "$COPY"
	if [ "$PR_RC" = 132 ] && [ "$PR_OUT_TXT" = 'entry 5' ] &&
	   grep -Eq "$NOTINST" <<<"$PR_ERR_TXT"; then
		pr_pass "symtab[$m]: a relocation read as a symbol gets no veneer; the call traps"
	else
		pr_fail "symtab[$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
	fi
	pr_run export_jmp "$m" "$PROG" jmpveneer "$PLAIN" "$COPY"
	if [ "$PR_RC" = 132 ] && [ "$PR_OUT_TXT" = 'entry 5' ] &&
	   grep -Eq "$PR_REPORT_RE"'[^ ]*longjmp\+0x0 in libc\.so\.6, not instrumented' <<<"$PR_ERR_TXT"; then
		pr_pass "jmpveneer[$m]: longjmp answered for another name gets no veneer; the call traps"
	else
		pr_fail "jmpveneer[$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
	fi
	pr_run export_cross "$m" "$PROG" cross "$PLAIN"
	if [ "$PR_RC" = 0 ] && [ "$PR_OUT_TXT" = 'cross plain' ]; then
		pr_pass "cross[$m]: a forged lookup's answer inside libc gets no veneer"
	else
		pr_fail "cross[$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
	fi
done
# The coarse check runs in plain fineibt too (its thunk calls).
for m in $(fi_with_sets kcfi fineibt fineibt,paranoid auto); do
	for c in strtab none; do
		pr_run "export_$c" "$m" "$PROG" "$c" "$PLAIN"
		if [ "$PR_RC" = 132 ] && [ -z "$PR_OUT_TXT" ] &&
		   grep -Eq "$PR_REPORT_RE"'[^ ]+ in libc\.so\.6, not instrumented; unchecked call site, coarse check' <<<"$PR_ERR_TXT"; then
			pr_pass "$c[$m]: a coarse call to longjmp is refused (its symbol's name is its own)"
		else
			pr_fail "$c[$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
		fi
	done
done
