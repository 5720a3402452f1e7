#!/usr/bin/env bash
# fineibt inspect against an independent oracle: for every test program,
# the counts, hashes, arities, typeids and naked ENDBRs that inspect
# reports must equal what llvm-readelf-22/llvm-objdump-22 show (__cfi_
# symbols and their movl, .kcfi_traps size, thunk calls after a ud2 or
# not, __kcfi_typeid_ symbols, function symbols entered by endbr64 without
# a __cfi_ twin). Also: JSON validity, the text report, "nothing to do",
# usage errors.
set -u
cd "${FINEIBT_ROOT:-.}"
BUILD=${BUILD:-build}
. tests/e2e/progs/sets.bash	# fi_with_sets: both sequence sets
FI=$BUILD/fineibt
out=$BUILD/e2e/inspect
progs=$BUILD/progs
mkdir -p "$out"

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }

if ! bash tests/progs/build.sh "$progs" >"$out/build.log" 2>&1; then
	fail build_progs "tests/progs/build.sh failed (see $out/build.log)"
	exit 1
fi

# The oracle: expected JSON fields from the LLVM tools alone.
oracle() {
	python3 - "$1" "${2:-$1}" <<'PY'
import json, re, subprocess, sys
path, symsrc = sys.argv[1], sys.argv[2]   # symsrc: unstripped twin
def run(*a):
    return subprocess.run(a, check=True, capture_output=True, text=True).stdout
regs = ["eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi"]
funcs, typeids = {}, {}
for l in run("llvm-readelf-22", "-sW", symsrc).splitlines():
    f = l.split()
    if len(f) < 8 or not f[0].endswith(":") or not f[0][:-1].isdigit():
        continue
    name, val, typ, ndx = f[7], int(f[1], 16), f[3], f[6]
    if name.startswith("__kcfi_typeid_"):
        typeids[name[14:]] = val
    elif typ == "FUNC" and ndx != "UND" and val:
        funcs[name] = val
dis = run("llvm-objdump-22", "-d", "--no-show-raw-insn", "--no-leading-addr", symsrc)
# first instruction after each label
first, cur = {}, None
for l in dis.splitlines():
    m = re.match(r"^[0-9a-f]+ <(.+)>:$", l) or re.match(r"^<(.+)>:$", l)
    if m:
        cur = m.group(1); continue
    if cur and l.strip():
        first.setdefault(cur, l.strip()); cur = None
pre, arity = {}, [0] * 8
for name, ins in first.items():
    if not name.startswith("__cfi_"):
        continue
    m = re.match(r"movl\s+\$0x([0-9a-f]+), %(e..)", ins)
    if not m:
        continue
    pre[name[6:]] = (int(m.group(1), 16), regs.index(m.group(2)))
    arity[regs.index(m.group(2))] += 1
naked = sorted(n for n, ins in first.items()
               if n in funcs and ins.startswith("endbr64") and not n.startswith("__cfi_")
               and "__cfi_" + n not in funcs)
# thunk calls: "cs call/jmp <__x86_indirect_thunk_*>"; after a ud2 they end a site
sites = tails = unchecked = 0
prev = ""
for l in run("llvm-objdump-22", "-d", "--no-show-raw-insn", symsrc).splitlines():  # same text
    ins = l.split("\t", 1)[-1].strip() if "\t" in l else ""
    if re.search(r"(call|jmp)q?\s+0x[0-9a-f]+ <__x86_indirect_thunk_", ins):
        if prev == "ud2":
            sites += 1
            tails += ins.startswith("jmp")
        else:
            unchecked += 1
    if ins:
        prev = ins
traps = 0
for l in run("llvm-readelf-22", "-SW", path).splitlines():
    m = re.search(r"\] (\S+)\s+\S+\s+[0-9a-f]+ [0-9a-f]+ ([0-9a-f]+)", l)
    if m and m.group(1) == ".kcfi_traps":
        traps = int(m.group(2), 16) // 4
stripped = path != symsrc
print(json.dumps({
    "preambles": len(pre), "call_sites": traps, "sites_by_disasm": sites,
    "tail_calls": tails, "thunk_calls": unchecked, "arity": arity,
    "hashes": {} if stripped else {k: "%#010x" % v[0] for k, v in pre.items()},
    "typeids": {} if stripped else {k: "%#010x" % v for k, v in typeids.items()},
    "naked": [] if stripped else naked,
}))
PY
}

