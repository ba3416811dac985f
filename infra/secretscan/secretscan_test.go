package secretscan_test

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/infra/secretscan"
)

// Planted values: fakes shaped like the real thing (documentation
// examples where a vendor publishes one).
var (
	jwt = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"smoke-user","tenant":"smoke"}`)) + ".c2lnbmF0dXJlLW9mLWEtcGxhbnRlZC10b2tlbg"
	// A SHA-256 of an asset, as CDK names its zip.
	assetHash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	slackHook = "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
)

// TestFind: every planted kind is found, named; configuration values of
// the templates and of infra/config are not.
func TestFind(t *testing.T) {
	for _, tt := range []struct{ value, want string }{
		{jwt, "a JWT"},
		{"eyJ" + base64.RawURLEncoding.EncodeToString([]byte(`"kid":"k1","alg":"RS256"}`)), "a base64 JSON token (eyJ…)"},
		{"Authorization: Bearer 0d9e1f3c5a7b9d1e3f5a7c9e", "a bearer token"},
		{"tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2", "an ntfy access token (tk_…)"},
		{"AKIAIOSFODNN7EXAMPLE", "an AWS access key id"},
		{"key ASIAY34FZKBOKMUTVV7A in a sentence", "an AWS access key id"},
		{"https://oncall:hunter2@alerts.acme.io/sns", "a URL with user information (user:password@)"},
		{"https://ghp_abc123@github.com/acme/x", "a URL with user information (user:password@)"},
		{"https://alerts.acme.io/sns?token=abc", "a URL with a credential in its query"},
		{"https://api.opsgenie.com/v1/json/cloudwatch?apiKey=abc", "a URL with a credential in its query"},
		{"https://prod-01.westeurope.logic.azure.com:443/workflows/1/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers&sv=1.0&sig=abc", "a URL with a credential in its query"},
		{"https://bucket.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=abc", "a URL with a credential in its query"},
		{slackHook, "a Slack webhook URL"},
		{"https://discord.com/api/webhooks/123456789/abcDEF_ghi", "a Discord webhook URL"},
		{"https://acme.webhook.office.com/webhookb2/0000@0000/IncomingWebhook/abc/0000", "a Microsoft Teams webhook URL"},
		{"https://events.pagerduty.com/integration/0123abcd/enqueue", "a PagerDuty integration URL"},
		{"https://hooks.zapier.com/hooks/catch/123/abcxyz/", "a Zapier webhook URL"},
		{"https://maker.ifttt.com/trigger/alarm/with/key/abcXYZ", "an IFTTT webhook URL"},
		{"a4733f0f2da693eb99826bfdea938f51", "a random-looking string"},
		{assetHash, "a random-looking string"},
		{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "a random-looking string"},
		{"xqm5iwm0eyjicasxeym5gojz7za61", "a random-looking string"},
		{"sk_live_4eC39HqLyjWDarjtT1zdp7dc", "a random-looking string"},
		{"rez-agent-prod-_gOc9V6a45ADAn5CDyPw", "a random-looking string"},
	} {
		assert.Equal(t, tt.want, secretscan.Find(tt.value), "Find(%.24s…)", tt.value)
	}
	for _, v := range []string{
		"", "rez-agent-prod", "https://ntfy.sh", "message_type-created_date-index", "5m0s", "1h0m0s",
		"arn:aws:iam::123456789012:role/nucleus-executor-*", "/cdk-bootstrap/hnb659fds/version",
		"cdk-hnb659fds-assets-123456789012-us-east-1", "alias/agenticpm-credentials-prod",
		"cron(0 9 * * ? *)", "dynastack-oncall@example.com", "https://auth.prod.stak.dynastack.example/",
		"https://hooks.acme.io/x", "https://events.pagerduty.com/", "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
		"/rez-agent/prod/ntfy-token", "nucleus-executor-lookback-2024", "MessageTypeCreatedDateIndex2",
		"dynastack alarms rezagent-prod", "^[-_A-Za-z0-9]{1,64}$", "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
	} {
		assert.Empty(t, secretscan.Find(v), "Find(%q): not a secret", v)
	}
}

// TestURL: why a subscription or server URL carries a credential, without
// repeating it; plain endpoints carry none.
func TestURL(t *testing.T) {
	for _, tt := range []struct{ url, want string }{
		{"https://oncall:hunter2@alerts.acme.io/sns", "user information (user:password@)"},
		{"https://alerts.acme.io/sns?api_key=abc", "a credential in the query (api_key=…)"},
		{"https://alerts.acme.io/sns?auth=abc", "a credential in the query (auth=…)"},
		{"https://chat.googleapis.com/v1/spaces/AAA/messages?key=abc&token=def", "a credential in the query (key=…)"},
		{"https://alerts.acme.io/sns?channel=0d9e1f3c5a7b9d1e3f5a7c9e", "a random-looking query value (channel=…)"},
		{slackHook, "a Slack webhook URL, whose path is its secret"},
		{"https://events.pagerduty.com/integration/0123abcd/enqueue", "a PagerDuty integration URL, whose path is its secret"},
		{"https://alerts.acme.io/hook/a4733f0f2da693eb99826bfdea938f51", "a random-looking path segment (a token in the path)"},
	} {
		got := secretscan.URL(tt.url)
		assert.Equal(t, tt.want, got, "URL(%s)", tt.url)
		assert.NotContains(t, got, "hunter2", "the reason repeats the secret")
	}
	for _, u := range []string{"https://hooks.acme.io/x", "https://alerts.acme.io/sns?format=json", "https://ntfy.acme.io", "https://events.pagerduty.com/"} {
		assert.Empty(t, secretscan.URL(u), "URL(%s)", u)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"https://oncall:hunter2@alerts.acme.io/sns": "https://alerts.acme.io/…",
		slackHook:                      "https://hooks.slack.com/…",
		"https://ntfy.acme.io":         "https://ntfy.acme.io",
		"https://ntfy.acme.io/":        "https://ntfy.acme.io",
		"https://ntfy.acme.io?auth=x":  "https://ntfy.acme.io/…",
		"tk_AgQdq7mVBoFD37zQVN29RhuMz": "(a value of 28 characters)",
	} {
		assert.Equal(t, want, secretscan.Redact(in), "Redact(%s)", in)
	}
}

// TestTemplate: secrets planted in a template's environment variables,
// subscription endpoint, output and intrinsic function are found with
// their paths; the same random-looking values in the fields that hold
// logical ids and asset hashes are not (they are allowed by field, the
// detector is the same).
func TestTemplate(t *testing.T) {
	tmpl := map[string]any{
		"Resources": map[string]any{
			"Fn": map[string]any{"Type": "AWS::Lambda::Function", "Properties": map[string]any{
				"Code": map[string]any{"S3Bucket": "cdk-hnb659fds-assets-123456789012-us-east-1", "S3Key": assetHash + ".zip"},
				"Environment": map[string]any{"Variables": map[string]any{
					"NTFY_TOPIC":  "rez-agent-prod",
					"NTFY_TOKEN":  "tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2",
					"API_SECRET":  "0d9e1f3c5a7b9d1e3f5a7c9e",
					"CURSOR_KEY":  assetHash,
					"TABLE":       map[string]any{"Ref": "HandlerRoleDefaultPolicy0112C0A8"},
					"STAK_BEARER": map[string]any{"Fn::Join": []any{"", []any{"Bearer ", jwt}}},
				}},
			}, "DependsOn": []any{"HandlerRoleDefaultPolicy0112C0A8"},
				"Metadata": map[string]any{"aws:asset:path": "asset." + assetHash, "aws:cdk:path": "prod/rezagent/Processor/Resource"}},
			"Policy": map[string]any{"Type": "AWS::IAM::Policy", "Properties": map[string]any{"PolicyName": "HandlerRoleDefaultPolicy0112C0A8",
				"Roles": []any{map[string]any{"Ref": "HandlerRoleA4E5D2C1"}}}},
			"Hook": map[string]any{"Type": "AWS::SNS::Subscription", "Properties": map[string]any{"Protocol": "https", "Endpoint": slackHook,
				"TopicArn": map[string]any{"Fn::GetAtt": []any{"AlarmsTopicD5C0A2E8ABCDEF0123456789", "TopicArn"}}}},
		},
		"Outputs": map[string]any{"Url": map[string]any{"Value": "https://oncall:hunter2@alerts.acme.io/"}},
	}
	got := secretscan.Template(tmpl)
	var lines []string
	for _, f := range got {
		lines = append(lines, f.String())
		assert.NotContains(t, f.String(), "hunter2", "a finding repeats the secret")
	}
	assert.Equal(t, []string{
		"Outputs.Url.Value: a URL with user information (user:password@)",
		"Resources.Fn.Properties.Environment.Variables.API_SECRET: a random-looking string",
		"Resources.Fn.Properties.Environment.Variables.CURSOR_KEY: a random-looking string",
		"Resources.Fn.Properties.Environment.Variables.NTFY_TOKEN: an ntfy access token (tk_…)",
		"Resources.Fn.Properties.Environment.Variables.STAK_BEARER.Fn::Join[1][1]: a JWT",
		"Resources.Hook.Properties.Endpoint: a Slack webhook URL",
	}, lines, "findings")
	require.Empty(t, secretscan.Template(map[string]any{"Resources": map[string]any{}}), "an empty template")
}
