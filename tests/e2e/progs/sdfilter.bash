# shellcheck shell=bash
# systemd's SystemCallFilter= groups as system call names and numbers
# (cached_unit.sh, rt_sysfilter.sh), for progs/seccomp_allow.c. Needs
# systemd-analyze; sourced.

# sd_expand GROUP-OR-CALL...: the calls, one a line, sorted (groups
# recursively, as systemd-analyze syscall-filter lists them).
sd_expand_one() {
	systemd-analyze syscall-filter "$1" 2>/dev/null | sed '1d; s/^ *//; /^#/d; /^$/d' |
	while read -r s; do
		case $s in @*) sd_expand_one "$s" ;; *) echo "$s" ;; esac
	done
}
sd_expand() {
	local w
	for w in "$@"; do
		case $w in @*) sd_expand_one "$w" ;; *) echo "$w" ;; esac
	done | sort -u
}

# sd_numbers NAMES-FILE: the x86-64 numbers of the calls named, comma-
# separated (<sys/syscall.h>; names of other architectures dropped).
sd_numbers() {
	printf '#include <sys/syscall.h>\n' | cc -dM -E - 2>/dev/null |
		awk '$2 ~ /^__NR_/ { sub(/^__NR_/, "", $2); print $2, $3 }' | sort |
		join "$1" - | awk '{ print $2 }' | paste -sd,
}
