// Command agenticpm-actions is AgenticPM's agent actions API Lambda
// function: the hold queue's routes (provided.al2023, built as bootstrap
// with -tags lambda.norpc).
package main

import (
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm/eventbus"
)

func main() { fn.Main(eventbus.ActionsFunction()) }
