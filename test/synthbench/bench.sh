#!/usr/bin/env bash
# make bench-synth: `make synth` beside its floor, an empty CDK Go app
# (test/synthbench/emptyapp) synthesized through the same pinned CLI, in one
# run. Runs alternate (floor, synth, floor, synth, ...) after one warm-up of
# each, so both see the same machine load; the medians and their ratio are
# printed last. RUNS=<n> sets the number of timed runs of each (default 5).
set -euo pipefail
cd "$(dirname "$0")/../.."

runs=${RUNS:-5}
cdk=node_modules/.bin/cdk
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

floor() { "$cdk" synth --quiet --app 'go run ./test/synthbench/emptyapp' --output "$tmp/empty" >/dev/null; }
synth() { make -s synth >/dev/null; }

# seconds <command>: wall time of one run, in seconds with milliseconds.
seconds() {
	local start end
	start=$(date +%s%N)
	"$@"
	end=$(date +%s%N)
	echo "$(((end - start) / 1000000))" | awk '{printf "%.3f", $1 / 1000}'
}

median() { sort -n | awk '{a[NR] = $1} END {m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.2f", m}'; }

echo "warm-up: one run of each (builds the apps, fills the Go and CDK caches)"
floor
synth
: >"$tmp/floor.txt"
: >"$tmp/synth.txt"
for i in $(seq "$runs"); do
	f=$(seconds floor)
	s=$(seconds synth)
	echo "run $i: empty app ${f}s, make synth ${s}s"
	echo "$f" >>"$tmp/floor.txt"
	echo "$s" >>"$tmp/synth.txt"
done
f=$(median <"$tmp/floor.txt")
s=$(median <"$tmp/synth.txt")
ratio=$(awk -v s="$s" -v f="$f" 'BEGIN {printf "%.2f", s / f}')
echo "median of $runs: make synth ${s}s, empty CDK Go app ${f}s (same CLI: $("$cdk" --version | cut -d' ' -f1)): ${ratio}x"
