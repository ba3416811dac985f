package main_test

import (
	"path/filepath"
	"testing"
	"time"

	itsm "github.com/dynastack/dynastack/constructs/itsm/contract"
	itsmclient "github.com/dynastack/dynastack/lambdas/client/itsm"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FAULTS puts DynamoDB's faults between the functions and DynamoDB Local
// for the whole session: with every request throttled, a route that reads
// the table answers 503 unavailable (the runner's own table setup is not
// throttled, or it would not start).
func TestFaultsReachTheFunctions(t *testing.T) {
	t.Parallel()
	r := startEnv(t, filepath.Dir(testenv.Template(t, "dev", "itsm")), []string{ddbfault.EnvFaults + "=throttle:1"})
	c, err := itsmclient.NewClientWithResponses(r.base + "/" + itsm.Name)
	require.NoError(t, err)
	list, err := c.ListTicketsWithResponse(t.Context(), &itsmclient.ListTicketsParams{Caller: "sess-u1"})
	answered(t, 503, list, list.Body, err, "list under a throttle")
	require.NotNil(t, list.JSON503, "the platform's error shape, typed")
	assert.Equal(t, "unavailable", list.JSON503.Error.Code, "error code")
	require.NotNil(t, list.Headers503, "the 503's headers, typed")
	if assert.NotNil(t, list.Headers503.RetryAfter, "Retry-After") {
		assert.Positive(t, *list.Headers503.RetryAfter, "Retry-After")
	}
}

func TestParseFaults(t *testing.T) {
	f, r, err := ddbfault.Parse("drop:0.05")
	assert.NoError(t, err, "drop:0.05")
	assert.Equal(t, ddbfault.DropAnswer, f, "drop:0.05: fault")
	assert.Equal(t, 0.05, r, "drop:0.05: rate")
	f, r, d, err := ddbfault.ParseSpec("latency:0.5:9s")
	assert.NoError(t, err, "latency:0.5:9s")
	assert.Equal(t, ddbfault.Latency, f, "latency:0.5:9s: fault")
	assert.Equal(t, 0.5, r, "latency:0.5:9s: rate")
	assert.Equal(t, 9*time.Second, d, "latency:0.5:9s: delay")
	for _, bad := range []string{"throttle", "throttle:2", "slow:0.1", "5xx:x", "throttle:1:2s", "latency:1:x", "latency:1:-1s"} {
		_, _, err := ddbfault.Parse(bad)
		assert.ErrorContains(t, err, "e.g. throttle:0.2", "Parse(%q)", bad)
	}
}
