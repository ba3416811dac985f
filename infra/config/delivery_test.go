package config_test

import (
	"testing"

	"github.com/dynastack/dynastack/constructs/table"
	"github.com/dynastack/dynastack/infra/config"
	"github.com/stretchr/testify/assert"
)

// TestDriftOfPlacedServices: a service placed in another account than its
// stage's is checked apart, with the stage's drift role in that account;
// the stage's own run checks the rest (a Region-only placement stays
// home). The stages as configured place nothing elsewhere.
func TestDriftOfPlacedServices(t *testing.T) {
	all := []string{"rezagent", "nucleus", "stak", "itsm", "agenticpm"}
	for _, s := range config.Stages() {
		assert.Equal(t, all, s.HomeServices(), "%s: every service at home", s.Name)
	}
	assert.Empty(t, config.PlacedAccounts(config.Stages()), "no stage places a service in another account")
	assert.Equal(t, []config.PlacedDrift{}, config.PlacedDriftRuns(config.Stages()), "nothing to check apart (the workflow's matrix is [])")

	prod := config.Stage{Name: table.Prod, Services: map[string]config.Placement{
		"itsm":      {Account: "111111111111", Region: config.ITSMDocumentRegion},
		"agenticpm": {Account: "222222222222"},
		"stak":      {Region: "eu-west-1"},
	}}
	gov := config.Stage{Name: table.Stg, Account: "333333333333", Partition: "aws-us-gov", Region: "us-gov-west-1", Services: map[string]config.Placement{
		"nucleus": {Account: "111111111111"},
		"itsm":    {Account: "333333333333", Region: "us-gov-east-1"},
	}}
	assert.Equal(t, []string{"rezagent", "nucleus", "stak"}, prod.HomeServices(), "prod: a Region-only placement stays home")
	assert.Equal(t, []string{"rezagent", "stak", "itsm", "agenticpm"}, gov.HomeServices(), "gov: its own account named again stays home")
	assert.Equal(t, map[string][]config.Stage{"111111111111": {prod, gov}, "222222222222": {prod}},
		config.PlacedAccounts([]config.Stage{prod, gov}), "accounts hosting another stage's services")
	assert.Equal(t, []config.PlacedDrift{
		{Stage: "prod", Service: "itsm", Account: "111111111111", Role: "arn:aws:iam::111111111111:role/dynastack-drift-prod", Region: "us-east-1"},
		{Stage: "prod", Service: "agenticpm", Account: "222222222222", Role: "arn:aws:iam::222222222222:role/dynastack-drift-prod", Region: ""},
		{Stage: "stage", Service: "nucleus", Account: "111111111111", Role: "arn:aws-us-gov:iam::111111111111:role/dynastack-drift-stage", Region: "us-gov-west-1"},
	}, config.PlacedDriftRuns([]config.Stage{prod, gov}))
}
