#!/usr/bin/env bash
# Runs `npm test` N times in a row (default 5) while a CPU-heavy process keeps one core busy:
# the check that every bound in the suite holds on a busy 2-core machine (issue 9, item 17).
# Usage: bash test/stress/repeatUnderLoad.sh [runs] [hogs] [test files...]
# With test files, each run is `vitest run` of those files only (no lint, no typecheck): the
# cheap check of a set of timing-sensitive files while the machine is shared.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs="${1:-5}"
hogs="${2:-1}"
files=("${@:3}")
# Logs in a folder of this invocation's own: two runs at once (helpers sharing the machine) once
# wrote the same /tmp/stream-janitor-under-load-N.log.
logs=$(mktemp -d /tmp/stream-janitor-under-load.XXXXXX)
hog_pids=()
stop_hogs() { ((${#hog_pids[@]})) && kill "${hog_pids[@]}" 2>/dev/null || true; }
trap stop_hogs EXIT
for ((h = 0; h < hogs; h++)); do
  # A pure CPU spin, as a compiler or a neighbour's batch job would be.
  node -e 'for (;;) { Math.sqrt(Math.random()); }' &
  hog_pids+=($!)
done
for ((i = 1; i <= runs; i++)); do
  started=$(date +%s)
  echo "== run $i of $runs, $(uptime)"
  if ((${#files[@]})); then
    command=(npx vitest run --config test/vitest.config.ts "${files[@]}")
  else
    command=(npm test)
  fi
  if ! "${command[@]}" >"$logs/run-$i.log" 2>&1; then
    echo "== run $i FAILED after $(($(date +%s) - started)) s; see $logs/run-$i.log"
    sed 's/\x1b\[[0-9;]*m//g' "$logs/run-$i.log" | grep -E "FAIL|×" | head -20 || true
    exit 1
  fi
  echo "== run $i passed in $(($(date +%s) - started)) s, $(uptime | sed 's/.*load/load/'): $(sed 's/\x1b\[[0-9;]*m//g' "$logs/run-$i.log" | grep -E '^ +Tests ' | tr -s ' ')"
done
echo "== $runs runs passed in a row with $hogs CPU hog(s), $(uptime)"
