#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make bench: the lookup, forwarding and control-plane benchmarks in one
# run, then tests/bench/report.py merges their records into
# build/bench/results.json, report.md and the plots.
#
# Each benchmark's output goes to the terminal and to
# build/bench/<name>.log. Slow numbers never fail the run; a benchmark
# that breaks (exits non-zero) does, after the others have run and the
# report has been written from what there is.
#
# Environment: SCALE (full or small), passed on; BENCHES ("lookup fwd
# ctl"); PYTHON (/usr/bin/python3: Debian's python3-matplotlib is
# installed for it).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${BUILD:-$top/build}
out="$build/bench"
BENCHES=${BENCHES:-"lookup fwd ctl"}
PYTHON=${PYTHON:-/usr/bin/python3}
[ -x "$PYTHON" ] || PYTHON=python3

mkdir -p "$out"
failed=()
start=$SECONDS
for b in $BENCHES; do
	# No stale records from an earlier run in this run's report.
	rm -f "$out/$b.json"
	echo "==== bench $b (SCALE=${SCALE:-full})"
	t0=$SECONDS
	if "$here/$b.sh" 2>&1 | tee "$out/$b.log"; then
		echo "==== bench $b: done in $((SECONDS - t0)) s"
	else
		echo "==== bench $b: FAILED after $((SECONDS - t0)) s (log: $out/$b.log)"
		failed+=("$b")
	fi
done
"$PYTHON" "$here/report.py" --dir "$out" || failed+=(report)
echo "==== $((SECONDS - start)) s; report: $out/report.md"
if [ ${#failed[@]} -gt 0 ]; then
	echo "==== failed: ${failed[*]}" >&2
	exit 1
fi
