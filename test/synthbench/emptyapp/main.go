// Command emptyapp is the floor of `make bench-synth`: a CDK Go app with
// one stack holding one no-op resource (the CLI refuses a stack without
// resources), synthesized through the same pinned CLI, Go toolchain
// and jsii runtime as the real app. What the real synth takes beyond it is
// dynastack's own work.
package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

func main() {
	defer jsii.Close()
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Empty"), nil)
	awscdk.NewCfnWaitConditionHandle(stack, jsii.String("Nothing"), nil)
	app.Synth(nil)
}
