#!/usr/bin/env bash
# protect_maps: with the runtime state read-only, a kCFI library dlopen'ed
# after start-up is still rewritten into the process mode (the write
# window opens for it): legal calls through pointers into and out of it
# work and a type-confused call inside it is caught (132 + report), or
# goes through under off. /proc/self/maps never shows a mapping that is
# writable and executable at once, after start-up and after the dlopen,
# in every mode (text, BHI stub copies and veneers are never W+X).
. "$(dirname "$0")/progs/protect_common.bash"

pr_build || { pr_fail build "could not build the protect programs"; exit 1; }

MODES=(off kcfi kcfi,norand fineibt fineibt,paranoid fineibt,bhi
       fineibt,paranoid,bhi auto auto,warn fineibt,bhi,warn)
mapfile -t MODES < <(fi_with_sets "${MODES[@]}")	# both sequence sets


for prog in "$PROG" "$PROG_STATIC"; do
	p=${prog##*/}
	for m in "${MODES[@]}"; do
		pr_run maps "$m" "$prog" maps "$LIB"
		if [ "$PR_RC" = 0 ] && [ "$PR_OUT_TXT" = "maps ok" ]; then
			pr_pass "no-wx[$m,$p]: after start-up and after dlopen"
		else
			pr_fail "no-wx[$m,$p]" "rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
		fi
		pr_run dl "$m" "$prog" dl "$LIB"
		if [ "$(fi_no_set "$m")" = off ]; then
			if [ "$PR_RC" = 0 ] && [ "$PR_OUT_TXT" = $'dl ok\nsurvived dl' ]; then
				pr_pass "dlopen-late[$m,$p]: legal calls, confused call not checked"
			else
				pr_fail "dlopen-late[$m,$p]" "rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
			fi
			continue
		fi
		re="${PR_REPORT_RE}twice\\+0x0; expected type: 0x[0-9a-f]{8}; mode: $(fi_canon_re "$m")\\)"
		if [[ ,$m, == *,warn,* ]]; then
			want_rc=0 want_out=$'dl ok\nsurvived dl'
		else
			want_rc=132 want_out="dl ok"
		fi
		if [ "$PR_RC" = "$want_rc" ] && [ "$PR_OUT_TXT" = "$want_out" ] &&
		   grep -Eq "$re" <<<"$PR_ERR_TXT"; then
			pr_pass "dlopen-late[$m,$p]: rewritten, confused call caught in the library"
		else
			pr_fail "dlopen-late[$m,$p]" "want rc $want_rc + /$re/: rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
		fi
	done
done

# Control: the check sees an rwx mapping when there is one.
pr_run maps-control auto "$PROG" maps-control
if [ "$PR_RC" = 1 ] && grep -q '^rwx start-up: .* rwxp ' <<<"$PR_OUT_TXT"; then
	pr_pass "no-wx-control: an rwx mapping is detected"
else
	pr_fail "no-wx-control" "rc=$PR_RC out='$PR_OUT_TXT'"
fi
