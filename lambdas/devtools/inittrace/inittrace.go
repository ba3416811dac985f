// Package inittrace reads what a Go program prints under
// GODEBUG=inittrace=1: a line per package initialiser that ran, with its
// clock time, bytes and allocations. The cold-start report sums the clock
// times (devtools/cmd/coldstart) and platform/bodyschema's test reads one
// library's allocations; both read the lines here.
package inittrace

import (
	"regexp"
	"strconv"
	"time"
)

// Init is one package initialiser's line.
type Init struct {
	Package string
	Clock   time.Duration
	Bytes   int
	Allocs  int
}

// line is the runtime's format: "init <package> @<start> ms, <clock> ms
// clock, <bytes> bytes, <allocs> allocs".
var line = regexp.MustCompile(`(?m)^init (\S+) @[0-9.]+ ms, ([0-9.]+) ms clock, ([0-9]+) bytes, ([0-9]+) allocs`)

// Parse returns the initialisers whose lines are in out (a program's
// combined output; other lines are skipped), in the order they ran.
func Parse(out []byte) []Init {
	var inits []Init
	for _, m := range line.FindAllSubmatch(out, -1) {
		clock, _ := strconv.ParseFloat(string(m[2]), 64) // the pattern admits only numbers
		bytes, _ := strconv.Atoi(string(m[3]))
		allocs, _ := strconv.Atoi(string(m[4]))
		inits = append(inits, Init{Package: string(m[1]), Clock: time.Duration(clock * float64(time.Millisecond)), Bytes: bytes, Allocs: allocs})
	}
	return inits
}

// Clock is the sum of the initialisers' clock times.
func Clock(inits []Init) time.Duration {
	var sum time.Duration
	for _, in := range inits {
		sum += in.Clock
	}
	return sum
}

// Find returns pkg's initialiser, if it ran.
func Find(inits []Init, pkg string) (Init, bool) {
	for _, in := range inits {
		if in.Package == pkg {
			return in, true
		}
	}
	return Init{}, false
}
