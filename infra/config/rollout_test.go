package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/table"
)

func TestRolloutDefaults(t *testing.T) {
	for _, s := range Stages() {
		want := AllAtOnce
		if s.Name == table.Prod {
			want = Canary10Percent5Minutes
		}
		assert.Equal(t, want, s.RolloutOf(), "stage %s", s.Name)
	}
	s := Stage{Name: table.Stg, Rollout: Canary10Percent5Minutes}
	assert.Equal(t, Canary10Percent5Minutes, s.RolloutOf(), "a stage may choose the canary")
	s = Stage{Name: table.Prod, Rollout: AllAtOnce}
	assert.Equal(t, AllAtOnce, s.RolloutOf(), "and prod may opt out")
}

func TestRolloutValidated(t *testing.T) {
	for _, r := range Rollouts {
		assert.Empty(t, Stage{Name: table.Dev, Rollout: r}.validateRollout(), "%s", r)
	}
	errs := Stage{Name: table.Dev, Rollout: "linear"}.validateRollout()
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), `Rollout "linear"`)
	assert.Contains(t, errs[0].Error(), string(Canary10Percent5Minutes))
	err := Stage{Name: table.Dev, Rollout: "linear"}.ValidateGuardrails()
	require.Error(t, err, "ValidateGuardrails runs the check")
	assert.Contains(t, err.Error(), `Rollout "linear"`)
}
