package test

import (
	"fmt"
	"os"
	"testing"

	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/test/cdkapp"
)

// asm is the app synthesized once for the whole test binary: jsii is slow to
// start and not safe for concurrent use, so every test reads this one result.
var asm *cdkapp.Assembly

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "dynastack-synth-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	asm, err = cdkapp.Synth(dir, cdkapp.Options{})
	if err == nil {
		hostGrants, err = synthHostGrants()
	}
	if err == nil {
		credGrants, err = synthCredentialsGrants(asm)
	}
	jsii.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "synth failed: %v\n", err)
		return 1
	}
	return m.Run()
}
