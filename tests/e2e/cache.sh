#!/usr/bin/env bash
# cache: the shared text cache (docs/runtime.md "Shared text",
# docs/protection.md "The shared text cache"). A root service (`fineibt
# cached`, started here on a directory of /dev/shm) fills entries; clients
# run as nobody (setpriv, no capabilities) with FINEIBT_CACHE pointing
# there and cfi=debug, which says on stderr what the cache did.
#  - first start of a user: no key yet, the service makes it and fills;
#  - in every mode and both sequence sets: a miss rewrites privately with
#    the user's key, a hit maps the entry; the two texts are byte for byte
#    the same and the same as the entry's, a hit has no private text page,
#    calls work, a confused call is reported; bhi and kcfi,norand map none;
#  - libraries: dlopen'ed and linked at start-up;
#  - stale: a program replaced by rename, a library rewritten in place
#    (another build; the same build-id with a byte changed) after a
#    process mapped its entry: new processes miss, the running one keeps
#    its text;
#  - storage: a directory or entry not root's, group- or world-writable
#    or readable, symbolic links, an entry with two links or the wrong
#    mode, truncation and writes on a mapped entry (refused to nobody; the
#    running process unaffected), full storage, a size cap, a missing
#    directory, a directory not on tmpfs (client refuses; the service
#    refuses or mounts a tmpfs);
#  - processes with a key of their own (FINEIBT_CACHE=off), with
#    capabilities, root, AT_SECURE (setuid) never touch the cache (strace);
#  - 50 concurrent first starts map identical bytes;
#  - gdb (attached to a hit; a breakpoint set before start makes the
#    runtime keep its text private) and perf (software clock) symbolise.
# Needs root (the service, chown, setuid) and setpriv; skips otherwise.
. "$(dirname "$0")/progs/rt_lib.bash"
. "$(dirname "$0")/progs/cache_lib.bash"

cache_umount() {
	mountpoint -q "$T/tiny" 2>/dev/null && umount "$T/tiny"
	mountpoint -q "$T/disk" 2>/dev/null && umount "$T/disk"
	chattr -i "$T"/tiny/u*/key 2>/dev/null
}
CACHE_CLEANUP=cache_umount
cache_setup cache

SRC=$RT_SRC/rt_cache.c

# The programs, where nobody can read them ($BUILD may be under /root).
{ "$FCC" -O2 -o "$T/rt_cache" "$SRC" -ldl &&
  "$FCC" -O2 -DRT_CACHE_VARIANT=101 -o "$T/rt_cache_v" "$SRC" -ldl &&
  "$FCC" -O2 -fPIC -shared -DRT_CACHE_LIB -o "$T/librt_cache.so" "$SRC" &&
  "$FCC" -O2 -fPIC -shared -DRT_CACHE_LIB -DRT_CACHE_VARIANT=101 \
	-o "$T/librt_cache_v.so" "$SRC" &&
  "$FCC" -O2 -DRT_CACHE_LINKED -o "$T/rt_cache_linked" "$SRC" -L"$T" \
	-lrt_cache -Wl,-rpath,"$T" -ldl; } ||
	{ rt_fail build "fineibt-cc could not build the programs"; exit 1; }
