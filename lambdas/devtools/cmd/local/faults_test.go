package main_test

import (
	"path/filepath"
	"testing"
	"time"

	itsm "github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/stretchr/testify/assert"
)

// FAULTS puts DynamoDB's faults between the functions and DynamoDB Local
// for the whole session: with every request throttled, a route that reads
// the table answers 503 unavailable (the runner's own table setup is not
// throttled, or it would not start).
func TestFaultsReachTheFunctions(t *testing.T) {
	t.Parallel()
	r := startEnv(t, filepath.Dir(testenv.Template(t, "dev", "itsm")), []string{ddbfault.EnvFaults + "=throttle:1"})
	var body struct{ Error struct{ Code string } }
	call(t, itsm.ListTickets.Method, r.base+"/"+itsm.Name+itsm.ListTickets.URLQuery(service.Values{itsm.ParamCaller: "sess-u1"}), "", 503, &body)
	assert.Equal(t, "unavailable", body.Error.Code, "error code")
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
