package config_test

import (
	"strings"
	"testing"

	itsmcontract "github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/constructs/service"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/constructs/table"
	"github.com/dynastack/dynastack/infra/config"
)

func TestStages(t *testing.T) {
	var names []string
	for _, s := range config.Stages() {
		names = append(names, string(s.Name))
		if s.TerminationProtection != (s.Name == table.Prod) {
			t.Errorf("%s: termination protection %v, want it in prod only", s.Name, s.TerminationProtection)
		}
		if s.Account != "" || s.Region != "" {
			t.Errorf("%s: pinned to %s/%s; stages stay environment-agnostic so synth runs offline", s.Name, s.Account, s.Region)
		}
	}
	if got := strings.Join(names, ","); got != "dev,stage,prod" {
		t.Errorf("stages %s, want dev,stage,prod", got)
	}
}

func TestLookup(t *testing.T) {
	if s, err := config.Lookup("prod"); err != nil || s.Name != table.Prod {
		t.Errorf("Lookup(prod) = %v, %v", s.Name, err)
	}
	if _, err := config.Lookup("production"); err == nil || !strings.Contains(err.Error(), `unknown stage "production": use one of dev, stage, prod`) {
		t.Errorf("Lookup(production) = %v", err)
	}
}

func TestOverrides(t *testing.T) {
	on := true
	s := config.Stage{Name: table.Dev, Tables: map[string]table.Overrides{config.TableKey("itsm", "Tickets"): {PointInTimeRecovery: &on}}}
	if o := s.Overrides("itsm", "Tickets"); o.PointInTimeRecovery == nil || !*o.PointInTimeRecovery {
		t.Errorf("override not found: %+v", o)
	}
	if o := s.Overrides("itsm", "Other"); o.PointInTimeRecovery != nil {
		t.Errorf("override leaked to another table: %+v", o)
	}
}

func TestGuardrails(t *testing.T) {
	total := 0
	for _, s := range config.Stages() {
		if err := s.ValidateGuardrails(); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
		total += s.ReservedTotal()
	}
	// Every stage in one account must still leave Lambda its unreserved
	// floor.
	if limit := config.AccountConcurrency - config.UnreservedFloor; total > limit {
		t.Errorf("the stages reserve %d concurrent executions together; one account allows %d", total, limit)
	}
	if got := (config.Stage{Name: table.Dev}).Concurrency(stakcontract.StreamConsumer); got != config.StreamReservedConcurrency {
		t.Errorf("stak-stream reserves %d, want %d", got, config.StreamReservedConcurrency)
	}
	if got := (config.Stage{Name: table.Dev, ReservedConcurrency: map[string]int{"itsm": 0}}).Concurrency(itsmcontract.API); got != 0 {
		t.Errorf("an override to 0 reserves %d", got)
	}
	if got := (config.Stage{Name: table.Dev}).Concurrency(service.Function{Name: "some-new-worker"}); got != config.DefaultReservedConcurrency {
		t.Errorf("a function of no known kind reserves %d, want %d", got, config.DefaultReservedConcurrency)
	}
	// 5 APIs × 25, the stream consumer 5, the processor 5, 3 jobs × 2.
	if got := (config.Stage{Name: table.Dev}).ReservedTotal(); got != 141 {
		t.Errorf("a stage reserves %d, want 141 (the sum documented in guardrails.go)", got)
	}

	bad := []struct {
		stage config.Stage
		want  string
	}{
		{config.Stage{Name: table.Prod}, "stage prod: Alarms has no subscriber, so its alarms would notify nobody"},
		{config.Stage{Name: table.Dev, Alarms: config.AlarmSubscribers{Emails: []string{"Ops <ops@example.com>"}}}, `alarm email "Ops <ops@example.com>": write a bare address`},
		{config.Stage{Name: table.Dev, Alarms: config.AlarmSubscribers{HTTPSEndpoints: []string{"http://hooks.example.com/x"}}}, `alarm endpoint "http://hooks.example.com/x": use an https:// URL`},
		{config.Stage{Name: table.Dev, ReservedConcurrency: map[string]int{"itsm": 901}}, `ReservedConcurrency["itsm"]=901: use 1 to 900`},
		{config.Stage{Name: table.Dev, ReservedConcurrency: map[string]int{"itsm": -1}}, `ReservedConcurrency["itsm"]=-1`},
		{config.Stage{Name: table.Dev, ReservedConcurrency: map[string]int{"stak_stream": 3}}, `ReservedConcurrency key "stak_stream": use a function's name from its service contract, one of rezagent, rezagent-scheduler`},
	}
	for _, tt := range bad {
		if err := tt.stage.ValidateGuardrails(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ValidateGuardrails() = %v, want %q", err, tt.want)
		}
	}
}

func TestTableNames(t *testing.T) {
	s := config.Stage{Name: table.Prod, Alarms: config.AlarmSubscribers{Emails: []string{"ops@example.com"}},
		TableNames: map[string]string{config.TableKey("itsm", "Tickets"): "poc-itsm-tickets"}}
	if err := s.ValidateGuardrails(); err != nil {
		t.Fatalf("a valid override is refused: %v", err)
	}
	if got := s.TableName("itsm", "Tickets"); got != "poc-itsm-tickets" {
		t.Errorf("TableName(itsm, Tickets) = %q", got)
	}
	if got := s.TableName("nucleus", "App"); got != "" {
		t.Errorf("an override leaked to another table: %q", got)
	}
	for _, s := range config.Stages() {
		if len(s.TableNames) != 0 {
			t.Errorf("%s: TableNames %v: the committed stages keep today's names (golden files); a team sets its own when it adopts a table", s.Name, s.TableNames)
		}
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
		if err := s.ValidateGuardrails(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ValidateGuardrails() = %v, want %q", err, tt.want)
		}
	}
}