chmod 755 "$T"/*
P=$T/rt_cache
# where nobody writes its dumps
W=$T/w
mkdir -m 1777 "$W"

# Entries of nobody now.
entries() { ls "$U" 2>/dev/null | grep -cE '^[0-9a-f]{32}$'; }
drop_entries() { find "$U" -maxdepth 1 -regextype egrep -regex '.*/[0-9a-f]{32}' -delete 2>/dev/null; }
# wait_entries N: until nobody has N entries (5 s at most).
wait_entries() {
	for _ in $(seq 100); do
		[ "$(entries)" -ge "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

# cr NAME CFI CMD...: CMD as nobody, the cache at $D, cfi CFI,debug.
cr() {
	local name=$1 cfi=$2
	shift 2
	rt_run "cache-$name" "$cfi,debug" env FINEIBT_CACHE="$D" "${NOBODY[@]}" "$@"
}
HIT='mapped from the cache'
MISS='cache: .*no entry yet; rewritten privately'
OK='ok 130'

# The text segment of ELF $1 in its file: "offset size".
text_seg() {
	local off size
	read -r off size < <(readelf -lW "$1" | awk '$1 == "LOAD" && / R E / { print $2, $5 }')
	echo $((off)) $((size))
}

start_svc || { rt_fail service "fineibt cached did not start: $(cat "$T/svc.log")"; exit 1; }

# ---------------------------------------------------------- first start
cr first kcfi "$P" run
if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "$OK" ] &&
   grep -q 'cache: not used (no directory of this user in the cache)' <<<"$RT_ERR_TXT" &&
   wait_entries 1 && [ "$(stat -c '%U %a' "$U/key")" = "nobody 400" ] &&
   [ "$(stat -c '%U %a' "$U")" = "root 711" ] &&
   [ "$(stat -c '%U %a %h' "$U/$(entry_of)")" = "root 444 1" ]; then
	rt_pass "cache-first: the first start fills, the user's key and directory made"
else
	rt_fail cache-first "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT' entries=$(entries) $(ls -la "$U" 2>&1)"
fi
cr second kcfi "$P" where
if grep -q "rt_cache: $HIT, in kcfi" <<<"$RT_ERR_TXT" &&
   grep -qx "text $U/[0-9a-f]\{32\}" <<<"$RT_OUT_TXT" && grep -qx 'private 0' <<<"$RT_OUT_TXT"; then
	rt_pass "cache-second: the next start maps the entry, no private text page"
else
	rt_fail cache-second "out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
fi

# -------------------------------------------- every mode, both sets
read -r toff tsize < <(text_seg "$P")
for m in "${RT_MODES[@]}"; do
	drop_entries
	cr "miss-$m" "$m" "$P" dump "$W/miss.bin"
	miss_rc=$RT_RC miss_err=$RT_ERR_TXT
	base=$(rt_base "$m")
	if [[ $base == *bhi* ]]; then
		cr "bhi-$m" "$m" "$P" run
		sleep 0.2
		if [ "$miss_rc" = 0 ] && [ "$RT_OUT_TXT" = "$OK" ] && [ "$(entries)" = 0 ] &&
		   grep -q 'bhi calls a stub page' <<<"$miss_err"; then
			rt_pass "cache-mode[$m]: not served (bhi stubs are per process), calls work"
		else
			rt_fail "cache-mode[$m]" "rc=$miss_rc out='$RT_OUT_TXT' entries=$(entries) err='$miss_err'"
		fi
		continue
	fi
	if [ "$base" = kcfi ] && [[ $m == *norand* ]]; then
		cr "kept-$m" "$m" "$P" run
		sleep 0.2
		if [ "$RT_OUT_TXT" = "$OK" ] && [ "$(entries)" = 0 ] &&
		   ! grep -q 'fineibt: cache:' <<<"$RT_ERR_TXT"; then
			rt_pass "cache-mode[$m]: nothing rewritten, nothing cached"
		else
			rt_fail "cache-mode[$m]" "out='$RT_OUT_TXT' entries=$(entries) err='$RT_ERR_TXT'"
		fi
		continue
	fi
	wait_entries 1
	cr "hit-$m" "$m" "$P" dump "$W/hit.bin"
	hit_err=$RT_ERR_TXT hit_rc=$RT_RC
	e=$(entry_of)
	tail -c +$((toff + 1)) "$U/$e" 2>/dev/null | head -c "$tsize" >"$T/entry.bin"
	cr "hitrun-$m" "$m" "$P" run
	if [ "$miss_rc" = 0 ] && [ "$hit_rc" = 0 ] && [ "$RT_OUT_TXT" = "$OK" ] &&
	   grep -q "$MISS" <<<"$miss_err" && grep -q "$HIT" <<<"$hit_err" &&
	   cmp -s "$W/miss.bin" "$W/hit.bin" && cmp -s "$W/miss.bin" "$T/entry.bin" &&
	   ! cmp -s "$W/miss.bin" <(tail -c +$((toff + 1)) "$P" | head -c "$tsize"); then
		rt_pass "cache-mode[$m]: miss and hit text identical ($tsize bytes), the entry's too"
	else
		rt_fail "cache-mode[$m]" "rc=$miss_rc/$hit_rc out='$RT_OUT_TXT' miss='$miss_err' hit='$hit_err' $(cmp "$W/miss.bin" "$W/hit.bin" 2>&1) $(cmp "$W/miss.bin" "$T/entry.bin" 2>&1)"
	fi
	if rt_checks_caller "$m" || [ "$base" = fineibt ]; then
		cr "confuse-$m" "$m" "$P" confuse
		if [ "$RT_RC" = 132 ] && grep -q "$HIT" <<<"$RT_ERR_TXT" &&
		   grep -Eq "${RT_REPORT_RE}c2\\+0x0; .*mode: $(rt_report_mode "$m,debug")\\)" <<<"$RT_ERR_TXT"; then
			rt_pass "cache-trap[$m]: a confused call in mapped text is reported"
		else
			rt_fail "cache-trap[$m]" "rc=$RT_RC err='$RT_ERR_TXT'"
		fi
	fi
done

# ------------------------------------------------------------ libraries
drop_entries
cr lib-miss auto "$P" lib "$T/librt_cache.so"
wait_entries 2
cr lib-hit auto "$P" lib "$T/librt_cache.so"
if grep -q "librt_cache.so: $HIT" <<<"$RT_ERR_TXT" && grep -qx "$OK" <<<"$RT_OUT_TXT" &&
   grep -qx "text $U/[0-9a-f]\{32\}" <<<"$RT_OUT_TXT" && grep -qx 'private 0' <<<"$RT_OUT_TXT"; then
	rt_pass "cache-dlopen: a dlopen'ed library maps its entry"
else
	rt_fail cache-dlopen "out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
fi
drop_entries
cr linked-miss auto "$T/rt_cache_linked" linked
wait_entries 2
cr linked-hit auto "$T/rt_cache_linked" linked
if [ "$(grep -c "$HIT" <<<"$RT_ERR_TXT")" = 2 ] && grep -qx "$OK" <<<"$RT_OUT_TXT" &&
   grep -qx "text $U/[0-9a-f]\{32\}" <<<"$RT_OUT_TXT"; then
	rt_pass "cache-linked: the executable and its library map their entries"
else
	rt_fail cache-linked "out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
fi

# A library patched statically (fineibt patch) sets the process's mode
# and key: the executable's entry, found when it was opened under the
# mode asked for, is not mapped; the executable is read and rewritten
# privately into the library's mode.
cp "$T/librt_cache.so" "$T/librt_cache.orig"
"$FIBT" patch "$T/librt_cache.orig" -o "$T/librt_cache.static" --cfi=kcfi >/dev/null 2>&1 &&
	chmod 755 "$T/librt_cache.static" && mv "$T/librt_cache.static" "$T/librt_cache.so"
cr static-note auto "$T/rt_cache_linked" linked
mv "$T/librt_cache.orig" "$T/librt_cache.so"
if [ "$RT_OUT_TXT" != "${RT_OUT_TXT#*ok 130}" ] && ! grep -q "$HIT" <<<"$RT_ERR_TXT" &&
   grep -q 'not used (a module patched statically sets the key)' <<<"$RT_ERR_TXT"; then
	rt_pass "cache-static-note: a statically patched library sets the mode; the entry found is not mapped"
else
	rt_fail cache-static-note "out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
fi

# A thread with a 16 KiB stack dlopens a library whose entry it maps
# (protect_stack's program): the cache's work fits on that stack too.
{ "$FCC" -O2 -Wall "$RT_SRC/stack_prog.c" -o "$T/stack_prog" -lpthread &&
  "$FCC" -g -O2 -fPIC -shared "$RT_SRC/escape_lib.c" -o "$T/libfi_escape_g.so" &&
  chmod 755 "$T/stack_prog" "$T/libfi_escape_g.so"; } ||
	rt_fail cache-thread-build "could not build stack_prog"
drop_entries
cr thread-fill auto "$T/stack_prog" thread "$T/libfi_escape_g.so" 16
fill_rc=$RT_RC fill_err=$RT_ERR_TXT
wait_entries 2
cr thread auto "$T/stack_prog" thread "$T/libfi_escape_g.so" 16
if [ "$fill_rc" = 132 ] && grep -q "libfi_escape_g.so: no entry yet" <<<"$fill_err" &&
   [ "$RT_RC" = 132 ] && [ "$RT_OUT_TXT" = "dl ok" ] &&
   grep -q "libfi_escape_g.so: $HIT" <<<"$RT_ERR_TXT" &&
   grep -Eq "${RT_REPORT_RE}twice\+0x0;" <<<"$RT_ERR_TXT"; then
	rt_pass "cache-thread-16k: a dlopen on a 16 KiB thread stack misses, then maps its entry; the trap is reported"
else
	rt_fail cache-thread-16k "rc=$fill_rc/$RT_RC out='$RT_OUT_TXT' err='$fill_err' '$RT_ERR_TXT'"
fi

# ---------------------------------------------------------------- stale
# A running process keeps its mapped text whatever happens to the file.
cp "$P" "$T/p2"
drop_entries
cr stale-fill auto "$T/p2" run
wait_entries 1
run_wait stale-rename auto "$T/p2" wait
cp "$T/rt_cache_v" "$T/p2.new" && mv "$T/p2.new" "$T/p2"
cr stale-rename auto "$T/p2" run
wait_go
if [ "$WRC" = 0 ] && grep -qx "$OK" "$T/stale-rename.out" && grep -q "$HIT" "$T/stale-rename.err" &&
   grep -q "$MISS" <<<"$RT_ERR_TXT" && [ "$RT_OUT_TXT" = "ok 131" ]; then
	rt_pass "cache-stale-rename: the replaced program misses, the running one is unaffected"
else
	rt_fail cache-stale-rename "rc=$WRC $(cat "$T/stale-rename.out" "$T/stale-rename.err") new: '$RT_OUT_TXT' '$RT_ERR_TXT'"
fi

L=$T/libinplace.so
cp "$T/librt_cache.so" "$L"
drop_entries
cr inplace-fill auto "$P" lib "$L"
wait_entries 2
run_wait stale-inplace auto "$P" libwait "$L"
# same inode, another build of the same size: no truncation
dd if="$T/librt_cache_v.so" of="$L" conv=notrunc 2>/dev/null
cr stale-inplace auto "$P" lib "$L"
wait_go
sums=$(grep '^sum' "$T/stale-inplace.out" | sort -u | wc -l)
if [ "$WRC" = 0 ] && [ "$sums" = 1 ] && grep -q "libinplace.so: $HIT" "$T/stale-inplace.err" &&
   grep -q "libinplace.so: no entry yet" <<<"$RT_ERR_TXT" && grep -qx 'ok 131' <<<"$RT_OUT_TXT"; then
	rt_pass "cache-stale-inplace: a library rewritten in place misses; the mapped text did not change"
else
	rt_fail cache-stale-inplace "rc=$WRC sums=$sums $(cat "$T/stale-inplace.out" "$T/stale-inplace.err") new: '$RT_OUT_TXT' '$RT_ERR_TXT'"
fi
# The same build-id, one byte of the file changed in place (its ctime
# moves): never the old entry.
cp "$T/librt_cache.so" "$L"
drop_entries
cr sameid-fill auto "$P" lib "$L"
wait_entries 2
printf 'X' | dd of="$L" bs=1 seek=$(($(stat -c %s "$L") - 1)) conv=notrunc 2>/dev/null
cr sameid auto "$P" lib "$L"
if grep -q "libinplace.so: no entry yet" <<<"$RT_ERR_TXT" && grep -qx "$OK" <<<"$RT_OUT_TXT"; then
	rt_pass "cache-stale-sameid: the same build-id with a byte changed misses"
else
	rt_fail cache-stale-sameid "out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
fi

# -------------------------------------------------------------- storage
drop_entries
cr st-fill kcfi "$P" run
wait_entries 1
E=$(entry_of)
# expect_refused NAME WHY-RE: the next run rewrites privately, says WHY.
expect_refused() {
	cr "$1" kcfi "$P" run
	if [ "$RT_OUT_TXT" = "$OK" ] && ! grep -q "$HIT" <<<"$RT_ERR_TXT" &&
	   grep -q "$2" <<<"$RT_ERR_TXT"; then
		rt_pass "cache-$1: refused ($2)"
	else
		rt_fail "cache-$1" "out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
	fi
}
cr st-hit kcfi "$P" run
grep -q "$HIT" <<<"$RT_ERR_TXT" || rt_fail cache-st-hit "no hit to begin with: $RT_ERR_TXT"
chown nobody "$U"
expect_refused dir-owner "the user's directory is not root's"
chown root "$U"
for mode in 731 713 755 751; do
	chmod "$mode" "$U"
	expect_refused "dir-mode-$mode" "the user's directory is not root's, or group or others"
done
chmod 711 "$U"
chown nobody "$U/$E"
expect_refused entry-owner "not a root-owned 0444 file"
chown root "$U/$E"
chmod 644 "$U/$E"
expect_refused entry-mode "not a root-owned 0444 file"
chmod 444 "$U/$E"
ln "$U/$E" "$U/second-link"
expect_refused entry-links "not a root-owned 0444 file with one link"
rm -f "$U/second-link"
mv "$U/$E" "$U/real-entry" && ln -s real-entry "$U/$E"
expect_refused entry-symlink "cannot open the entry"
rm -f "$U/$E" && mv "$U/real-entry" "$U/$E"
mv "$U" "$D/real-u" && ln -s real-u "$U"
expect_refused dir-symlink "a symbolic link on the cache directory's path"
rm -f "$U" && mv "$D/real-u" "$U"
ln -s "$D" "$T/dlink"
rt_run cache-root-symlink "kcfi,debug" env FINEIBT_CACHE="$T/dlink" "${NOBODY[@]}" "$P" run
if grep -q "a symbolic link on the cache directory's path" <<<"$RT_ERR_TXT" && [ "$RT_OUT_TXT" = "$OK" ]; then
	rt_pass "cache-root-symlink: a symbolic link in FINEIBT_CACHE is refused"
else
	rt_fail cache-root-symlink "out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
fi
cr st-hit2 kcfi "$P" run
grep -q "$HIT" <<<"$RT_ERR_TXT" && rt_pass "cache-restored: the entry maps again once put back" ||
	rt_fail cache-restored "err='$RT_ERR_TXT'"

# Another user: cannot list nobody's directory nor read its key.
OTHER=(setpriv --reuid=65533 --regid=65533 --clear-groups --inh-caps=-all)
if ! "${OTHER[@]}" ls "$U" >/dev/null 2>&1 && ! "${OTHER[@]}" cat "$U/key" >/dev/null 2>&1 &&
   ! "${NOBODY[@]}" ls "$U" >/dev/null 2>&1; then
	rt_pass "cache-other-user: nobody's directory cannot be listed, its key not read by another user"
else
	rt_fail cache-other-user "$(ls -la "$U")"
fi

# A mapped entry: nobody can neither truncate, write, chmod nor remove it.
run_wait mapped kcfi "$P" wait
bad=
"${NOBODY[@]}" truncate -s 0 "$U/$E" 2>/dev/null && bad+=" truncate"
"${NOBODY[@]}" sh -c "printf x >>'$U/$E'" 2>/dev/null && bad+=" append"
"${NOBODY[@]}" sh -c "printf x | dd of='$U/$E' conv=notrunc" 2>/dev/null && bad+=" write"
"${NOBODY[@]}" chmod 666 "$U/$E" 2>/dev/null && bad+=" chmod"
"${NOBODY[@]}" rm -f "$U/$E" 2>/dev/null && bad+=" rm"
"${NOBODY[@]}" chmod 700 "$U/key" 2>/dev/null && bad+=" chmod-key"
rm -f "$U/$E"	# root's eviction: the mapping keeps the whole file
wait_go
if [ -z "$bad" ] && [ "$WRC" = 0 ] && grep -qx "$OK" "$T/mapped.out" && grep -q "$HIT" "$T/mapped.err"; then
	rt_pass "cache-mapped-entry: truncate, write, chmod, rm refused to nobody; unlinked by root, the process runs on"
else
	rt_fail cache-mapped-entry "succeeded:$bad rc=$WRC $(cat "$T/mapped.out" "$T/mapped.err")"
fi

# A size cap too small for an entry: nothing written, private rewrites.
start_svc --max-size 8K
drop_entries
cr cap kcfi "$P" run
sleep 0.3
cr cap2 kcfi "$P" run
if [ "$(entries)" = 0 ] && grep -q "$MISS" <<<"$RT_ERR_TXT" && [ "$RT_OUT_TXT" = "$OK" ] &&
   grep -q 'no room within the size cap' "$T/svc.log"; then
	rt_pass "cache-cap: over the size cap nothing is written, processes rewrite privately"
else
	rt_fail cache-cap "entries=$(entries) out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
fi
# Full storage: a tmpfs with less room than an entry.
mkdir -p "$T/tiny"
if mount -t tmpfs -o size=64k,mode=0711 fineibt-test "$T/tiny" 2>/dev/null; then
	stop_svc
	head -c 40000 /dev/zero >"$T/tiny/filler"
	"$FIBT" cached --dir "$T/tiny" --verbose 2>>"$T/svc.log" &
	TINY_PID=$!
	for _ in $(seq 100); do [ -S "$T/tiny/sock" ] && break; sleep 0.05; done
	rt_run cache-full1 kcfi,debug env FINEIBT_CACHE="$T/tiny" "${NOBODY[@]}" "$P" run
	rt_run cache-full2 kcfi,debug env FINEIBT_CACHE="$T/tiny" "${NOBODY[@]}" "$P" run
	sleep 0.3
	rt_run cache-full3 kcfi,debug env FINEIBT_CACHE="$T/tiny" "${NOBODY[@]}" "$P" run
	n=$(ls "$T/tiny/u65534" 2>/dev/null | grep -cE '^[0-9a-f]{32}$')
	kill "$TINY_PID"; wait "$TINY_PID" 2>/dev/null
	umount "$T/tiny"
	if [ "$n" = 0 ] && [ "$RT_OUT_TXT" = "$OK" ] && grep -q "$MISS" <<<"$RT_ERR_TXT"; then
		rt_pass "cache-full: a full file system gets no entry, processes rewrite privately"
	else
		rt_fail cache-full "entries=$n out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
	fi
	# A directory on disk: the client refuses it; the service refuses
	# it with --no-mount and otherwise mounts a tmpfs of its own there.
	mkdir -p "$T/disk/u65534" && chmod 711 "$T/disk" "$T/disk/u65534"
	cp "$U/key" "$T/disk/u65534/key"
	rt_run cache-disk kcfi,debug env FINEIBT_CACHE="$T/disk" "${NOBODY[@]}" "$P" run
	out=$("$FIBT" cached --dir "$T/disk" --no-mount 2>&1); rc=$?
	if grep -q 'the cache directory is not on tmpfs' <<<"$RT_ERR_TXT" && [ "$RT_OUT_TXT" = "$OK" ] &&
	   [ "$rc" = 1 ] && grep -q 'is not on tmpfs (--no-mount): refused' <<<"$out"; then
		rt_pass "cache-not-tmpfs: a directory on disk is refused by the client and by the service (--no-mount)"
	else
		rt_fail cache-not-tmpfs "rc=$rc '$out' client: '$RT_OUT_TXT' '$RT_ERR_TXT'"
	fi
	"$FIBT" cached --dir "$T/disk" 2>>"$T/svc.log" &
	DISK_PID=$!
	for _ in $(seq 100); do [ -S "$T/disk/sock" ] && break; sleep 0.05; done
	fs=$(stat -f -c %T "$T/disk")
	kill "$DISK_PID"; wait "$DISK_PID" 2>/dev/null
	umount "$T/disk" 2>/dev/null
	if [ "$fs" = tmpfs ]; then
		rt_pass "cache-mount: the service mounts a tmpfs on a directory on disk"
	else
		rt_fail cache-mount "file system: $fs"
	fi
else
	echo "SKIP: cache-full: cannot mount a tmpfs here"
fi
start_svc

# No directory at all: private rewrites, the reason said.
rt_run cache-nodir kcfi,debug env FINEIBT_CACHE=/nonexistent/fineibt "${NOBODY[@]}" "$P" run
if [ "$RT_OUT_TXT" = "$OK" ] && grep -q 'not used (no directory of this user' <<<"$RT_ERR_TXT"; then
	rt_pass "cache-nodir: no cache directory: a key of its own"
else
	rt_fail cache-nodir "out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
fi

# --------------------------------------- keys of their own, privileged
drop_entries
cr own-fill auto "$P" run
wait_entries 1
# touches: the cache's paths in a strace of CMD (as root: -u runs CMD as
# that user, setuid programs included).
touches() {
	strace -f -o "$T/strace.log" -e trace=openat,openat2,open,newfstatat,socket,connect,sendto "$@" >/dev/null 2>&1
	grep -c "$D" "$T/strace.log"
}
run_wait own-shared auto "$P" wait
rt_run cache-own "auto,debug" env FINEIBT_CACHE=off "${NOBODY[@]}" "$P" dump "$W/own.bin"
cr own-shared-dump auto "$P" dump "$W/shared.bin"
wait_go
n=$(FINEIBT_CFI=auto FINEIBT_CACHE=off touches "${NOBODY[@]}" "$P" run)
if [ "$RT_RC" = 0 ] && grep -q 'not used (FINEIBT_CACHE=off)' "$RT_OUT/cache-own.err" &&
   ! cmp -s "$W/own.bin" "$W/shared.bin" && [ "$WRC" = 0 ] && [ "$n" = 0 ]; then
	rt_pass "cache-own-key: FINEIBT_CACHE=off: a key of its own next to shared ones, the cache untouched"
else
	rt_fail cache-own-key "rc=$RT_RC wrc=$WRC touches=$n err='$(cat "$RT_OUT/cache-own.err")'"
fi
CAPS=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+net_bind_service --ambient-caps=+net_bind_service)
rt_run cache-caps "auto,debug" env FINEIBT_CACHE="$D" "${CAPS[@]}" "$P" run
n=$(FINEIBT_CFI=auto FINEIBT_CACHE=$D touches "${CAPS[@]}" "$P" run)
if [ "$RT_OUT_TXT" = "$OK" ] && grep -q 'not used (the process has capabilities)' <<<"$RT_ERR_TXT" && [ "$n" = 0 ]; then
	rt_pass "cache-caps: a process with capabilities never touches the cache"
