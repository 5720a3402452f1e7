# Sourced by tests/e2e/real_*.sh: the CI-sized run of one real program
# (scripts/real/run.sh --quick: reduced tests, every mode, no timing).
# FINEIBT_SKIP_REAL=1 skips them (e.g. for a fast local `make check`); a
# tree without driver/ has no fineibt-cc to test yet and skips too.
real_e2e() {
	if [ "${FINEIBT_SKIP_REAL:-0}" = 1 ]; then
		echo "real programs skipped: FINEIBT_SKIP_REAL=1"
		exit 0
	fi
	if [ ! -d "${FINEIBT_ROOT:-.}/driver" ]; then
		echo "real programs skipped: no driver/ (fineibt-cc) in this tree"
		exit 0
	fi
	exec bash "${FINEIBT_ROOT:-.}/scripts/real/run.sh" --cc fineibt --quick "$@"
}
