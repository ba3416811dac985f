package config

import (
	"fmt"
	"strings"

	"github.com/dynastack/dynastack/constructs/table"
)

// Rollout is how a new build of a stage's functions reaches their live
// alias (LiveAlias), which every invoker of the function targets: API
// Gateway, the queue and stream event source mappings and the schedules.
type Rollout string

// The rollouts a stage may choose.
const (
	// AllAtOnce points the alias at the new version in the stack update
	// itself: no CodeDeploy, every invocation runs the new build at once.
	AllAtOnce Rollout = "all-at-once"
	// Canary10Percent5Minutes shifts the alias with a CodeDeploy deployment
	// (LambdaDeploymentConfig CANARY_10PERCENT_5MINUTES): 10% of
	// invocations for 5 minutes, then all; any alarm of the function going
	// off in between shifts every invocation back to the old version and
	// fails the stack update.
	Canary10Percent5Minutes Rollout = "canary-10percent-5minutes"
)

// Rollouts lists every Rollout a stage may set.
var Rollouts = []Rollout{AllAtOnce, Canary10Percent5Minutes}

// LiveAlias is the name of every function's alias that its invokers target.
const LiveAlias = "live"

// RolloutOf is the stage's rollout: Rollout when set, else
// Canary10Percent5Minutes in prod and AllAtOnce in dev and stage.
func (s Stage) RolloutOf() Rollout {
	if s.Rollout != "" {
		return s.Rollout
	}
	if s.Name == table.Prod {
		return Canary10Percent5Minutes
	}
	return AllAtOnce
}

// validateRollout refuses a Rollout that is not one of Rollouts.
func (s Stage) validateRollout() []error {
	if s.Rollout == "" {
		return nil
	}
	for _, r := range Rollouts {
		if s.Rollout == r {
			return nil
		}
	}
	names := make([]string, len(Rollouts))
	for i, r := range Rollouts {
		names[i] = string(r)
	}
	return []error{fmt.Errorf("stage %s: Rollout %q: use one of %s, or leave it empty for the default (canary in prod, all at once elsewhere)", s.Name, s.Rollout, strings.Join(names, ", "))}
}
