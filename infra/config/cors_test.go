package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	stak "github.com/dynastack/dynastack/constructs/stak/contract"
)

func TestCORSPerStage(t *testing.T) {
	for _, s := range Stages() {
		for _, name := range []string{"rezagent", "nucleus", "itsm", "agenticpm"} {
			_, ok, err := s.CORSFor(name)
			require.NoError(t, err, "%s %s", s.Name, name)
			assert.False(t, ok, "%s: %s allows no browser origin", s.Name, name)
		}
		c, ok, err := s.CORSFor(stak.Name)
		require.NoError(t, err, "%s stak", s.Name)
		if s.Name != "dev" {
			assert.False(t, ok, "%s: stak allows no browser origin until a front end's origin is configured", s.Name)
			continue
		}
		require.True(t, ok, "dev: stak's end-user routes take localhost origins")
		assert.Equal(t, LocalOrigins, c.AllowOrigins, "dev: stak origins")
		assert.Equal(t, []string{"GET", "POST"}, c.AllowMethods, "dev: the methods of stak's end-user routes")
		assert.Contains(t, c.AllowHeaders, "Authorization", "dev: the bearer token's header")
	}
}

func TestCORSOriginsChecked(t *testing.T) {
	tests := []struct {
		name   string
		stage  string
		origin string
		ok     bool
	}{
		{"https origin", "prod", "https://app.example.com", true},
		{"localhost in dev", "dev", "http://localhost:3000", true},
		{"localhost in prod", "prod", "https://localhost:3000", false},
		{"http outside dev", "stage", "http://app.example.com", false},
		{"wildcard", "dev", "*", false},
		{"a path", "prod", "https://app.example.com/inbox", false},
		{"a trailing slash", "prod", "https://app.example.com/", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Lookup(tt.stage)
			require.NoError(t, err)
			s.CORS = map[string]CORS{"stak": {AllowOrigins: []string{tt.origin}, AllowMethods: []string{"GET"}}}
			_, ok, err := s.CORSFor("stak")
			assert.Equal(t, tt.ok, ok, "allowed")
			assert.Equal(t, tt.ok, err == nil, "error %v", err)
		})
	}
}