# Compare inspect --json --list with the oracle; prints mismatches.
compare() {
	python3 - "$1" "$2" <<'PY'
import json, sys
got, exp = json.load(open(sys.argv[1])), json.loads(open(sys.argv[2]).read())
bad = []
def eq(what, a, b):
    if a != b:
        bad.append("%s: inspect %r, oracle %r" % (what, a, b))
for k in ("preambles", "call_sites", "tail_calls", "thunk_calls", "arity"):
    eq(k, got[k], exp[k])
eq("call sites vs disassembly", got["call_sites"], exp["sites_by_disasm"])
eq("mode", got["mode"], "kcfi")
eq("unmatched", got["unmatched"], [])
if exp["hashes"]:
    h = {p["symbol"].rsplit("+", 1)[0]: p["hash"] for p in got["sites"]["preambles"]}
    eq("preamble hashes", h, exp["hashes"])
    eq("typeids", {t["name"]: t["hash"] for t in got["typeids"]}, exp["typeids"])
    eq("naked", sorted(n["symbol"] for n in got["naked_endbr"]), exp["naked"])
ar = [0] * 8
for p in got["sites"]["preambles"]:
    ar[p["arity"]] += 1
eq("listed arity", ar, exp["arity"])
eq("listed calls", len(got["sites"]["calls"]), exp["call_sites"])
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}

check_prog() {
	local name=$1 file=$progs/$1 symsrc=$progs/${2:-$1}
	local js=$out/$name.json exp=$out/$name.expected

	if ! "$FI" inspect "$file" --json --list >"$js" 2>"$out/$name.err"; then
		fail "inspect_$name" "exit status $? ($(head -c 200 "$out/$name.err"))"
		return
	fi
	if python3 -m json.tool "$js" >/dev/null 2>&1; then
		pass "inspect_json_valid_$name"
	else
		fail "inspect_json_valid_$name" "not valid JSON"
		return
	fi
	if ! oracle "$file" "$symsrc" >"$exp" 2>"$out/$name.oracle.err"; then
		fail "inspect_oracle_$name" "oracle failed: $(tail -n 1 "$out/$name.oracle.err")"
		return
	fi
	if msg=$(compare "$js" "$exp"); then
		pass "inspect_counts_$name"
	else
		fail "inspect_counts_$name" "$(echo "$msg" | tr '\n' ';')"
	fi
}

for p in prog_pie prog_nopie libfiprog.so prog_relr libfiprog_relr.so \
	 prog_noarity prog_noarity_nopie prog_bhi; do
	check_prog "$p"
done
# stripped: no symbols left, the counts must still be those of the original
check_prog prog_stripped prog_pie

# The programs exercise what they promise (guards against a silent rebuild).
js=$out/prog_pie.json
if python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))
assert all(j["arity"]), j["arity"]
assert j["tail_calls"] >= 2 and j["thunk_calls"] >= 1
assert "naked_endbr" in [n["symbol"] for n in j["naked_endbr"]]
assert "write" in [t["name"] for t in j["typeids"]]' "$js" 2>"$out/cover.err"; then
	pass inspect_programs_cover_features
else
	fail inspect_programs_cover_features "$(tail -n 1 "$out/cover.err")"
fi
if python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))
assert j["arity"][0] == j["preambles"], j["arity"]' "$out/prog_noarity.json" 2>/dev/null; then
	pass inspect_noarity_all_eax
else
	fail inspect_noarity_all_eax "arity histogram of prog_noarity is not all eax"
fi

# Text report
txt=$("$FI" inspect "$progs/prog_pie" 2>&1)
if grep -q '^mode: *kcfi$' <<<"$txt" && grep -q '^preambles: ' <<<"$txt" &&
   grep -q "^sequence set: *either (no site in a set's own form)$" <<<"$txt" &&
   grep -q 'naked_endbr' <<<"$txt" && grep -q '^call sites: ' <<<"$txt"; then
	pass inspect_text_report
else
	fail inspect_text_report "unexpected text: $(head -n 3 <<<"$txt" | tr '\n' ';')"
fi
lst=$("$FI" inspect "$progs/prog_pie" --list)
np=$(grep -c '^  preamble ' <<<"$lst")
nj=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["preambles"])' "$js")
if [ "$np" = "$nj" ] && grep -q '^  tailcall .*tail3+0x' <<<"$lst" &&
   grep -q '^  thunk .*unchecked+0x' <<<"$lst"; then
	pass inspect_list
else
	fail inspect_list "listed $np preambles (json: $nj) or missing tailcall/thunk lines"
fi

# A binary without kCFI: nothing to do, exit 0 (then the hardening audit,
# which applies to any file: tests/e2e/inspect_harden.sh)
txt=$("$FI" inspect "$progs/prog_plain"); rc=$?
if [ $rc = 0 ] && [ "$(head -n 1 <<<"$txt")" = "$progs/prog_plain: no kCFI sites: nothing to do" ] &&
   [ "$(sed -n 2p <<<"$txt" | cut -c1-15)" = "hardening:     " ] &&
   ! grep -v -e '^hardening: ' -e '^  audit: ' <<<"$(tail -n +2 <<<"$txt")"; then
	pass inspect_plain_nothing_to_do
else
	fail inspect_plain_nothing_to_do "status $rc, output '$txt'"
fi
if "$FI" inspect "$progs/prog_plain" --json | python3 -c 'import json,sys
j=json.load(sys.stdin); assert j["kcfi"] is False and j["preambles"] == 0 and j["call_sites"] == 0'; then
	pass inspect_plain_json
else
	fail inspect_plain_json "JSON of prog_plain wrong"
fi

