#!/bin/sh
# regress.sh -- the regression-profiling example, end to end:
#
#   1. profile the suite three times as it is (the baseline),
#   2. inject a slowdown (WORDFREQ_SLOW=1: tokenize normalizes words the
#      slow way) and profile it three times again,
#   3. compare, first the call counts (exact), then the times (the minimum
#      of the three runs of each test, changes beyond 25% and 0.2 ms).
#
# Usage: examples/regress/regress.sh ?path-to-the-tclcprof-tool? ?dir?
# Writes base.db and new.db to dir (default: a new temporary directory).
# Exits with the status of the time comparison: 1 when it finds the
# regression, as a CI job gating on it would.

set -e
here=$(cd "$(dirname "$0")" && pwd)
tool=${1:-tclcprof}
dir=${2:-$(mktemp -d)}
cd "$dir"
rm -f base.db* new.db*

for i in 1 2 3; do
    "$tool" run -tcltest 1 -db base.db "$here/all.tcl" > /dev/null
done
for i in 1 2 3; do
    WORDFREQ_SLOW=1 "$tool" run -tcltest 1 -db new.db "$here/all.tcl" > /dev/null
done

echo "== call counts (exact): any change"
"$tool" diff base.db new.db -metric calls -threshold 0 -limit 6 || true
echo
echo "== total time per test and command (min of 3 runs)"
"$tool" diff base.db new.db -metric total
