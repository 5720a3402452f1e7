#!/usr/bin/env bash
# protect_suid: a privileged (AT_SECURE) process ignores every FINEIBT_CFI
# word that weakens protection below the default or reveals anything (off,
# warn, norand, debug), says so once on stderr, and honours the others:
# kcfi (the default: auto without user IBT), bhi, seq=v6.18, and fineibt,
# which becomes fineibt,paranoid (plain FineIBT has no caller check:
# without IBT it is weaker than kcfi). The user-IBT test hook is not read
# there (auto stays kcfi). A setuid-root copy of protect_prog, run as
# nobody through setpriv, still dies (132) of a type-confused call under
# FINEIBT_CFI=off or warn, and FINEIBT_CFI=debug shows neither start-up
# diagnostics nor a run-time hash; the same program run by root (not
# AT_SECURE: real and effective ids agree) honours them.
# Needs root (to make a setuid-root file) and setpriv (util-linux).
. "$(dirname "$0")/progs/protect_common.bash"

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	echo "SKIP: protect_suid: needs root and setpriv"
	exit 0
fi
pr_build || { pr_fail build "could not build the protect programs"; exit 1; }

# nobody must reach the program: $BUILD may sit under /root (0700).
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
for p in "$PROG" "$PROG_STATIC"; do
	cp "$p" "$T/" && chown root:root "$T/${p##*/}" && chmod 4755 "$T/${p##*/}"
done
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

# A setuid file on a nosuid mount runs unprivileged: find out first.
pr_run probe-suid off "${NOBODY[@]}" "$T/protect_prog" config
if ! grep -q "not allowed in a privileged" <<<"$PR_ERR_TXT"; then
	echo "SKIP: protect_suid: $T is not setuid-capable (nosuid mount?): $PR_ERR_TXT"
	exit 0
fi

msg() { echo "fineibt: ignoring '$1': not allowed in a privileged (AT_SECURE) process"; }

