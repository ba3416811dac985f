package config

// AgenticPMHoldQueue is the release job of AgenticPM's hold queue in one
// stage (docs/schemas/agenticpm.md, "Release job").
type AgenticPMHoldQueue struct {
	// Release is when the job runs: each run releases the held actions
	// due by then, so the rate is the worst-case delay past heldUntil.
	//
	// Default: rate(1 minute).
	Release Schedule
	// EventBusName is the EventBridge bus released actions go to; the
	// stack creates it.
	//
	// Default: "agenticpm-<stage>".
	EventBusName string
}

// DefaultAgenticPMRelease is the release job's default schedule: the
// document's hold queue counts in minutes (hold_queue_minutes 30).
const DefaultAgenticPMRelease = "rate(1 minute)"

// WithDefaults returns q with every unset field defaulted for stage.
func (q AgenticPMHoldQueue) WithDefaults(stage string) AgenticPMHoldQueue {
	if q.Release.Expression == "" {
		q.Release.Expression = DefaultAgenticPMRelease
	}
	if q.EventBusName == "" {
		q.EventBusName = "agenticpm-" + stage
	}
	return q
}
