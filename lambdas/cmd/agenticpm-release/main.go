// Command agenticpm-release is AgenticPM's hold-queue worker: each
// EventBridge Scheduler fire releases the held actions that are due and
// puts their events on the stage's bus (docs/schemas/agenticpm.md,
// "Release job").
package main

import (
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm/eventbus"
)

func main() { fn.Main(eventbus.ReleaseFunction()) }
