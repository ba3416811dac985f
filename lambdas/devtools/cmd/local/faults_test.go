package main_test

import (
	"path/filepath"
	"strings"
	"testing"

	itsm "github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
)

// FAULTS puts DynamoDB's faults between the functions and DynamoDB Local
// for the whole session: with every request throttled, a route that reads
// the table answers 503 unavailable (the runner's own table setup is not
// throttled, or it would not start).
func TestFaultsReachTheFunctions(t *testing.T) {
	t.Parallel()
	r := startEnv(t, filepath.Dir(testenv.Template(t, "dev", "itsm")), []string{ddbfault.EnvFaults + "=throttle:1"})
	var body struct{ Error struct{ Code string } }
	call(t, itsm.ListTickets.Method, r.base+"/"+itsm.Name+itsm.ListTickets.URLQuery(service.Values{itsm.ParamCaller: "u1"}), "", 503, &body)
	if body.Error.Code != "unavailable" {
		t.Errorf("code %q, want unavailable", body.Error.Code)
	}
}

func TestParseFaults(t *testing.T) {
	if f, r, err := ddbfault.Parse("drop:0.05"); err != nil || f != ddbfault.DropAnswer || r != 0.05 {
		t.Errorf("drop:0.05 = %s %v %v", f, r, err)
	}
	for _, bad := range []string{"throttle", "throttle:2", "slow:0.1", "5xx:x"} {
		if _, _, err := ddbfault.Parse(bad); err == nil || !strings.Contains(err.Error(), "e.g. throttle:0.2") {
			t.Errorf("Parse(%q) = %v", bad, err)
		}
	}
}
