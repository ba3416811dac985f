package test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dynastack/dynastack/test/cdkapp"
	"github.com/dynastack/dynastack/test/iameval"
)

// deployEnv stands for the account and region a stage deploys to: the
// templates are environment-agnostic (AWS::AccountId, AWS::Region).
var deployEnv = iameval.Env{Partition: "aws", Region: "eu-central-1", Account: "111122223333"}

// TestAlarmsCanNotify: every action of every alarm, in every stage, is a
// topic whose resource policy lets CloudWatch publish for this account's
// alarm over TLS (and not for another account's, nor without TLS), and
// whose KMS key lets CloudWatch encrypt for it. Evaluated with IAM's
// logic (test/iameval), not read for words: a topic policy that only
// denies replaces SNS's default one and allows nobody.
func TestAlarmsCanNotify(t *testing.T) {
	checked := 0
	for stage, stacks := range asm.Templates {
		for id, tmpl := range stacks {
			where := stage + "/" + id
			resources, _ := tmpl["Resources"].(map[string]any)
			for aid, a := range tmpl.Resources("AWS::CloudWatch::Alarm") {
				p := props(a)
				name := aid
				if n, ok := p["AlarmName"].(string); ok {
					name = n
				}
				alarmARN := iameval.ARN(deployEnv, "cloudwatch", "alarm:"+name)
				for _, key := range []string{"AlarmActions", "OKActions"} {
					actions, _ := p[key].([]any)
					for _, act := range actions {
						ref, _ := act.(map[string]any)
						topic := fmt.Sprint(ref["Ref"])
						assert.NoError(t, canNotify(tmpl, resources, topic, alarmARN), "%s alarm %s %s", where, aid, key)
						checked++
					}
				}
			}
		}
	}
	assert.GreaterOrEqual(t, checked, 100, "alarm actions evaluated; the app has hundreds")

}

// canNotify evaluates what CloudWatch needs to publish alarm alarmARN's
// notification to topic (a logical id): sns:Publish under the topic's
// policy, and kms:GenerateDataKey and kms:Decrypt under its key's policy.
func canNotify(tmpl cdkapp.Template, resources map[string]any, topic, alarmARN string) error {
	const cw = "cloudwatch.amazonaws.com"
	t, ok := tmpl.Resources("AWS::SNS::Topic")[topic]
	if !ok {
		return fmt.Errorf("action %s is not a topic of the stack", topic)
	}
	topicARN := iameval.ARN(deployEnv, "sns", topic)
	var policies []any
	for _, tp := range tmpl.Resources("AWS::SNS::TopicPolicy") {
		for _, ref := range list(props(tp)["Topics"]) {
			if ref["Ref"] == topic {
				doc, err := iameval.Resolve(props(tp)["PolicyDocument"], resources, deployEnv)
				if err != nil {
					return err
				}
				policies = append(policies, doc)
			}
		}
	}
	if len(policies) != 1 {
		return fmt.Errorf("topic %s has %d topic policies, want exactly one to evaluate", topic, len(policies))
	}
	ctx := map[string]string{"aws:SecureTransport": "true", "aws:SourceAccount": deployEnv.Account, "aws:SourceArn": alarmARN}
	other := iameval.Env{Partition: "aws", Region: deployEnv.Region, Account: "444455556666"}
	for _, c := range []struct {
		what string
		ctx  map[string]string
		want bool
	}{
		{"this account's alarm over TLS", ctx, true},
		{"without TLS", with(ctx, "aws:SecureTransport", "false"), false},
		{"for another account's alarm", with(with(ctx, "aws:SourceAccount", other.Account), "aws:SourceArn", iameval.ARN(other, "cloudwatch", "alarm:x")), false},
		{"for another region's alarm", with(ctx, "aws:SourceArn", strings.Replace(alarmARN, deployEnv.Region, "us-east-1", 1)), false},
	} {
		d, err := iameval.Evaluate(policies[0], iameval.Request{Service: cw, Action: "sns:Publish", Resource: topicARN, Context: c.ctx})
		if err != nil {
			return fmt.Errorf("topic policy of %s: %w", topic, err)
		}
		if (d == iameval.Allow) != c.want {
			return fmt.Errorf("topic policy of %s: CloudWatch's sns:Publish %s: %v", topic, c.what, d)
		}
	}
	keyRef, _ := props(t)["KmsMasterKeyId"].(map[string]any)
	att, _ := keyRef["Fn::GetAtt"].([]any)
	if len(att) != 2 {
		return fmt.Errorf("topic %s: KmsMasterKeyId %v is not a key of the stack (CloudWatch cannot use aws/sns)", topic, props(t)["KmsMasterKeyId"])
	}
	keyID := fmt.Sprint(att[0])
	key, ok := tmpl.Resources("AWS::KMS::Key")[keyID]
	if !ok {
		return fmt.Errorf("topic %s: key %s is not in the stack", topic, keyID)
	}
	doc, err := iameval.Resolve(props(key)["KeyPolicy"], resources, deployEnv)
	if err != nil {
		return err
	}
	for _, action := range []string{"kms:GenerateDataKey", "kms:Decrypt"} {
		d, err := iameval.Evaluate(doc, iameval.Request{Service: cw, Action: action, Resource: iameval.ARN(deployEnv, "kms", "key/"+keyID), Context: ctx})
		if err != nil {
			return fmt.Errorf("key policy of %s: %w", keyID, err)
		}
		if d != iameval.Allow {
			return fmt.Errorf("key policy of %s: CloudWatch's %s: %v", keyID, action, d)
		}
	}
	return nil
}

func with(ctx map[string]string, k, v string) map[string]string {
	out := map[string]string{}
	for a, b := range ctx {
		out[a] = b
	}
	out[k] = v
	return out
}
