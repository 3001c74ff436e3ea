# Common setup for flamediag's bats suites.
# shellcheck shell=bash
bats_require_minimum_version 1.5.0

BATS_LIB=${BATS_LIB:-/usr/lib/bats}
load "$BATS_LIB/bats-support/load.bash"
load "$BATS_LIB/bats-assert/load.bash"
load "$BATS_LIB/bats-file/load.bash"

# Suites live two levels below the root (test/bats/, test/live/).
FLAMEDIAG_ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
FLAMEDIAG=$FLAMEDIAG_ROOT/bin/flamediag
FIXTURES=$FLAMEDIAG_ROOT/test/fixtures
export FLAMEDIAG_ROOT FLAMEDIAG FIXTURES

# Put fake tools (test/fixtures/bin/<set>) first on PATH, for failures this machine can't produce.
use_fakes() {
	local set
	for set in "$@"; do PATH="$FIXTURES/bin/$set:$PATH"; done
	export PATH
}

# The subcommands `flamediag --help` lists (version and help aside), one a line.
usage_subcommands() {
	"$FLAMEDIAG" --help | awk '/subcommands:/ { on = 1; next } /eg,/ { on = 0 } on && NF { print $1 }' |
		grep -vxE 'version|help'
}

require_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root (run the suite as root to include it)"
}
