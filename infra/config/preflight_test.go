package config_test

import (
	"strings"
	"testing"

	"github.com/dynastack/dynastack/constructs/table"
	"github.com/dynastack/dynastack/infra/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeployProblems: the committed stage and prod are placeholders (so
// synth and tests run offline), each setting named once with where to set
// it; dev has none; a stage configured for real has none.
func TestDeployProblems(t *testing.T) {
	want := []string{
		"Account is not set",
		"Region is not set",
		"StakTokens.Issuer is the placeholder https://auth.%s.stak.dynastack.example/",
		"StakTokens.Audience is the default stak-%s",
		"alarm email dynastack-oncall@example.com is a placeholder",
		"RezAgent.NtfyURL is unset, so notifications go to the public server https://ntfy.sh",
		"RezAgent.NtfyTokenParameter is unset, so anyone who knows the default topic rez-agent-%s can read and post the stage's notifications: create an ntfy access token",
	}
	for _, s := range config.Stages() {
		got := s.DeployProblems()
		if s.Name == table.Dev {
			assert.Empty(t, got, "dev: want none (dev deploys with the local defaults)")
			continue
		}
		require.Len(t, got, len(want), "%s: problems:\n%s", s.Name, strings.Join(got, "\n"))
		for i, w := range want {
			w = strings.ReplaceAll(w, "%s", string(s.Name))
			assert.True(t, strings.HasPrefix(got[i], "stage "+string(s.Name)+": "+w), "%s: line %d = %q\nwant %q", s.Name, i+1, got[i], w)
			assert.Contains(t, got[i], "in infra/config/config.go (Stages(), stage "+string(s.Name), "%s: line %d: want where to set it", s.Name, i+1)
		}
	}

	real := config.Stage{Name: table.Prod, Account: "123456789012", Region: "eu-central-1",
		StakTokens: config.StakTokens{Issuer: "https://login.acme.io/", Audience: "stak-web"},
		Alarms:     config.AlarmSubscribers{Emails: []string{"oncall@acme.io"}, HTTPSEndpoints: []string{"https://hooks.acme.io/x"}},
		RezAgent:   config.RezAgentPipeline{NtfyURL: "https://ntfy.acme.io", NtfyTopic: "rez-agent-alerts", NtfyTokenParameter: "/rez-agent/prod/ntfy-token"}}
	assert.Empty(t, real.DeployProblems(), "a configured prod")
	token := real
	token.RezAgent = config.RezAgentPipeline{NtfyURL: "https://ntfy.sh", NtfyTokenParameter: "/rez-agent/prod/ntfy-token"}
	assert.Empty(t, token.DeployProblems(), "the public server chosen on purpose, with a token")
	secrets := real
	secrets.Alarms = config.AlarmSubscribers{HTTPSEndpointSecrets: []string{"dynastack/prod/alarm-webhook"}}
	assert.Empty(t, secrets.DeployProblems(), "alarms through a webhook held by Secrets Manager")

	for _, tt := range []struct {
		change func(*config.Stage)
		want   string
	}{
		{func(s *config.Stage) { s.Account = "12345" }, `Account "12345" is not a 12-digit AWS account id`},
		{func(s *config.Stage) { s.Region = "Frankfurt" }, `Region "Frankfurt" is not an AWS Region name`},
		{func(s *config.Stage) { s.StakTokens.Issuer = "https://idp.example.com/" }, "StakTokens.Issuer is the placeholder https://idp.example.com/"},
		{func(s *config.Stage) { s.Alarms.HTTPSEndpoints = []string{"https://hooks.test/x"} }, "alarm endpoint https://hooks.test/x is a placeholder"},
		{func(s *config.Stage) { s.RezAgent.NtfyURL = "https://ntfy.invalid" }, "RezAgent.NtfyURL https://ntfy.invalid is a placeholder"},
		// The topic is no secret: an unguessable one is no remedy, and the
		// line does not repeat it.
		{func(s *config.Stage) {
			s.RezAgent.NtfyTopic, s.RezAgent.NtfyTokenParameter = "rez-prod-4f9c2e8a7b6d5c4e", ""
		},
			"RezAgent.NtfyTokenParameter is unset and RezAgent.NtfyTopic (its value not repeated here) is no protection: a topic name is committed in infra/config, copied into the template and left in the processor's environment"},
		{func(s *config.Stage) { s.RezAgent.NtfyTokenParameter = "" }, "aws ssm put-parameter --type SecureString --name /rez-agent/prod/ntfy-token"},
		{func(s *config.Stage) {
			s.Alarms.HTTPSEndpoints = []string{"https://oncall:hunter2@alerts.example.com/sns"}
		},
			"alarm endpoint https://alerts.example.com/… is a placeholder"},
	} {
		s := real
		tt.change(&s)
		got := s.DeployProblems()
		if assert.Len(t, got, 1, "DeployProblems(): want one line with %q", tt.want) {
			assert.Contains(t, got[0], tt.want, "DeployProblems()")
			for _, secret := range []string{"4f9c2e8a7b6d5c4e", "hunter2"} {
				assert.NotContains(t, got[0], secret, "DeployProblems() repeats a value that may be a secret")
			}
		}
	}
}
