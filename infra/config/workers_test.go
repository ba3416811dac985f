package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/dynastack/dynastack/infra/config"
)

func TestRezAgentPipelineDefaults(t *testing.T) {
	p := config.RezAgentPipeline{}.WithDefaults("prod")
	if p.Schedule.Expression != config.DefaultRezAgentSchedule || p.Schedule.Zone() != "UTC" || p.NtfyURL != "https://ntfy.sh" || p.NtfyTopic != "rez-agent-prod" ||
		p.MaxReceiveCount != 5 || p.BatchSize != 10 || p.MaxConcurrency != 5 || p.RepublishAfter != 5*time.Minute {
		t.Fatalf("defaults %+v", p)
	}
	for _, s := range config.Stages() {
		if err := s.RezAgent.WithDefaults(string(s.Name)).Validate(); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
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
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	ok := config.RezAgentPipeline{NtfyURL: "http://127.0.0.1:8080", Schedule: config.Schedule{Expression: "cron(0 9 ? * MON-FRI *)", TimeZone: "Europe/Berlin"},
		NtfyTokenParameter: "/rez-agent/prod/ntfy-token"}.WithDefaults("dev")
	if err := ok.Validate(); err != nil {
		t.Fatalf("loopback http, cron with zone, token parameter: %v", err)
	}
}

func TestNucleusExecutor(t *testing.T) {
	e := config.NucleusExecutor{}.WithDefaults()
	if e.Schedule.Expression != config.DefaultNucleusSchedule || e.LookBack != time.Hour || e.RoleNamePattern != "nucleus-executor-*" {
		t.Fatalf("defaults %+v", e)
	}
	for _, s := range config.Stages() {
		if err := s.Nucleus.WithDefaults().Validate(); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
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
			if err := e.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}