else
	rt_fail cache-caps "touches=$n out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
fi
n=$(FINEIBT_CFI=auto FINEIBT_CACHE=$D touches "$P" run)
rt_run cache-root "auto,debug" env FINEIBT_CACHE="$D" "$P" run
if [ "$RT_OUT_TXT" = "$OK" ] && grep -q 'not used (root)' <<<"$RT_ERR_TXT" && [ "$n" = 0 ]; then
	rt_pass "cache-root: root keeps a key of its own, never touches the cache"
else
	rt_fail cache-root "touches=$n out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
fi
# strace -u runs a setuid program with its privileges (AT_SECURE).
cp "$P" "$T/suid" && chmod 4755 "$T/suid"
drop_entries
strace -f -o "$T/strace.log" -u nobody env FINEIBT_CFI=auto,debug FINEIBT_CACHE="$D" \
	"$T/suid" run >"$T/suid.out" 2>"$T/suid.err"
sleep 0.3
if [ "$(grep -c "$D" "$T/strace.log")" = 0 ] && [ "$(entries)" = 0 ] &&
   grep -qx "$OK" "$T/suid.out" &&
   grep -q "ignoring 'debug': not allowed in a privileged (AT_SECURE) process" "$T/suid.err" &&
   ! grep -q 'cache:' "$T/suid.err"; then
	rt_pass "cache-secure: a setuid program run by nobody never touches the cache"
