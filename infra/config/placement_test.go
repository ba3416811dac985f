package config_test

import (
	"strings"
	"testing"

	"github.com/dynastack/dynastack/constructs/table"
	"github.com/dynastack/dynastack/infra/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlacements: a service's own account and Region are checked on every
// synth (ValidateGuardrails), and a placed service takes the stage's value
// for what it leaves empty.
func TestPlacements(t *testing.T) {
	base := config.Stage{Name: table.Dev}
	for _, tt := range []struct {
		name     string
		stage    func(config.Stage) config.Stage
		wantErrs []string
	}{
		{"none", func(s config.Stage) config.Stage { return s }, nil},
		{"itsm in us-east-1 of A, agenticpm in Sydney of B", func(s config.Stage) config.Stage {
			s.Services = map[string]config.Placement{"itsm": {Account: "111111111111", Region: config.ITSMDocumentRegion}, "agenticpm": {Account: "222222222222", Region: "ap-southeast-2"}}
			return s
		}, nil},
		{"GovCloud in its partition", func(s config.Stage) config.Stage {
			s.Partition = "aws-us-gov"
			s.Services = map[string]config.Placement{"itsm": {Region: "us-gov-west-1"}}
			return s
		}, nil},
		{"unknown service", func(s config.Stage) config.Stage {
			s.Services = map[string]config.Placement{"tickets": {Region: "us-east-1"}}
			return s
		}, []string{`Services key "tickets": use a service's name, one of rezagent, nucleus, stak, itsm, agenticpm`}},
		{"short account", func(s config.Stage) config.Stage {
			s.Services = map[string]config.Placement{"itsm": {Account: "12345"}}
			return s
		}, []string{`Services["itsm"].Account "12345" is not a 12-digit AWS account id`}},
		{"not a Region", func(s config.Stage) config.Stage {
			s.Services = map[string]config.Placement{"stak": {Region: "Sydney"}}
			return s
		}, []string{`Services["stak"].Region "Sydney" is not a Region of partition aws`}},
		{"China Region in the commercial partition", func(s config.Stage) config.Stage {
			s.Services = map[string]config.Placement{"stak": {Region: "cn-north-1"}}
			return s
		}, []string{`Services["stak"].Region "cn-north-1" is not a Region of partition aws`}},
		{"empty entry", func(s config.Stage) config.Stage {
			s.Services = map[string]config.Placement{"nucleus": {}}
			return s
		}, []string{`Services["nucleus"] sets neither Account nor Region`}},
		{"unknown partition", func(s config.Stage) config.Stage {
			s.Partition = "aws-iso"
			return s
		}, []string{`Partition "aws-iso": use one of aws, aws-cn, aws-us-gov`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.stage(base).ValidateGuardrails()
			if tt.wantErrs == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tt.wantErrs {
				assert.Contains(t, err.Error(), w)
			}
		})
	}

	s := config.Stage{Name: table.Prod, Account: "123456789012", Region: "eu-central-1",
		Services: map[string]config.Placement{"itsm": {Region: config.ITSMDocumentRegion}, "agenticpm": {Account: "222222222222", Region: "ap-southeast-2"}}}
	assert.Equal(t, config.Placement{Account: "123456789012", Region: "us-east-1"}, s.PlacementOf("itsm"), "itsm: the stage's account, its own Region")
	assert.Equal(t, config.Placement{Account: "222222222222", Region: "ap-southeast-2"}, s.PlacementOf("agenticpm"), "agenticpm: its own")
	assert.Equal(t, config.Placement{Account: "123456789012", Region: "eu-central-1"}, s.PlacementOf("stak"), "stak: the stage's")
	assert.True(t, s.Placed("itsm"), "itsm placed")
	assert.False(t, s.Placed("stak"), "stak not placed")
}

// TestPreflightPerService: a deploy needs an account and a Region for every
// service, from the stage or its own entry; one line names the services
// still missing one.
func TestPreflightPerService(t *testing.T) {
	s := config.Stage{Name: table.Prod,
		StakTokens: config.StakTokens{Issuer: "https://login.acme.io/", Audience: "stak-web"},
		Alarms:     config.AlarmSubscribers{Emails: []string{"oncall@acme.io"}},
		RezAgent:   config.RezAgentPipeline{NtfyURL: "https://ntfy.acme.io", NtfyTokenParameter: "/rez-agent/prod/ntfy-token"},
		Services:   map[string]config.Placement{"itsm": {Account: "111111111111", Region: "us-east-1"}, "agenticpm": {Account: "222222222222", Region: "ap-southeast-2"}}}
	got := s.DeployProblems()
	require.Len(t, got, 2, "problems:\n%s", strings.Join(got, "\n"))
	assert.Contains(t, got[0], "Account is not set for rezagent, nucleus, stak")
	assert.Contains(t, got[1], "Region is not set for rezagent, nucleus, stak")
	for _, svc := range []string{"rezagent", "nucleus", "stak"} {
		s.Services[svc] = config.Placement{Account: "333333333333", Region: "eu-west-1"}
	}
	assert.Empty(t, s.DeployProblems(), "every service placed: the stage needs no account of its own")
}
