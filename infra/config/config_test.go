package config_test

import (
	"testing"

	itsmcontract "github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/constructs/service"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/constructs/table"
	"github.com/dynastack/dynastack/infra/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStages(t *testing.T) {
	var names []string
	for _, s := range config.Stages() {
		names = append(names, string(s.Name))
		assert.Equal(t, s.Name == table.Prod, s.TerminationProtection, "%s: termination protection, want it in prod only", s.Name)
		assert.Empty(t, s.Account, "%s: pinned to an account; stages stay environment-agnostic so synth runs offline", s.Name)
		assert.Empty(t, s.Region, "%s: pinned to a region; stages stay environment-agnostic so synth runs offline", s.Name)
	}
	assert.Equal(t, []string{"dev", "stage", "prod"}, names, "stages")
}

func TestLookup(t *testing.T) {
	s, err := config.Lookup("prod")
	if assert.NoError(t, err, "Lookup(prod)") {
		assert.Equal(t, table.Prod, s.Name, "Lookup(prod)")
	}
	_, err = config.Lookup("production")
	assert.ErrorContains(t, err, `unknown stage "production": use one of dev, stage, prod`, "Lookup(production)")
}

func TestOverrides(t *testing.T) {
	on := true
	s := config.Stage{Name: table.Dev, Tables: map[string]table.Overrides{config.TableKey("itsm", "Tickets"): {PointInTimeRecovery: &on}}}
	o := s.Overrides("itsm", "Tickets")
	if assert.NotNil(t, o.PointInTimeRecovery, "override not found: %+v", o) {
		assert.True(t, *o.PointInTimeRecovery, "override not found: %+v", o)
	}
	assert.Nil(t, s.Overrides("itsm", "Other").PointInTimeRecovery, "override leaked to another table")
}

func TestGuardrails(t *testing.T) {
	total := 0
	for _, s := range config.Stages() {
		assert.NoError(t, s.ValidateGuardrails(), "%s", s.Name)
		total += s.ReservedTotal()
	}
	// Every stage in one account must still leave Lambda its unreserved
	// floor.
	assert.LessOrEqual(t, total, config.AccountConcurrency-config.UnreservedFloor, "the stages reserve more concurrent executions together than one account allows")
	assert.Equal(t, config.StreamReservedConcurrency, (config.Stage{Name: table.Dev}).Concurrency(stakcontract.StreamConsumer), "stak-stream reserves")
	assert.Zero(t, (config.Stage{Name: table.Dev, ReservedConcurrency: map[string]int{"itsm": 0}}).Concurrency(itsmcontract.API), "an override to 0 reserves")
	assert.Equal(t, config.DefaultReservedConcurrency, (config.Stage{Name: table.Dev}).Concurrency(service.Function{Name: "some-new-worker"}), "a function of no known kind reserves")
	// 5 APIs × 25, the stream consumer 5, the processor 5, 4 jobs × 2.
	assert.Equal(t, 193, (config.Stage{Name: table.Dev}).ReservedTotal(), "a stage reserves (the sum documented in guardrails.go)")

	bad := []struct {
		stage config.Stage
		want  string
	}{
		{config.Stage{Name: table.Prod}, "stage prod: Alarms has no subscriber, so its alarms would notify nobody"},
		{config.Stage{Name: table.Dev, Alarms: config.AlarmSubscribers{Emails: []string{"Ops <ops@example.com>"}}}, `alarm email "Ops <ops@example.com>": write a bare address`},
		{config.Stage{Name: table.Dev, Alarms: config.AlarmSubscribers{HTTPSEndpoints: []string{"http://hooks.example.com/x"}}}, `alarm endpoint "http://hooks.example.com/x" (Alarms.HTTPSEndpoints[0]): use an https:// URL`},
		{config.Stage{Name: table.Dev, Alarms: config.AlarmSubscribers{HTTPSEndpoints: []string{"http://oncall:hunter2@hooks.example.com/x"}}}, `alarm endpoint http://hooks.example.com/… (Alarms.HTTPSEndpoints[0]): use an https:// URL`},
		{config.Stage{Name: table.Dev, Alarms: config.AlarmSubscribers{HTTPSEndpointSecrets: []string{"alarm webhook"}}}, `Alarms.HTTPSEndpointSecrets[0] "alarm webhook": use the name (or ARN) of the Secrets Manager secret`},
		{config.Stage{Name: table.Dev, ReservedConcurrency: map[string]int{"itsm": 901}}, `ReservedConcurrency["itsm"]=901: use 1 to 900`},
		{config.Stage{Name: table.Dev, ReservedConcurrency: map[string]int{"itsm": -1}}, `ReservedConcurrency["itsm"]=-1`},
		{config.Stage{Name: table.Dev, ReservedConcurrency: map[string]int{"stak_stream": 3}}, `ReservedConcurrency key "stak_stream": use a function's name from its service contract, one of rezagent, rezagent-scheduler`},
	}
	for _, tt := range bad {
		err := tt.stage.ValidateGuardrails()
		assert.ErrorContains(t, err, tt.want, "ValidateGuardrails()")
		if err != nil {
			assert.NotContains(t, err.Error(), "hunter2", "ValidateGuardrails() repeats a credential")
		}
	}
}