for prog in protect_prog protect_prog_static; do
	P=$T/$prog
	for w in off warn norand debug; do
		# As nobody: the word is refused, once, and the call is caught.
		pr_run suid "$w" "${NOBODY[@]}" "$P" confuse
		n=$(grep -cF "$(msg "$w")" <<<"$PR_ERR_TXT")
		if [ "$PR_RC" = 132 ] && [ -z "$PR_OUT_TXT" ] && [ "$n" = 1 ] &&
		   grep -Eq "${PR_REPORT_RE}inc\\+0x0; expected type: 0x[0-9a-f]{8}; mode: kcfi\\)$" <<<"$PR_ERR_TXT"; then
			pr_pass "suid-refuses[$w,$prog]: one message, confused call fatal"
		else
			pr_fail "suid-refuses[$w,$prog]" "rc=$PR_RC n=$n err='$PR_ERR_TXT'"
		fi
		pr_run suid-config "$w" "${NOBODY[@]}" "$P" config
		if [ "$PR_OUT_TXT" = "config: kcfi" ]; then
			pr_pass "suid-config[$w,$prog]: default mode kept (auto = kcfi)"
		else
			pr_fail "suid-config[$w,$prog]" "out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
		fi
	done
	# debug reveals nothing there: no start-up summary, no run-time hash.
	pr_run suid-debug debug "${NOBODY[@]}" "$P" confuse
	if ! grep -q 'cfi=debug\|run-time\|rewritten to\|runtime started' <<<"$PR_ERR_TXT"; then
		pr_pass "suid-debug-silent[$prog]: no diagnostics, no run-time hash"
	else
		pr_fail "suid-debug-silent[$prog]" "err='$PR_ERR_TXT'"
	fi
	# As root the same file honours them (off, warn: the call goes through;
	# debug: the start-up summary and the run-time hash in the report).
	for w in off warn; do
		pr_run root "$w" "$P" confuse
		if [ "$PR_RC" = 0 ] && [ "$PR_OUT_TXT" = survived ] &&
		   ! grep -q "not allowed" <<<"$PR_ERR_TXT"; then
			pr_pass "root-honours[$w,$prog]"
		else
			pr_fail "root-honours[$w,$prog]" "rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
		fi
	done
	pr_run root-debug debug "$P" confuse
	if [ "$PR_RC" = 132 ] && grep -q '^fineibt: cfi=debug: mode kcfi,debug;' <<<"$PR_ERR_TXT" &&
	   grep -Eq "expected type: 0x[0-9a-f]{8} \\(run-time 0x[0-9a-f]{8}\\); mode: kcfi,debug\\)" <<<"$PR_ERR_TXT"; then
		pr_pass "root-honours[debug,$prog]: summary and run-time hash"
	else
		pr_fail "root-honours[debug,$prog]" "rc=$PR_RC err='$PR_ERR_TXT'"
	fi
	# kcfi is the default: honoured without a message.
	pr_run suid-kcfi kcfi "${NOBODY[@]}" "$P" config
	if [ "$PR_OUT_TXT" = "config: kcfi" ] && [ -z "$PR_ERR_TXT" ]; then
		pr_pass "suid-honours-kcfi[$prog]"
	else
		pr_fail "suid-honours-kcfi[$prog]" "out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
	fi
	# Plain fineibt has no caller check: it gets paranoid there.
	pr_run suid-fineibt fineibt "${NOBODY[@]}" "$P" config
	if [ "$PR_OUT_TXT" = "config: fineibt,paranoid" ]; then
		pr_pass "suid-fineibt-paranoid[$prog]: fineibt becomes fineibt,paranoid"
	else
		pr_fail "suid-fineibt-paranoid[$prog]" "out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
	fi
	# The user-IBT test hook is not read: auto stays kcfi (as root: the
	# hook's branch, fineibt,paranoid).
	pr_run suid-ibt auto env FINEIBT_TEST_USER_IBT=1 "${NOBODY[@]}" "$P" config
	pr_run root-ibt auto env FINEIBT_TEST_USER_IBT=1 "$P" config
	if [ "$PR_OUT_TXT" = "config: fineibt,paranoid" ] &&
	   [ "$(cat "$PR_OUT/suid-ibt.out")" = "config: kcfi" ]; then
		pr_pass "suid-ibt-hook-ignored[$prog]: auto = kcfi there, fineibt,paranoid as root"
	else
		pr_fail "suid-ibt-hook-ignored[$prog]" "suid '$(cat "$PR_OUT/suid-ibt.out")' root '$PR_OUT_TXT'"
	fi
	# Strengthening words are honoured; weakening ones mixed in are not.
	pr_run suid-bhi fineibt,bhi,warn,norand "${NOBODY[@]}" "$P" config
	if [ "$PR_OUT_TXT" = "config: fineibt,paranoid,bhi" ] &&
	   [ "$(grep -c 'not allowed in a privileged' <<<"$PR_ERR_TXT")" = 2 ]; then
		pr_pass "suid-honours-bhi[$prog]: bhi kept, warn and norand refused"
	else
		pr_fail "suid-honours-bhi[$prog]" "out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
	fi
	pr_run suid-bhi-call fineibt,bhi,warn "${NOBODY[@]}" "$P" confuse
	if [ "$PR_RC" = 132 ] &&
	   grep -Eq "${PR_REPORT_RE}inc\\+0x0; .*mode: fineibt,paranoid,bhi\\)" <<<"$PR_ERR_TXT"; then
		pr_pass "suid-bhi-fatal[$prog]"
	else
		pr_fail "suid-bhi-fatal[$prog]" "rc=$PR_RC err='$PR_ERR_TXT'"
	fi
	# Neither sequence set is weaker: the v6.18 word is honoured.
	pr_run suid-seq fineibt,bhi,seq=v6.18 "${NOBODY[@]}" "$P" confuse
	if [ "$PR_RC" = 132 ] && ! grep -q "not allowed" <<<"$PR_ERR_TXT" &&
	   grep -Eq "${PR_REPORT_RE}inc\\+0x0; .*mode: fineibt,paranoid,bhi,seq=v6\\.18\\)" <<<"$PR_ERR_TXT"; then
		pr_pass "suid-honours-seq[$prog]: v6.18 set, call fatal"
	else
		pr_fail "suid-honours-seq[$prog]" "rc=$PR_RC err='$PR_ERR_TXT'"
	fi
done
