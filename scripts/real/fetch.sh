#!/usr/bin/env bash
# Fetch and unpack the Debian source packages of the real programs.
# Usage: scripts/real/fetch.sh PKG...   (prints nothing on a cache hit)
#
# Source packages are cached OUTSIDE the repo, in $FINEIBT_SRC_CACHE
# (default /var/cache/fineibt-src): <cache>/<pkg>/ holds the .dsc/.orig/
# .debian files apt-get downloaded and <cache>/<pkg>/src/ the upstream tree
# dpkg-source unpacked (--skip-patches: the upstream release as is). We never
# commit or modify any of their source: builds work on a copy.
# If apt has no deb-src entry, one is added (a separate sources file built
# from the URIs of /etc/apt/sources.list.d/debian.sources) and apt-get update
# runs once.
set -eu
cache=${FINEIBT_SRC_CACHE:-/var/cache/fineibt-src}
mkdir -p "$cache"

have_deb_src() {
	grep -rqsE '^(deb-src|Types:.*deb-src)' /etc/apt/sources.list \
		/etc/apt/sources.list.d/ 2>/dev/null
}

setup_deb_src() {
	local srcfile=/etc/apt/sources.list.d/fineibt-src.sources
	local deb=/etc/apt/sources.list.d/debian.sources uris
	if [ "$(id -u)" != 0 ]; then
		echo "fetch.sh: apt has no deb-src entry and we are not root;" \
		     "add one (Types: deb-src) and run apt-get update" >&2
		exit 1
	fi
	# First stanza's URIs of the main archive (not the security one).
	uris=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' "$deb" 2>/dev/null || true)
	[ -n "$uris" ] || uris=http://deb.debian.org/debian
	echo "fetch.sh: adding deb-src entry $srcfile ($uris bookworm main)" >&2
	cat >"$srcfile" <<SRC
Types: deb-src
URIs: $uris
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	apt-get update -q >/dev/null 2>&1 || {
		echo "fetch.sh: apt-get update failed" >&2; exit 1; }
}

need_dpkg_dev() {
	command -v dpkg-source >/dev/null 2>&1 && return 0
	echo "fetch.sh: installing dpkg-dev (for dpkg-source)" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends dpkg-dev >/dev/null 2>&1 || {
		echo "fetch.sh: cannot install dpkg-dev: apt-get install dpkg-dev" >&2
		exit 1; }
}

fetch_one() {
	local pkg=$1 dir=$cache/$1 dsc
	[ -f "$dir/src/.unpacked" ] && return 0
	mkdir -p "$dir"
	dsc=$(ls "$dir"/*.dsc 2>/dev/null | head -n 1 || true)
	if [ -z "$dsc" ]; then
		have_deb_src || setup_deb_src
		echo "fetch.sh: apt-get source --download-only $pkg" >&2
		if ! (cd "$dir" && apt-get source -q --download-only "$pkg" \
				>"$dir/fetch.log" 2>&1); then
			# A stale package list is the usual cause: refresh once.
			apt-get update -q >/dev/null 2>&1 || true
			(cd "$dir" && apt-get source -q --download-only "$pkg" \
				>"$dir/fetch.log" 2>&1) || {
				echo "fetch.sh: apt-get source $pkg failed:" >&2
				tail -n 5 "$dir/fetch.log" >&2; exit 1; }
		fi
		dsc=$(ls "$dir"/*.dsc 2>/dev/null | head -n 1 || true)
		[ -n "$dsc" ] || { echo "fetch.sh: no .dsc for $pkg" >&2; exit 1; }
	fi
	need_dpkg_dev
	rm -rf "$dir/src"
	dpkg-source --no-check --skip-patches -x "$dsc" "$dir/src" \
		>"$dir/unpack.log" 2>&1 || {
		echo "fetch.sh: dpkg-source -x $dsc failed" >&2
		tail -n 5 "$dir/unpack.log" >&2; exit 1; }
	basename "$dsc" >"$dir/src/.unpacked"
}

for p in "$@"; do
	fetch_one "$p"
done
