#!/usr/bin/env bash
# rt_mdwe: a program built with fineibt-cc where memory that was writable
# may not become executable, as systemd's MemoryDenyWriteExecute= makes
# a service: with the kernel's PR_SET_MDWE (systemd 253 and later) and
# with the seccomp filter systemd installs otherwise (systemd 252, Debian
# 12: mprotect asking for PROT_EXEC refused). The runtime used to make
# the pages it rewrote read-write and read-execute again, which both
# refuse: every such program stopped at start ("cannot make rewritten
# text executable again", exit 127), in every mode. Now, alone (at start,
# a dlopen of a single-threaded program), it writes the rewritten runs
# through /proc/self/mem (src/rt/rtlive.c, fi_live_patch_mem): legal
# calls work, confused calls are stopped (in plain fineibt at the
# preamble: the text was rewritten), a dlopened library is rewritten,
# with another thread running too (then the whole segment is copied,
# made read-only, verified and written);
# bhi modes drop bhi (its stub page would have to become executable),
# one warning a module naming that cause (it used to say "Cannot
# allocate memory": the stub page's mprotect refused, after 512 spots
# tried). progs/mdwe_run.c sets either mechanism.
. "$(dirname "$0")/progs/rt_lib.bash"
D=$RT_OUT/rt_mdwe
mkdir -p "$D"
{ rt_build "$D/rt_mdwe" -O2 "$RT_SRC/rt_mdwe.c" -ldl -lpthread &&
  rt_build "$D/librt_mdwe.so" -O2 -fPIC -shared -DRT_MDWE_LIB "$RT_SRC/rt_mdwe.c" &&
  cc -O1 -o "$D/mdwe_run" "$RT_SRC/mdwe_run.c"; } ||
	{ rt_fail build "could not build the programs"; exit 1; }
P=$D/rt_mdwe
BHI_WARN='no BHI stubs: memory may not become executable (MemoryDenyWriteExecute); bhi dropped for this module'
for mech in prctl seccomp; do
	if ! "$D/mdwe_run" "$mech" true 2>/dev/null; then
		echo "SKIP: $mech: not available here"
		continue
	fi
	for m in off kcfi fineibt fineibt,paranoid fineibt,bhi fineibt,paranoid,bhi auto kcfi,seq=v6.18; do
		rt_run "mdwe-$mech" "$m" "$D/mdwe_run" "$mech" "$P"
		warn=$(grep -vF "$BHI_WARN" <<<"$RT_ERR_TXT")
		if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "ok 42" ] && [ -z "$warn" ] &&
		   { [[ $m != *bhi* ]] || grep -qF "$BHI_WARN" <<<"$RT_ERR_TXT"; }; then
			rt_pass "$mech[$m]: runs"
		else
			rt_fail "$mech[$m]: runs" "rc=$RT_RC out='$RT_OUT_TXT' err=$(head -c 300 <<<"$RT_ERR_TXT")"
		fi
		rt_run "mdwe-$mech-confused" "$m" "$D/mdwe_run" "$mech" "$P" confused
		if [ "$m" = off ]; then
			ok=$([ "$RT_RC" = 0 ] && echo y)
		else
			ok=$([ "$RT_RC" = 132 ] && grep -Eq "$RT_REPORT_RE" <<<"$RT_ERR_TXT" && echo y)
			# plain fineibt stops it in the callee's preamble: only
			# there if the text was rewritten
			[ "$m" = fineibt ] && ! grep -q 'CFI failure at __cfi_rm_add1+0x' <<<"$RT_ERR_TXT" && ok=
		fi
		if [ -n "$ok" ]; then
			rt_pass "$mech[$m]: a confused call as without the limit"
		else
			rt_fail "$mech[$m]: a confused call as without the limit" "rc=$RT_RC err=$(head -c 300 <<<"$RT_ERR_TXT")"
		fi
	done
	for how in alone thread; do
		extra=()
		[ $how = thread ] && extra=(thread)
		for m in fineibt kcfi; do
			rt_run "mdwe-$mech-dlopen" "$m" "$D/mdwe_run" "$mech" "$P" dlopen "$D/librt_mdwe.so" "${extra[@]}"
			if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "lib 42" ] && [ -z "$RT_ERR_TXT" ]; then
				rt_pass "$mech[$m]: a library dlopened $how: rewritten, its calls work"
			else
				rt_fail "$mech[$m]: a library dlopened $how: rewritten, its calls work" "rc=$RT_RC out='$RT_OUT_TXT' err=$(head -c 300 <<<"$RT_ERR_TXT")"
			fi
		done
	done
done
exit 0
