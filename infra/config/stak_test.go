package config_test

import (
	"testing"

	"github.com/dynastack/dynastack/constructs/table"
	"github.com/dynastack/dynastack/infra/config"
	"github.com/stretchr/testify/assert"
)

// StakTokensFor fills the defaults and refuses an issuer that is not https
// or an audience that is not one word, naming the value.
func TestStakTokensFor(t *testing.T) {
	got, err := config.Stage{Name: table.Prod}.StakTokensFor()
	if assert.NoError(t, err) {
		assert.Equal(t, "https://auth.prod.stak.dynastack.example/", got.Issuer, "default issuer")
		assert.Equal(t, "stak-prod", got.Audience, "default audience")
	}
	for _, bad := range []config.StakTokens{
		{Issuer: "http://login.example.com/"},
		{Issuer: "login.example.com"},
		{Issuer: "https://login.example.com/?x=1"},
		{Audience: "a b"},
		{Audience: "a,b"},
	} {
		_, err := config.Stage{Name: table.Dev, StakTokens: bad}.StakTokensFor()
		assert.ErrorContains(t, err, "StakTokens.", "%+v: want an error naming the field", bad)
	}
}
