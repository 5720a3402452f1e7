#!/usr/bin/env bash
# protect_runpath (docs/protection.md): a program fineibt-cc links loads
# the runtime from the directory the driver found it in, in a setuid
# program too: by its absolute path (the default: DT_NEEDED names the
# file, docs/runtime.md), or through a RUNPATH, which the loader searches
# for every library the program needs (FINEIBT_CC_RUNPATH=1). So:
#  - link: fineibt-cc warns when that directory (or one above it) can be
#    changed by someone other than root and the user linking: writable by
#    others, by a group, owned by another user, or a writable non-sticky
#    ancestor; not for a sticky ancestor, a root-owned 755 tree, nor with
#    -static-fineibt (no runtime to load). The link still succeeds.
#  - audit: `fineibt inspect` flags a setuid or setgid file whose runtime
#    path or RUNPATH has such a directory (text and --json), and not the
#    same file without the set-ID bits, nor one whose directory is safe or
#    relative.
# Copies of the driver and runtime sit in directories made to have each
# property (the driver finds its libraries next to itself). Needs root
# (chown to another user).
. "$(dirname "$0")/progs/protect_common.bash"

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: protect_runpath: needs root (chown)"
	exit 0
fi
FI=$ROOT/$BUILD/fineibt
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
mkdir "$T/bin"
cat >"$T/hello.c" <<'EOF'
#include <stdio.h>
int main(void) { puts("hello"); return 0; }
EOF

# place DIR: a copy of the driver and its libraries in DIR, with the
# copy of the runtime it links against to name DIR's by its path.
place() {
	mkdir -p "$1" &&
	cp "$FCC" "$ROOT/$BUILD/libfineibt_crt.a" "$ROOT/$BUILD/libfineibt.a" "$1/" &&
	cp -P "$ROOT/$BUILD"/libfineibt.so* "$1/" &&
	make -s --no-print-directory -C "$ROOT" BUILD="$BUILD" SAN="${FINEIBT_SAN:-}" runtime-link-copy \
		LINKDIR="$1" >/dev/null
}

place "$T/safe/lib"
place "$T/others"; chmod 777 "$T/others"
place "$T/group"; chgrp 65534 "$T/group"; chmod 775 "$T/group"
place "$T/owner"; chown 65534 "$T/owner"
mkdir -p "$T/anc"; chmod 777 "$T/anc"; place "$T/anc/lib"
mkdir -p "$T/sticky"; chmod 1777 "$T/sticky"; place "$T/sticky/lib"

WARN_RE='^fineibt-cc: warning: runtime directory .*; a setuid or setgid program linked now would load its runtime from there'
WARN_RP_RE='^fineibt-cc: warning: RUNPATH .*; a setuid or setgid program linked now would load its libraries from there'

# link NAME DIR [FLAGS...]: link hello with DIR's driver into $T/bin/NAME.
link() {
	local name=$1 dir=$2
	shift 2
	LINK_ERR=$("$dir/fineibt-cc" -O2 "$@" "$T/hello.c" -o "$T/bin/$name" 2>&1)
	LINK_RC=$?
}

# needs_path NAME DIR: the program names DIR's runtime by its path, no RUNPATH.
needs_path() {
	local d
	d=$(llvm-readelf-22 -d "$T/bin/$1")
	grep -qF "Shared library: [$2/libfineibt.so.0]" <<<"$d" && ! grep -q RUNPATH <<<"$d"
}

expect_link() {
	local name=$1 dir=$2 want=$3 why=$4
	shift 4
	link "$name" "$dir" "$@"
	if [ "$LINK_RC" != 0 ] || [ "$("$T/bin/$name")" != hello ]; then
		pr_fail "link[$name]" "rc=$LINK_RC: $LINK_ERR"
	elif [ "$want" = warn ] && grep -Eq "$WARN_RE" <<<"$LINK_ERR" &&
	     grep -qF "$why" <<<"$LINK_ERR" && needs_path "$name" "$dir"; then
		pr_pass "link[$name]: warned ($why), linked"
	elif [ "$want" = warn-rp ] && grep -Eq "$WARN_RP_RE" <<<"$LINK_ERR" &&
	     grep -qF "$why" <<<"$LINK_ERR"; then
		pr_pass "link[$name]: warned ($why, RUNPATH), linked"
	elif [ "$want" = quiet ] && ! grep -Eq 'warning: (RUNPATH|runtime directory)' <<<"$LINK_ERR"; then
		pr_pass "link[$name]: no warning ($why)"
	else
		pr_fail "link[$name]" "want $want ($why): '$LINK_ERR'"
	fi
}

