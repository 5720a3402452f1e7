# The sequence sets every per-mode test runs in (docs/sequences.md):
# sourced by rt_lib.bash and protect_common.bash, not a test itself.
# A mode in the v6.18 set is the same cfi= list with the word seq=v6.18
# appended (FINEIBT_CFI=fineibt,paranoid,seq=v6.18); without the word the
# process runs FINEIBT_SEQ's set, v4 by default.

# fi_with_sets MODE...: every MODE as given, then every MODE in v6.18,
# one per line (for m in $(fi_with_sets kcfi auto); do ...).
fi_with_sets() {
	printf '%s\n' "$@"
	printf '%s,seq=v6.18\n' "$@"
}

# fi_set_of CFI: the set a cfi= list runs in ("v4" or "v6.18").
fi_set_of() {
	case ,$1, in
	*,seq=v6.18,*) echo v6.18 ;;
	*,seq=v4,*) echo v4 ;;
	*) echo "${FINEIBT_SEQ:-v4}" ;;
	esac
}

# fi_no_set CFI: the cfi= list without its seq= word.
fi_no_set() {
	local m=,$1,
	m=${m//,seq=v6.18,/,}
	m=${m//,seq=v4,/,}
	m=${m#,}
	echo "${m%,}"
}

# fi_canon CFI: the mode a cfi= list gives, spelled as the runtime spells
# modes everywhere (fineibt_config_str: reports, inspect, FINEIBT_VERBOSE):
# the words applied left to right as the runtime's parser does, auto
# resolved by the kernel's rule without user IBT (kcfi), then the mode
# word, paranoid, bhi, warn, norand (unless off), debug, seq=v6.18.
fi_canon() {
	local w mode=auto par=0 bhi=0 warn=0 rand=1 debug=0 set
	set=$(fi_set_of "$1")
	for w in ${1//,/ }; do
		case $w in
		auto | kcfi | fineibt) mode=$w ;;
		off) mode=off rand=0 ;;
		norand) rand=0 ;;
		warn) warn=1 ;;
		debug) debug=1 ;;
		paranoid) [ "$mode" = fineibt ] && par=1 ;;
		bhi) [ "$mode" = fineibt ] && bhi=1 ;;
		esac
	done
	[ "$mode" = fineibt ] || par=0 bhi=0
	[ "$mode" = auto ] && mode=kcfi
	w=$mode
	[ $par = 1 ] && w+=,paranoid
	[ $bhi = 1 ] && w+=,bhi
	[ $warn = 1 ] && w+=,warn
	[ $rand = 0 ] && [ "$mode" != off ] && w+=,norand
	[ $debug = 1 ] && w+=,debug
	[ "$set" = v6.18 ] && w+=,seq=v6.18
	echo "$w"
}

# fi_canon_re CFI: fi_canon as an ERE ("mode: $(fi_canon_re "$m")\)").
fi_canon_re() {
	local c
	c=$(fi_canon "$1")
	echo "${c//./\\.}"
}
