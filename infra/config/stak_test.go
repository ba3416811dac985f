package config_test

import (
	"strings"
	"testing"

	"github.com/dynastack/dynastack/constructs/table"
	"github.com/dynastack/dynastack/infra/config"
)

// StakTokensFor fills the defaults and refuses an issuer that is not https
// or an audience that is not one word, naming the value.
func TestStakTokensFor(t *testing.T) {
	got, err := config.Stage{Name: table.Prod}.StakTokensFor()
	if err != nil || got.Issuer != "https://auth.prod.stak.dynastack.example/" || got.Audience != "stak-prod" {
		t.Errorf("defaults = %+v, %v", got, err)
	}
	for _, bad := range []config.StakTokens{
		{Issuer: "http://login.example.com/"},
		{Issuer: "login.example.com"},
		{Issuer: "https://login.example.com/?x=1"},
		{Audience: "a b"},
		{Audience: "a,b"},
	} {
		_, err := config.Stage{Name: table.Dev, StakTokens: bad}.StakTokensFor()
		if err == nil || !strings.Contains(err.Error(), "StakTokens.") {
			t.Errorf("%+v: error %v, want one naming the field", bad, err)
		}
	}
}
