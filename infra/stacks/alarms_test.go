package stacks

import (
	"encoding/json"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/cdktest"
	"github.com/dynastack/dynastack/infra/config"
	"github.com/dynastack/dynastack/infra/secretscan"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSubscribeEndpointSecrets: a webhook named by a Secrets Manager
// secret is an HTTPS subscription whose endpoint is the dynamic
// reference, and the template holds nothing the secret scanner finds;
// plain endpoints and emails are subscribed as before.
func TestSubscribeEndpointSecrets(t *testing.T) {
	stack := cdktest.NewStack(t)
	topic := awssns.NewTopic(stack, jsii.String("Alarms"), nil)
	subscribe(topic, config.AlarmSubscribers{
		Emails:               []string{"oncall@acme.io"},
		HTTPSEndpoints:       []string{"https://alerts.acme.io/sns"},
		HTTPSEndpointSecrets: []string{"dynastack/prod/alarm-webhook", "arn:aws:secretsmanager:eu-central-1:111122223333:secret:pager-AbCdEf"},
	})
	tmpl := cdktest.JSON(t, stack)
	var got []string
	for _, r := range tmpl["Resources"].(map[string]any) {
		r := r.(map[string]any)
		if r["Type"] != "AWS::SNS::Subscription" {
			continue
		}
		p := r["Properties"].(map[string]any)
		got = append(got, p["Protocol"].(string)+" "+p["Endpoint"].(string))
	}
	assert.ElementsMatch(t, []string{
		"email oncall@acme.io",
		"https https://alerts.acme.io/sns",
		"https {{resolve:secretsmanager:dynastack/prod/alarm-webhook:SecretString:::}}",
		"https {{resolve:secretsmanager:arn:aws:secretsmanager:eu-central-1:111122223333:secret:pager-AbCdEf:SecretString:::}}",
	}, got, "subscriptions")
	raw, err := json.Marshal(tmpl)
	require.NoError(t, err)
	var parsed map[string]any
	require.NoError(t, json.Unmarshal(raw, &parsed))
	assert.Empty(t, secretscan.Template(parsed), "secret-looking values in the template")
}
