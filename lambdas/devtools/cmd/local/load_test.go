package main_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/load"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoad is make load's short form: every service's mix against the
// runner, first as it is, then with one in ten DynamoDB answers lost after
// the write was applied (FAULTS=drop:0.1). Either way no operation fails
// and every integrity check holds: acknowledged creates readable and
// listed once, no list returning an item twice, and the services' counts
// (comments, audit entries, events, Stak's counters) equal to the
// acknowledged writes. The figures are logged, not asserted.
func TestLoad(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts the runner twice")
	}
	dir := filepath.Dir(testenv.Template(t, "dev", "itsm"))
	for _, faults := range []string{"", "drop:0.1"} {
		t.Run("faults="+faults, func(t *testing.T) {
			t.Parallel()
			var env []string
			if faults != "" {
				env = append(env, ddbfault.EnvFaults+"="+faults)
			}
			r := startEnv(t, dir, env)
			out, err := exec.Command(build(t), "token", "-tenant", load.StakTenant, "-user", load.StakUser, "-templates", dir).Output()
			require.NoError(t, err, "token")
			var reports []load.Report
			for _, sc := range load.Scenarios(strings.TrimSpace(string(out))) {
				rep, err := load.Run(t.Context(), r.base, sc, load.Options{Count: 60, Concurrency: 6})
				require.NoError(t, err)
				reports = append(reports, rep)
				assert.Zero(t, rep.Errors(), "%s: failed operations, first: %s", rep.Service, rep.FirstError)
				assert.Empty(t, rep.Problems, "%s: problems", rep.Service)
				assert.NotZero(t, rep.Acked, "%s: no create acknowledged", rep.Service)
			}
			assert.Len(t, reports, 5, "services loaded")
			t.Logf("\n%s", load.Table(reports))
		})
	}
}
