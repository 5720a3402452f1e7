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

# fi_report_set CFI: "/v4" or "/v6.18" as the report line's mode names it
# after the mode ("mode: paranoid/v6.18"), as an ERE.
fi_report_set() {
	local s
	s=$(fi_set_of "$1")
	echo "/${s//./\\.}"
}
