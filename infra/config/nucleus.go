package config

import (
	"fmt"
	"regexp"
	"time"
)

// NucleusExecutor is Nucleus's schedule executor in one stage
// (docs/schemas/nucleus.md, "Executor").
type NucleusExecutor struct {
	// Schedule is when the executor runs: each run executes the start and
	// stop actions due by then, so the rate is the worst-case delay of an
	// action past its cron time.
	//
	// Default: rate(5 minutes).
	Schedule Schedule
	// LookBack is how far before its fire time a run looks for actions no
	// run executed: failed or dropped runs within it lose nothing. At
	// least the rate, below the executor's 7-day marker retention.
	//
	// Default: 1 hour.
	LookBack time.Duration
	// RoleNamePattern is the IAM role name (an IAM ARN pattern with * and
	// ?) that the executor and the API's connection test may assume, in
	// any account: the role each managed account creates for Nucleus.
	// Accounts naming another role are refused by the API.
	//
	// Default: "nucleus-executor-*".
	RoleNamePattern string
}

// Defaults of the Nucleus executor.
const (
	DefaultNucleusSchedule    = "rate(5 minutes)"
	DefaultNucleusLookBack    = time.Hour
	DefaultNucleusRolePattern = "nucleus-executor-*"
	nucleusMarkerRetention    = 7 * 24 * time.Hour
)

// A role name of IAM's characters with * and ? wildcards, not starting
// with one: a bare "*" would let the executor assume every role.
var nucleusRolePattern = regexp.MustCompile(`^[\w+=,.@-][\w+=,.@*?-]{0,63}$`)

// WithDefaults returns e with every unset field defaulted.
func (e NucleusExecutor) WithDefaults() NucleusExecutor {
	if e.Schedule.Expression == "" {
		e.Schedule.Expression = DefaultNucleusSchedule
	}
	if e.LookBack == 0 {
		e.LookBack = DefaultNucleusLookBack
	}
	if e.RoleNamePattern == "" {
		e.RoleNamePattern = DefaultNucleusRolePattern
	}
	return e
}

// Validate names the value and the fix of a bad setting.
func (e NucleusExecutor) Validate() error {
	if err := e.Schedule.Validate(); err != nil {
		return fmt.Errorf("nucleus executor: %w", err)
	}
	if e.LookBack < time.Minute || e.LookBack >= nucleusMarkerRetention {
		return fmt.Errorf("nucleus executor: LookBack %v: use 1m to below %v (the execution markers' retention)", e.LookBack, nucleusMarkerRetention)
	}
	if !nucleusRolePattern.MatchString(e.RoleNamePattern) {
		return fmt.Errorf("nucleus executor: RoleNamePattern %q: use a role name of up to 64 letters, digits and +=,.@_- with * or ? wildcards after the first character, e.g. nucleus-executor-*", e.RoleNamePattern)
	}
	return nil
}
