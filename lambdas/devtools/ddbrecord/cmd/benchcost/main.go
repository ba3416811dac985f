// Command benchcost reads `go test -bench` output on stdin, passes it
// through, and appends one table: per benchmarked operation, the handler's
// time beside the raw SDK call's (their ratio is the handler's overhead)
// and the DynamoDB requests and capacity each reported (ddbrecord.Report).
// Benchmarks come in pairs named Benchmark<Operation>/handler and
// Benchmark<Operation>/rawsdk; pairs of Benchmark<Operation>/canned/…
// (devtools/ddbcanned) make a second table, the handler's own CPU with
// B/op, allocs/op and the time at a 256 MB Lambda's CPU share.
// BenchmarkAPI/canned/<operation>/… pairs (servicetest.Canned: every cost
// case of a service, the raw side its generic twin) join that table under
// the operation's name, its spaces given back; an operation that made no
// DynamoDB request (refused before DynamoDB) gets no ratio.
//
//	go test -run '^$' -bench . ./services/... | go run ./devtools/ddbrecord/cmd/benchcost
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dynastack/dynastack/lambdas/devtools/ddbcanned"
)

// result is one benchmark line's metrics by unit (ns/op, req/op, …).
type result map[string]float64

var line = regexp.MustCompile(`^Benchmark(\S+)/(handler|rawsdk)(?:-\d+)?\s+\d+\s+(.*)$`)

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchcost:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	// With -count, each side has several runs; the table shows each
	// metric's median, so one run disturbed by the shared machine does
	// not decide a ratio.
	type pair struct {
		handler, raw result
		hs, rs       []result
	}
	var (
		order []string
		pairs = map[string]*pair{}
		pkg   string
	)
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		text := sc.Text()
		fmt.Fprintln(out, text)
		if p, ok := strings.CutPrefix(text, "pkg: "); ok {
			pkg = p[strings.LastIndex(p, "/")+1:]
			continue
		}
		m := line.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		name := pkg + " " + m[1]
		if pairs[name] == nil {
			pairs[name] = &pair{}
			order = append(order, name)
		}
		r := parse(m[3])
		if m[2] == "handler" {
			pairs[name].hs = append(pairs[name].hs, r)
			pairs[name].handler = medians(pairs[name].hs)
		} else {
			pairs[name].rs = append(pairs[name].rs, r)
			pairs[name].raw = medians(pairs[name].rs)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if len(order) == 0 {
		return nil
	}
	var local, canned []string
	for _, name := range order {
		if p := pairs[name]; p.handler == nil || p.raw == nil {
			continue
		}
		if strings.HasSuffix(name, cannedSuffix) || strings.Contains(name, cannedInfix) {
			canned = append(canned, name)
		} else {
			local = append(local, name)
		}
	}
	if len(local) > 0 {
		fmt.Fprintln(out)
		fmt.Fprintln(out, "DynamoDB Local, end to end:")
		fmt.Fprintln(out)
		fmt.Fprintln(out, "| operation | handler ms/op | raw SDK ms/op | handler ÷ raw | handler req / RCU / WCU per op | raw SDK req / RCU / WCU per op |")
		fmt.Fprintln(out, "|---|---|---|---|---|---|")
	}
	for _, name := range local {
		p := pairs[name]
		ratio := "–"
		if p.raw["ns/op"] > 0 {
			ratio = fmt.Sprintf("%.2f", p.handler["ns/op"]/p.raw["ns/op"])
		}
		fmt.Fprintf(out, "| %s | %.2f | %.2f | %s | %s | %s |\n", name, p.handler["ns/op"]/1e6, p.raw["ns/op"]/1e6, ratio, cost(p.handler), cost(p.raw))
	}
	if len(canned) > 0 {
		fmt.Fprintln(out)
		fmt.Fprintln(out, "Handler CPU over recorded DynamoDB answers (devtools/ddbcanned; no network, no DynamoDB Local; each side timed in blocks interleaved with the other). Wall µs/op is go test's ns/op; CPU µs/op is the process's CPU time per op (the garbage collector's included), which a busy shared machine inflates less, and the ratio is taken on it; at 256 MB = that CPU time ÷ (256/1769 vCPU):")
		fmt.Fprintln(out)
		fmt.Fprintln(out, "| operation | handler wall µs/op | raw SDK wall µs/op | handler CPU µs/op | raw SDK CPU µs/op | handler ÷ raw (CPU) | handler µs at 256 MB | raw SDK µs at 256 MB | handler B/op | raw SDK B/op | handler allocs/op | raw SDK allocs/op | sent / received bytes (handler; raw) |")
		fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	}
	for _, name := range canned {
		p := pairs[name]
		ratio := "–"
		if cpu(p.raw) > 0 && p.raw["calls/op"] > 0 {
			ratio = fmt.Sprintf("%.2f", cpu(p.handler)/cpu(p.raw))
		}
		fmt.Fprintf(out, "| %s | %.1f | %.1f | %.1f | %.1f | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f / %.0f; %.0f / %.0f |\n", display(name),
			p.handler["ns/op"]/1e3, p.raw["ns/op"]/1e3, cpu(p.handler)/1e3, cpu(p.raw)/1e3, ratio, cpu(p.handler)/ddbcanned.LambdaCPUShare/1e3, cpu(p.raw)/ddbcanned.LambdaCPUShare/1e3,
			p.handler["B/op"], p.raw["B/op"], p.handler["allocs/op"], p.raw["allocs/op"],
			p.handler["sentB/op"], p.handler["recvB/op"], p.raw["sentB/op"], p.raw["recvB/op"])
	}
	return nil
}

// cannedSuffix ends the name of a pair run by ddbcanned.Pair
// (Benchmark<Operation>/canned/handler and …/canned/rawsdk).
const cannedSuffix = "/canned"

// cannedInfix is in the name of a generic pair (servicetest.Canned):
// BenchmarkAPI/canned/<operation>/handler and …/rawsdk.
const cannedInfix = "API/canned/"

// display is a canned pair's row name: "<pkg> <operation>".
func display(name string) string {
	if pkg, op, ok := strings.Cut(name, " "+cannedInfix); ok {
		// go test writes a sub-benchmark's spaces as underscores.
		return pkg + " " + strings.ReplaceAll(op, "_", " ")
	}
	return strings.TrimSuffix(name, cannedSuffix)
}

// cpu is a canned side's CPU ns per op.
func cpu(r result) float64 { return r["cpu-ns/op"] }

// medians is each metric's median over runs.
func medians(runs []result) result {
	out := result{}
	for unit := range runs[0] {
		var vs []float64
		for _, r := range runs {
			if v, ok := r[unit]; ok {
				vs = append(vs, v)
			}
		}
		slices.Sort(vs)
		out[unit] = vs[len(vs)/2]
	}
	return out
}

func parse(fields string) result {
	r := result{}
	f := strings.Fields(fields)
	for i := 0; i+1 < len(f); i += 2 {
		if v, err := strconv.ParseFloat(f[i], 64); err == nil {
			r[f[i+1]] = v
		}
	}
	return r
}

func cost(r result) string {
	if _, ok := r["req/op"]; !ok {
		return "–"
	}
	return fmt.Sprintf("%s / %s / %s", num(r["req/op"]), num(r["RCU/op"]), num(r["WCU/op"]))
}

func num(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(strconv.FormatFloat(f, 'f', 2, 64), "0"), ".")
}
