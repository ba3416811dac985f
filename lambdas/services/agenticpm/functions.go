package agenticpm

import (
	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
)

// The release job's binding: cmd/agenticpm-release runs it in Lambda. The
// API's is agenticpmapi.Function (services/agenticpm/agenticpmapi), in a
// package of its own with the JSON Schema library and the KMS client only
// the API uses, so that the job's bootstrap does not link them;
// lambdas/services lists both for the local runner and the tests.

func ReleaseFunction() fn.Binding { return fn.Schedule(contract.Release, NewReleaseJob) }

// Functions lists AgenticPM's functions bound in this package (the API's is agenticpmapi's):
// services.Functions gathers every package's list, so a new function of
// this package is listed here, once.
func Functions() []fn.Binding { return []fn.Binding{ReleaseFunction()} }
