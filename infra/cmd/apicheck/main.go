// Command apicheck compares the constructs module's exported API in two
// source trees and fails on an incompatible change that the CHANGELOG's
// version does not bump for; with -old-docs it also compares each
// service's OpenAPI document (docs/api) and fails on a breaking change of
// an HTTP API that its version and docs/api/CHANGELOG.md do not bump for
// (make apidiff).
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
	oldDocs := flag.String("old-docs", "", "docs/api at the base (the HTTP APIs' OpenAPI documents); empty: not compared")
	newDocs := flag.String("new-docs", apicheck.APIDocs, "docs/api now")
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
			code := report(r)
			if *oldDocs != "" {
				code = max(code, httpAPIs(*bin, *oldDocs, *newDocs))
			}
			os.Exit(code)
		}
	}
	fmt.Fprintln(os.Stderr, "apicheck:", err)
	os.Exit(2)
}

// httpAPIs compares the services' OpenAPI documents and prints every
// change, breaking ones first.
func httpAPIs(bin, oldDocs, newDocs string) int {
	tool, err := apicheck.InstallOASDiff(bin)
	var rs []apicheck.ServiceReport
	if err == nil {
		rs, err = apicheck.CompareHTTP(tool, oldDocs, newDocs)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "apicheck: HTTP APIs:", err)
		return 2
	}
	code := 0
	for _, r := range rs {
		for _, c := range r.Changes {
			kind := "change"
			if c.Breaking() {
				kind = "breaking"
			}
			fmt.Printf("%s: %s: %s\n", r.Service, kind, c)
		}
		if p := r.Problem(); p != "" {
			fmt.Fprintln(os.Stderr, "FAIL: "+p)
			code = 1
			continue
		}
		old := r.OldVersion
		if old == "" {
			old = "(no document at the base)"
		}
		fmt.Printf("ok: %s API %s -> %s, %d breaking, %d change(s) in all\n", r.Service, old, r.NewVersion, len(r.Breaking()), len(r.Changes))
	}
	return code
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
