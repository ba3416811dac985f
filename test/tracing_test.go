package test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// One trace per message (issue 30; docs/schemas/rezagent.md, "One trace
// per message"): a topic that feeds a queue has active tracing in every
// stage, so SNS adds its segment between the publishing function's and
// the consumer's (the functions' own Active tracing is
// TestFunctionContracts'). SQS has no setting: it keeps AWSTraceHeader.
func TestTopicsToQueuesAreTraced(t *testing.T) {
	checked := 0
	for stage, stacks := range asm.Templates {
		for id, tmpl := range stacks {
			topics := tmpl.Resources("AWS::SNS::Topic")
			for lid, sub := range tmpl.Resources("AWS::SNS::Subscription") {
				p := props(sub)
				if p["Protocol"] != "sqs" {
					continue
				}
				ref, _ := p["TopicArn"].(map[string]any)
				topic, ok := topics[fmt.Sprint(ref["Ref"])]
				if !assert.True(t, ok, "%s/%s %s: subscription of a topic outside the stack %v", stage, id, lid, p["TopicArn"]) {
					continue
				}
				checked++
				assert.Equal(t, "Active", props(topic)["TracingConfig"], "%s/%s %v: tracing of the topic feeding a queue", stage, id, ref["Ref"])
			}
		}
	}
	assert.NotZero(t, checked, "topics feeding a queue")
}
