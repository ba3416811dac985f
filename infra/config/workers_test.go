package config_test

import (
	"testing"
	"time"

	"github.com/dynastack/dynastack/infra/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRezAgentPipelineDefaults(t *testing.T) {
	p := config.RezAgentPipeline{}.WithDefaults("prod")
	assert.Equal(t, config.DefaultRezAgentSchedule, p.Schedule.Expression, "default schedule")
	assert.Equal(t, "UTC", p.Schedule.Zone(), "default zone")
	assert.Equal(t, "https://ntfy.sh", p.NtfyURL, "default NtfyURL")
	assert.Equal(t, "rez-agent-prod", p.NtfyTopic, "default NtfyTopic")
	assert.Equal(t, 5, p.MaxReceiveCount, "default MaxReceiveCount")
	assert.Equal(t, 10, p.BatchSize, "default BatchSize")
	assert.Equal(t, 5, p.MaxConcurrency, "default MaxConcurrency")
	assert.Equal(t, 5*time.Minute, p.RepublishAfter, "default RepublishAfter")
	for _, s := range config.Stages() {
		assert.NoError(t, s.RezAgent.WithDefaults(string(s.Name)).Validate(), "%s", s.Name)
	}
}

// Every bad setting is refused with the value and the fix.
func TestRezAgentPipelineValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*config.RezAgentPipeline)
		want string
	}{
		{"rate unit", func(p *config.RezAgentPipeline) { p.Schedule.Expression = "rate(5 mins)" }, `schedule expression "rate(5 mins)": use rate(`},
		{"cron fields", func(p *config.RezAgentPipeline) { p.Schedule.Expression = "cron(0 9 * * *)" }, `"cron(0 9 * * *)"`},
		{"zone", func(p *config.RezAgentPipeline) { p.Schedule.TimeZone = "Mars/Olympus" }, `time zone "Mars/Olympus": use an IANA name`},
		{"plain http", func(p *config.RezAgentPipeline) { p.NtfyURL = "http://ntfy.example.com" }, `NtfyURL "http://ntfy.example.com": use the server's https:// root URL`},
		{"url with topic", func(p *config.RezAgentPipeline) { p.NtfyURL = "https://ntfy.sh/mytopic" }, `NtfyURL "https://ntfy.sh/mytopic"`},
		{"url with credentials", func(p *config.RezAgentPipeline) { p.NtfyURL = "https://rez:hunter2@ntfy.acme.io" },
			"RezAgent.NtfyURL (https://ntfy.acme.io/…) carries a credential, user information (user:password@); the value is not repeated here: use the server's bare https:// root URL, and give the access token as an SSM SecureString named by RezAgent.NtfyTokenParameter"},
		{"url with auth query", func(p *config.RezAgentPipeline) { p.NtfyURL = "https://ntfy.acme.io/?auth=hunter2" },
			"RezAgent.NtfyURL (https://ntfy.acme.io/…) carries a credential, a credential in the query (auth=…)"},
		{"topic", func(p *config.RezAgentPipeline) { p.NtfyTopic = "a/b" }, `NtfyTopic "a/b": use 1-64 letters`},
		{"token parameter", func(p *config.RezAgentPipeline) { p.NtfyTokenParameter = "ntfy-token" }, `NtfyTokenParameter "ntfy-token": use a fully qualified SSM parameter name`},
		{"receive count", func(p *config.RezAgentPipeline) { p.MaxReceiveCount = 50 }, "MaxReceiveCount 50: use 1 to 20"},
		{"batch", func(p *config.RezAgentPipeline) { p.BatchSize = 11 }, "BatchSize 11: use 1 to 10"},
		{"concurrency", func(p *config.RezAgentPipeline) { p.MaxConcurrency = 1 }, "MaxConcurrency 1: use 2 to 1000"},
		{"republish", func(p *config.RezAgentPipeline) { p.RepublishAfter = time.Second }, "RepublishAfter 1s: use 1m to 24h"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := config.RezAgentPipeline{}.WithDefaults("dev")
			tc.set(&p)
			err := p.Validate()
			require.ErrorContains(t, err, tc.want, "Validate()")
			assert.NotContains(t, err.Error(), "hunter2", "Validate() repeats a credential")
		})
	}
	ok := config.RezAgentPipeline{NtfyURL: "http://127.0.0.1:8080", Schedule: config.Schedule{Expression: "cron(0 9 ? * MON-FRI *)", TimeZone: "Europe/Berlin"},
		NtfyTokenParameter: "/rez-agent/prod/ntfy-token"}.WithDefaults("dev")
	require.NoError(t, ok.Validate(), "loopback http, cron with zone, token parameter")
}

func TestNucleusExecutor(t *testing.T) {
	e := config.NucleusExecutor{}.WithDefaults()
	assert.Equal(t, config.DefaultNucleusSchedule, e.Schedule.Expression, "default schedule")
	assert.Equal(t, time.Hour, e.LookBack, "default LookBack")
	assert.Equal(t, "nucleus-executor-*", e.RoleNamePattern, "default RoleNamePattern")
	for _, s := range config.Stages() {
		assert.NoError(t, s.Nucleus.WithDefaults().Validate(), "%s", s.Name)
	}
	for _, tc := range []struct {
		name string
		set  func(*config.NucleusExecutor)
		want string
	}{
		{"rate", func(e *config.NucleusExecutor) { e.Schedule.Expression = "every 5 minutes" }, `schedule expression "every 5 minutes"`},
		{"short look-back", func(e *config.NucleusExecutor) { e.LookBack = time.Second }, "LookBack 1s: use 1m"},
		{"look-back past retention", func(e *config.NucleusExecutor) { e.LookBack = 8 * 24 * time.Hour }, "LookBack 192h0m0s"},
		{"any role", func(e *config.NucleusExecutor) { e.RoleNamePattern = "*" }, `RoleNamePattern "*"`},
		{"role ARN", func(e *config.NucleusExecutor) { e.RoleNamePattern = "arn:aws:iam::*:role/x" }, `RoleNamePattern "arn:aws:iam::*:role/x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := config.NucleusExecutor{}.WithDefaults()
			tc.set(&e)
			require.ErrorContains(t, e.Validate(), tc.want, "Validate()")
		})
	}
}
