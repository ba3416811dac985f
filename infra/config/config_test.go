package config_test

import (
	"strings"
	"testing"

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