# Files written by `fineibt patch` (when that command exists): the mode
# judged from the rewritten sites, the note, and the same site counts; the
# sequence set ("seq") judged from the sites too, in both sets.
if "$FI" help patch >/dev/null 2>&1; then
	for m in $(fi_with_sets auto fineibt fineibt,norand fineibt,paranoid,warn off kcfi); do
		pf=$out/patched_${m//,/_}
		rm -f "$pf"
		if ! "$FI" patch "$progs/prog_pie" -o "$pf" --cfi=$m --key 1234abcd1234abcd1234abcd1234abcd -q \
			>"$out/patch.log" 2>&1; then
			fail "inspect_patched_$m" "fineibt patch failed: $(head -c 200 "$out/patch.log")"
			continue
		fi
		"$FI" inspect "$pf" --json >"$pf.json" 2>&1
		if python3 - "$pf.json" "$js" "$m" <<'PY'
import json, sys
got, orig, m = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
v618 = m.endswith(",seq=v6.18")
m = m.replace(",seq=v6.18", "")
want = {"auto": "fineibt,paranoid", "fineibt": "fineibt", "fineibt,norand": "fineibt,norand",
        "fineibt,paranoid,warn": "fineibt,paranoid,warn", "off": "off", "kcfi": "kcfi"}[m]
want += ",seq=v6.18" if v618 else ""
# off and kcfi in v4 keep the compiler's forms: no set shows in them
assert got["seq"] == ("v6.18" if v618 else None if m in ("off", "kcfi") else "v4"), got["seq"]
assert got["patched"] is True, "not seen as patched"
assert got["patched_cfi"] == want, got["patched_cfi"]
assert got["mode"] == want, "mode from sites %r" % got["mode"]
assert got["key"] == (None if "norand" in m or m == "off" else "1234abcd" * 4), got["key"]
for k in ("preambles", "call_sites", "tail_calls"):
    assert got[k] == orig[k], "%s %r != %r" % (k, got[k], orig[k])
assert got["unmatched"] == [], got["unmatched"]
if m.startswith("fineibt") or m == "auto":
    assert got["arity_unknown"] == got["preambles"], "plain FineIBT has no arity"
else:
    assert got["arity"] == orig["arity"]
PY
		then
			pass "inspect_patched_$m"
			# the text report names the set too
			case $m in
			*seq=v6.18) want_set=v6.18 ;;
			off|kcfi) want_set="either (no site in a set's own form)" ;;
			*) want_set=v4 ;;
			esac
			if "$FI" inspect "$pf" | grep -qxF "sequence set:  $want_set"; then
				pass "inspect_patched_text_set_$m"
			else
				fail "inspect_patched_text_set_$m" "no 'sequence set:  $want_set' line"
			fi
		else
			fail "inspect_patched_$m" "see $pf.json"
		fi
	done
fi

# BHI: the arity comes back from which __bhi_args slot each preamble calls.
if "$FI" help patch >/dev/null 2>&1; then
	# v6.18 has no inline arity-1 form: slot 1 tells arity 1 there.
	for s in v4 v6.18; do
	pf=$out/patched_bhi_$s
	rm -f "$pf"
	if "$FI" patch "$progs/prog_bhi" -o "$pf" --cfi=fineibt,bhi,seq=$s -q \
		>"$out/patch.log" 2>&1 && "$FI" inspect "$pf" --json >"$pf.json" &&
	   python3 - "$pf.json" "$out/prog_bhi.json" "$s" <<'PY'
import json, sys
got, orig = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
want = "fineibt,bhi" + (",seq=v6.18" if sys.argv[3] == "v6.18" else "")
assert got["mode"] == want and got["seq"] == sys.argv[3], (got["mode"], got["seq"])
assert got["arity"] == orig["arity"] and got["arity_unknown"] == 0, (got["arity"], orig["arity"])
assert got["unmatched"] == [] and got["preambles"] == orig["preambles"]
PY
	then
		pass "inspect_patched_bhi_arity[$s]"
	else
		fail "inspect_patched_bhi_arity[$s]" "see $pf.json / $out/patch.log"
	fi
	done
fi

# Errors: one line on stderr, exit 1; usage errors exit 2
err=$("$FI" inspect "$out/does-not-exist" 2>&1 >/dev/null); rc=$?
if [ $rc = 1 ] && [ "$err" = "Error: $out/does-not-exist: No such file or directory" ]; then
	pass inspect_error_missing_file
else
	fail inspect_error_missing_file "status $rc, stderr '$err'"
fi
"$FI" inspect --bogus "$progs/prog_pie" >/dev/null 2>&1; rc=$?
[ $rc = 2 ] && pass inspect_usage_unknown_option || fail inspect_usage_unknown_option "status $rc"
"$FI" inspect >/dev/null 2>&1; rc=$?
[ $rc = 2 ] && pass inspect_usage_no_file || fail inspect_usage_no_file "status $rc"
if "$FI" inspect --help | grep -q '^Usage: fineibt inspect FILE'; then
	pass inspect_help
else
	fail inspect_help "no usage line"
fi
exit 0
