//lint:file-ignore SA1019 aws-cdk-go has no binding of @aws-cdk/cloud-assembly-api yet; cxapi is the type App.Synth returns.

package stacks

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2/cxapi"
)

// SynthErrors lists the error annotations of every stack, stages included.
// The CLI does not fail a synth on errors inside nested stage assemblies, so
// the app checks them itself.
func SynthErrors(asm cxapi.CloudAssembly) []string {
	var out []string
	for _, stack := range *asm.StacksRecursively() {
		for _, m := range *stack.Messages() {
			if m.Level == cxapi.SynthesisMessageLevel_ERROR {
				out = append(out, fmt.Sprintf("%s: %v", *m.Id, m.Entry.Data))
			}
		}
	}
	return out
}