else
	rt_fail cache-secure "entries=$(entries) $(grep "$D" "$T/strace.log" | head -3) $(cat "$T/suid.out" "$T/suid.err")"
fi

# ----------------------------------------------- 50 concurrent starts
drop_entries
pids=()
for i in $(seq 50); do
	FINEIBT_CFI=auto FINEIBT_CACHE=$D "${NOBODY[@]}" "$P" dump "$W/c$i.bin" >/dev/null 2>&1 &
	pids+=($!)
done
fails=0
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
uniq=$(cat "$W"/c*.bin | md5sum >/dev/null; md5sum "$W"/c*.bin | awk '{print $1}' | sort -u | wc -l)
wait_entries 1
cr conc-hit auto "$P" dump "$W/chit.bin"
if [ "$fails" = 0 ] && [ "$uniq" = 1 ] && [ "$(entries)" = 1 ] && cmp -s "$W/c1.bin" "$W/chit.bin" &&
   grep -q "$HIT" <<<"$RT_ERR_TXT"; then
	rt_pass "cache-concurrent: 50 first starts run, their texts identical, one entry, the hit's the same"
else
	rt_fail cache-concurrent "failed=$fails distinct=$uniq entries=$(entries) err='$RT_ERR_TXT'"
fi

# ---------------------------------------------------------------- tools
if command -v gdb >/dev/null; then
	run_wait gdb auto "$P" wait
	g=$(gdb -batch -nx -p "$WPID" -ex 'bt' -ex 'info symbol rt_cache_spin' \
		-ex 'x/i rt_cache_spin' 2>&1)
	wait_go
	if grep -q "$HIT" "$T/gdb.err" && grep -q 'in main ' <<<"$g" &&
	   grep -q 'rt_cache_spin in section .text' <<<"$g" && [ "$WRC" = 0 ]; then
		rt_pass "cache-gdb-attach: gdb attached to a hit names main and rt_cache_spin"
	else
		rt_fail cache-gdb-attach "$g $(cat "$T/gdb.err")"
	fi
	# kcfi: a breakpoint gdb puts on a function's ENDBR before the
	# runtime runs leaves that preamble unconverted in the FineIBT
	# modes (docs/runtime.md, Limits), cache or not.
	drop_entries
	cr gdb-warm kcfi "$P" run
	wait_entries 1
	g=$(FINEIBT_CFI=kcfi,debug FINEIBT_CACHE=$D gdb -batch -nx \
		-ex 'set breakpoint pending on' -ex 'break c2' -ex run -ex bt \
		--args "${NOBODY[@]}" "$P" run 2>&1)
	if grep -q 'Breakpoint 1, .* in c2 ' <<<"$g" &&
	   grep -q 'a page of its text is private already' <<<"$g"; then
		rt_pass "cache-gdb-break: a breakpoint set before start keeps the text private, and stops"
	else
		rt_fail cache-gdb-break "$g"
	fi
fi
if command -v perf >/dev/null && perf record -q -e cpu-clock -o "$T/probe.data" true >/dev/null 2>&1; then
	cr perf-warm auto "$P" run
	perf record -q -e cpu-clock -o "$T/perf.data" -- env FINEIBT_CFI=auto,debug FINEIBT_CACHE="$D" \
		"${NOBODY[@]}" "$P" spin 300 >/dev/null 2>"$T/perf.err"
	r=$(perf report -i "$T/perf.data" --stdio --sort dso,sym 2>/dev/null)
	if grep -q "$HIT" "$T/perf.err" && grep -Eq '[0-9a-f]{32} +\[\.\] (rt_cache_spin|c2)' <<<"$r"; then
		rt_pass "cache-perf: perf names the entry's symbols in a hit"
	else
		rt_fail cache-perf "$(grep -v '^#' <<<"$r" | head -8) $(cat "$T/perf.err")"
	fi
else
	echo "SKIP: cache-perf: perf record does not work here"
fi
