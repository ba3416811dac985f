#!/usr/bin/env bash
# make bench-synth: `make synth` beside its floor, an empty CDK Go app
# (test/synthbench/emptyapp) synthesized through the same pinned CLI, in one
# run. Runs alternate (floor, synth, floor, synth, ...) after one warm-up of
# each, so both see the same machine load; the medians and their ratio are
# printed last. RUNS=<n> sets the number of timed runs of each (default 5).
# Then, once each, where the time of make synth goes: the same synth with
# CDK's built-in CloudFormation validation off (what validation costs), and
# the one `go build` of every Lambda main (what bundling costs).
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
novalidation() { CDK_VALIDATION=false quiet "$cdk" synth --quiet --output "$tmp/novalidation"; }
gobuild() {
	(cd lambdas && GOOS=linux GOARCH=arm64 CGO_ENABLED=0 GOWORK=off quiet go build -tags lambda.norpc -trimpath \
		-buildvcs=false -ldflags "-s -w" -o "$tmp/bin/" $(go list -f '{{if eq .Name "main"}}{{.ImportPath}}{{range .Deps}}{{if eq . "github.com/aws/aws-lambda-go/lambda"}} lambda{{end}}{{end}}{{end}}' ./... | awk '$2 == "lambda" {print $1}'))
}

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
mkdir -p "$tmp/bin"
echo "where it goes (one run each): synth with CDK_VALIDATION=false $(seconds novalidation)s, the go build of every Lambda main $(seconds gobuild)s (warm cache)"