// TestAlarmEndpointSecrets: outside dev, an alarm endpoint that carries
// a credential is refused as a literal, naming the entry, why and the fix
// (a Secrets Manager secret in HTTPSEndpointSecrets), never the secret;
// endpoints that are no secret, and secrets by name, are accepted.
func TestAlarmEndpointSecrets(t *testing.T) {
	const fix = "store the URL as a Secrets Manager secret (aws secretsmanager create-secret --name dynastack/prod/alarm-webhook --secret-string <URL>) and name it in Alarms.HTTPSEndpointSecrets instead"
	for _, tt := range []struct {
		name, url, want, secret string
	}{
		{"user information", "https://oncall:hunter2@alerts.acme.io/sns", "Alarms.HTTPSEndpoints[1] (https://alerts.acme.io/…) carries a credential, user information (user:password@)", "hunter2"},
		{"token in the query", "https://alerts.acme.io/sns?token=hunter2", "Alarms.HTTPSEndpoints[1] (https://alerts.acme.io/…) carries a credential, a credential in the query (token=…)", "hunter2"},
		{"Slack", "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", "Alarms.HTTPSEndpoints[1] (https://hooks.slack.com/…) carries a credential, a Slack webhook URL, whose path is its secret", "XXXXXXXX"},
		{"Teams", "https://acme.webhook.office.com/webhookb2/0000@0000/IncomingWebhook/hunter2/0000", "a Microsoft Teams webhook URL, whose path is its secret", "hunter2"},
		{"Power Automate", "https://prod-01.westeurope.logic.azure.com:443/workflows/1/triggers/manual/paths/invoke?api-version=2016-06-01&sig=hunter2", "a credential in the query (sig=…)", "hunter2"},
		{"token in the path", "https://alerts.acme.io/hook/a4733f0f2da693eb99826bfdea938f51", "a random-looking path segment", "a4733f0f"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			alarms := config.AlarmSubscribers{HTTPSEndpoints: []string{"https://alerts.acme.io/sns", tt.url}}
			for _, stage := range []table.Stage{table.Stg, table.Prod} {
				s, err := config.Lookup(string(stage))
				require.NoError(t, err)
				s.Alarms = alarms
				err = s.ValidateGuardrails()
				require.ErrorContains(t, err, "stage "+string(stage)+": ", "%s: ValidateGuardrails()", stage)
				assert.ErrorContains(t, err, tt.want, "%s: ValidateGuardrails()", stage)
				assert.NotContains(t, err.Error(), tt.secret, "%s: the refusal repeats the secret", stage)
				if stage == table.Prod {
					assert.ErrorContains(t, err, fix, "%s: ValidateGuardrails()", stage)
				}
			}
			assert.NoError(t, config.Stage{Name: table.Dev, Alarms: alarms}.ValidateGuardrails(), "dev: literals are dev's own business")
		})
	}
	prod, err := config.Lookup(string(table.Prod))
	require.NoError(t, err)
	for _, a := range []config.AlarmSubscribers{
		{HTTPSEndpoints: []string{"https://alerts.acme.io/sns", "https://alerts.acme.io/sns?format=json"}},
		{HTTPSEndpointSecrets: []string{"dynastack/prod/alarm-webhook"}},
		{HTTPSEndpointSecrets: []string{"arn:aws:secretsmanager:eu-central-1:111122223333:secret:pager-AbCdEf"}},
	} {
		prod.Alarms = a
		assert.NoError(t, prod.ValidateGuardrails(), "prod with %+v", a)
	}
}

func TestTableNames(t *testing.T) {
	prod, err := config.Lookup("prod")
	require.NoError(t, err, "Lookup(prod)")
	s := config.Stage{Name: table.Prod, Alarms: config.AlarmSubscribers{Emails: []string{"ops@example.com"}}, Backup: prod.Backup,
		TableNames: map[string]string{config.TableKey("itsm", "Tickets"): "poc-itsm-tickets"}}
	require.NoError(t, s.ValidateGuardrails(), "a valid override is refused")
	assert.Equal(t, "poc-itsm-tickets", s.TableName("itsm", "Tickets"), "TableName(itsm, Tickets)")
	assert.Empty(t, s.TableName("nucleus", "App"), "an override leaked to another table")
	for _, s := range config.Stages() {
		assert.Empty(t, s.TableNames, "%s: the committed stages keep today's names (golden files); a team sets its own when it adopts a table", s.Name)
	}
	bad := []struct {
		names map[string]string
		want  string
	}{
		{map[string]string{"itsm/Tickets": "poc itsm"}, `TableNames["itsm/Tickets"] = "poc itsm": use the live table's exact name`},
		{map[string]string{"itsm/Tickets": "ab"}, `TableNames["itsm/Tickets"] = "ab"`},
		{map[string]string{"Tickets": "poc-itsm-tickets"}, `TableNames key "Tickets": write service/construct id (config.TableKey), e.g. "itsm/Tickets"; services: rezagent, nucleus, stak, itsm, agenticpm`},
		{map[string]string{"helpdesk/Tickets": "poc-itsm-tickets"}, `TableNames key "helpdesk/Tickets"`},
		{map[string]string{"nucleus/App": "shared", "nucleus/Audit": "shared"}, `TableNames["nucleus/App"] and TableNames["nucleus/Audit"] both name "shared"`},
	}
	for _, tt := range bad {
		s := config.Stage{Name: table.Dev, TableNames: tt.names}
		assert.ErrorContains(t, s.ValidateGuardrails(), tt.want, "ValidateGuardrails()")
	}
}
