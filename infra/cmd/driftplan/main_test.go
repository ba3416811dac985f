package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlan: the stages as configured check every stack at home and
// nothing apart; a wrong call says how to call it.
func TestPlan(t *testing.T) {
	for _, tt := range []struct {
		name   string
		stacks string
		placed bool
		want   string
		err    string
	}{
		{"dev at home", "dev", false, "dev/rezagent dev/nucleus dev/stak dev/itsm dev/agenticpm\n", ""},
		{"prod at home", "prod", false, "prod/rezagent prod/nucleus prod/stak prod/itsm prod/agenticpm\n", ""},
		{"placed elsewhere", "", true, "[]\n", ""},
		{"unknown stage", "qa", false, "", "qa"},
		{"neither", "", false, "", "give -stacks <stage> or -placed"},
		{"both", "dev", true, "", "give -stacks <stage> or -placed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(tt.stacks, tt.placed, &out)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, out.String())
		})
	}
}