expect_link safe "$T/safe/lib" quiet "root-owned 755 tree"
expect_link others "$T/others" warn "$T/others is writable by others"
expect_link group "$T/group" warn "$T/group is writable by its group"
expect_link owner "$T/owner" warn "$T/owner is owned by another user"
expect_link anc "$T/anc/lib" warn "$T/anc is writable by others"
expect_link sticky "$T/sticky/lib" quiet "sticky ancestor, root-owned directory"
expect_link static "$T/others" quiet "-static-fineibt: no RUNPATH" -static-fineibt
FINEIBT_CC_RUNPATH=1 expect_link others-rp "$T/others" warn-rp "$T/others is writable by others"
FINEIBT_CC_RUNPATH=1 expect_link safe-rp "$T/safe/lib" quiet "root-owned 755 tree, RUNPATH"

# RUNPATH entries the loader drops in a set-ID program: $ORIGIN, relative.
clang-22 -O2 "$T/hello.c" -o "$T/bin/origin" -Wl,-rpath,'$ORIGIN/lib:rel/lib'

FINDING_PATH='setuid/setgid loading a library from a directory others can change'
FINDING_RP='setuid/setgid with a RUNPATH others can change'

# audit NAME MODE want|none WHY: the runtime named by its path (a program
# named *-rp: through its RUNPATH).
audit() {
	local name=$1 mode=$2 want=$3 why=$4 f=$T/bin/$1 out json FINDING=$FINDING_PATH
	[[ $name == *-rp ]] && FINDING=$FINDING_RP
	chmod "$mode" "$f"
	out=$("$FI" inspect "$f" 2>&1)
	json=$("$FI" inspect --json "$f" 2>&1)
	if ! python3 -c 'import json,sys; json.loads(sys.stdin.read())' <<<"$json"; then
		pr_fail "audit[$name,$mode]" "--json is not JSON: ${json:0:300}"
		return
	fi
	if [ "$want" = flag ]; then
		if grep -qF "  audit: $FINDING (" <<<"$out" && grep -qF "$why" <<<"$out" &&
		   python3 -c '
import json, sys
a = json.loads(sys.stdin.read())["audit"]
sys.exit(0 if any(sys.argv[1] in s and sys.argv[2] in s for s in a) else 1)' \
			"$FINDING" "$why" <<<"$json"; then
			pr_pass "audit[$name,$mode]: flagged ($why)"
		else
			pr_fail "audit[$name,$mode]" "not flagged: $out"
		fi
	elif grep -qF -e "$FINDING_PATH" -e "$FINDING_RP" <<<"$out$json"; then
		pr_fail "audit[$name,$mode]" "flagged ($why): $out"
	else
		pr_pass "audit[$name,$mode]: not flagged ($why)"
	fi
}

audit others 4755 flag "$T/others is writable by others"
audit others-rp 4755 flag "$T/others is writable by others"
audit others-rp 0755 none "not set-ID, RUNPATH"
audit safe-rp 4755 none "root-owned 755 tree, RUNPATH"
audit others 2755 flag "$T/others is writable by others"
audit others 0755 none "not set-ID"
audit owner 4755 flag "$T/owner is owned by another user"
audit anc 4755 flag "$T/anc is writable by others"
audit group 6755 flag "$T/group is writable by its group"
audit safe 4755 none "root-owned 755 tree"
audit sticky 4755 none "sticky ancestor"
audit static 4755 none "no RUNPATH"
audit origin 4755 none "\$ORIGIN and relative entries: dropped by the loader"
# Owned by the RUNPATH directory's owner: that user has the program anyway.
cp "$T/bin/owner" "$T/bin/owner-own" && chown 65534 "$T/bin/owner-own"
audit owner-own 4755 none "file owned by the directory's owner"
