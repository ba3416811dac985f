package gofunction_test

import (
	"fmt"
	"log"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/gofunction"
	"github.com/dynastack/dynastack/constructs/table"
)

// A Go function from a package of a local module. The bootstrap is built by
// `go build` during synth; here bundling is skipped, as in unit tests.
func ExampleNew() {
	app := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{"aws:cdk:bundling-stacks": []any{}}})
	stack := awscdk.NewStack(app, jsii.String("Svc"), nil)
	fn, err := gofunction.New(stack, "Handler", gofunction.Props{
		Stage:       table.Prod,
		ModuleDir:   "testdata/hello",
		Package:     "./cmd/hello",
		Environment: map[string]*string{"GREETING": jsii.String("hello")},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(*fn.Function.Runtime().Name(), *fn.Function.Architecture().Name(), gofunction.LogRetention(table.Prod))

	_, err = gofunction.New(stack, "Typo", gofunction.Props{Stage: table.Prod, ModuleDir: "testdata/hello", Package: "cmd/hello"})
	fmt.Println(err)
	// Output:
	// provided.al2023 arm64 SIX_MONTHS
	// Svc/Typo: Package "cmd/hello": use a path inside the module starting with ./, e.g. "./cmd/itsm"
}
