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
