#!/usr/bin/env bash
# make bench-synth: `make synth` beside its floor, an empty CDK Go app
# (test/synthbench/emptyapp) synthesized through the same pinned CLI, in one
# run. Runs alternate (floor, synth, floor, synth, ...) after one warm-up of
# each, so both see the same machine load; the medians and their ratio are
# printed. RUNS=<n> sets the number of timed runs of each (default 5).
#
# Those runs change no input, so CloudFormation validation and the Control
# Tower controls answer from their per-template caches (cdk.out/
# .dynastack-checks), as in an edit-synth loop that touched no template.
# The same number of runs follows with those caches emptied before each,
# as after a change to every template (or a fresh clone). Then, once each,
# where the time goes: the app's own phases (DYNASTACK_SYNTH_TIMES=1), warm
# and with the checks cold, and the one `go build` of every Lambda main into
# a fresh folder (what bundling costs on a clean cdk.out).
set -euo pipefail
cd "$(dirname "$0")/../.."

runs=${RUNS:-5}
cdk=node_modules/.bin/cdk
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Output goes to a log, shown when a run fails.
quiet() { "$@" >"$tmp/log" 2>&1 || { cat "$tmp/log"; return 1; }; }
floor() { quiet "$cdk" synth --quiet --app 'go run ./test/synthbench/emptyapp' --output "$tmp/empty"; }
synth() { quiet make -s synth; }
gobuild() {
	(cd lambdas && GOOS=linux GOARCH=arm64 CGO_ENABLED=0 GOWORK=off quiet go build -tags lambda.norpc -trimpath \
		-buildvcs=false -ldflags "-s -w" -o "$tmp/bin/" $(go list -f '{{if eq .Name "main"}}{{.ImportPath}}{{range .Deps}}{{if eq . "github.com/aws/aws-lambda-go/lambda"}} lambda{{end}}{{end}}{{end}}' ./... | awk '$2 == "lambda" {print $1}'))
}

# children_cpu <file>: CPU seconds (user + sys) of every finished child of
# this shell, as bash's `times` wrote them into file (a builtin writing to a
# file runs in this shell; in $(...) it would report the subshell's).
children_cpu() {
	tail -1 "$1" | awk '{
		t = 0
		for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); t += p[1] * 60 + p[2] }
		printf "%.3f", t
	}'
}

# measure <command>: "wall cpu" of one run, in seconds. CPU time is the
# steadier figure on a shared machine: waiting for a core is not in it.
measure() {
	local start end c0 c1
	times >"$tmp/times0"
	start=$(date +%s%N)
	"$@"
	end=$(date +%s%N)
	times >"$tmp/times1"
	c0=$(children_cpu "$tmp/times0")
	c1=$(children_cpu "$tmp/times1")
	awk -v w="$(((end - start) / 1000000))" -v a="$c0" -v b="$c1" 'BEGIN {printf "%.3f %.3f\n", w / 1000, b - a}'
}

median() { sort -n | awk '{a[NR] = $1} END {m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.2f", m}'; }

echo "warm-up: one run of each (builds the apps, fills the Go, CDK and check caches)"
floor
synth
coldsynth() { rm -rf cdk.out/.dynastack-checks && synth; }
ratio() { awk -v s="$1" -v f="$2" 'BEGIN {printf "%.2f", s / f}'; }
# series <name> <synth command>: RUNS alternating runs beside the floor,
# then the medians and ratios.
series() {
	: >"$tmp/floor.txt"
	: >"$tmp/synth.txt"
	for i in $(seq "$runs"); do
		read -r fw fc < <(measure floor)
		read -r sw sc < <(measure "$2")
		echo "$1 run $i: empty app ${fw}s wall ${fc}s CPU, make synth ${sw}s wall ${sc}s CPU"
		echo "$fw $fc" >>"$tmp/floor.txt"
		echo "$sw $sc" >>"$tmp/synth.txt"
	done
	fw=$(cut -d' ' -f1 "$tmp/floor.txt" | median)
	fc=$(cut -d' ' -f2 "$tmp/floor.txt" | median)
	sw=$(cut -d' ' -f1 "$tmp/synth.txt" | median)
	sc=$(cut -d' ' -f2 "$tmp/synth.txt" | median)
	echo "$1: median of $runs, same CLI ($("$cdk" --version | cut -d' ' -f1)), load average $(cut -d' ' -f1 /proc/loadavg):"
	echo "  wall: make synth ${sw}s, empty CDK Go app ${fw}s: $(ratio "$sw" "$fw")x"
	echo "  CPU:  make synth ${sc}s, empty CDK Go app ${fc}s: $(ratio "$sc" "$fc")x"
}
series "templates unchanged" synth
series "checks cold" coldsynth
echo "where it goes, templates unchanged (the app's phases; the CLI's own time is the rest):"
DYNASTACK_SYNTH_TIMES=1 "$cdk" synth --quiet --output cdk.out 2>&1 | grep -E '^ *(jsii|stacks|synth|of which)'
echo "where it goes, checks cold:"
rm -rf cdk.out/.dynastack-checks
DYNASTACK_SYNTH_TIMES=1 "$cdk" synth --quiet --output cdk.out 2>&1 | grep -E '^ *(jsii|stacks|synth|of which)'
mkdir -p "$tmp/bin"
read -r gw gc < <(measure gobuild)
echo "the go build of every Lambda main into a fresh folder: ${gw}s wall ${gc}s CPU (warm Go cache)"
