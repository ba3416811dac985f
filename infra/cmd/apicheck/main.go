// Command apicheck compares the constructs module's exported API in two
// source trees and fails on an incompatible change that the CHANGELOG's
// version does not bump for (make apidiff).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/dynastack/dynastack/infra/apicheck"
)

func main() {
	oldDir := flag.String("old", "", "the constructs module at the base")
	newDir := flag.String("new", "constructs", "the constructs module now")
	bin := flag.String("bin", "bin", "folder for the pinned apidiff")
	flag.Parse()
	if *oldDir == "" {
		fmt.Fprintln(os.Stderr, "usage: apicheck -old <dir> [-new constructs] [-bin bin]")
		os.Exit(2)
	}
	if err := os.MkdirAll(*bin, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "apicheck:", err)
		os.Exit(2)
	}
	tool, err := apicheck.Install(*bin)
	if err == nil {
		var r apicheck.Report
		if r, err = apicheck.Compare(tool, *oldDir, *newDir); err == nil {
			os.Exit(report(r))
		}
	}
	fmt.Fprintln(os.Stderr, "apicheck:", err)
	os.Exit(2)
}

func report(r apicheck.Report) int {
	for _, c := range r.Incompatible {
		fmt.Println("incompatible: " + c)
	}
	for _, c := range r.Compatible {
		fmt.Println("compatible: " + c)
	}
	if p := r.Problem(); p != "" {
		fmt.Fprintln(os.Stderr, "FAIL: "+p)
		return 1
	}
	fmt.Printf("ok: constructs %s -> %s, %d incompatible, %d compatible change(s)\n", orNone(r.OldVersion), r.NewVersion, len(r.Incompatible), len(r.Compatible))
	return 0
}

func orNone(v string) string {
	if v == "" {
		return "(no CHANGELOG)"
	}
	return v
}
