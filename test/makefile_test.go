package test

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/gofunction"
)

// TestBootstrapCacheFlags: make test's bootstrap-cache step compiles the
// Lambda mains with the flags gofunction bundles them with; with other
// flags the dev synth's build would find nothing in Go's cache and compile
// everything again (slow, not wrong: this test is what keeps it fast).
func TestBootstrapCacheFlags(t *testing.T) {
	m := regexp.MustCompile(`(?m)^LAMBDA_BUILD_FLAGS := (.*)$`).FindStringSubmatch(read(t, "Makefile"))
	require.NotNil(t, m, "Makefile: no LAMBDA_BUILD_FLAGS := line")
	var want []string
	for _, f := range gofunction.BuildFlags() {
		if strings.ContainsAny(f, " \t") {
			f = `"` + f + `"`
		}
		want = append(want, f)
	}
	assert.Equal(t, strings.Join(want, " "), strings.TrimSpace(m[1]), "Makefile LAMBDA_BUILD_FLAGS and gofunction.BuildFlags(): make them equal")

}

// TestMigrateTarget: `make migrate` is listed with its help line and
// refuses to run without STAGE or SERVICE (exit 2, the usage named),
// before it builds anything.
func TestMigrateTarget(t *testing.T) {
	assert.Regexp(t, `(?m)^migrate: ## .*STAGE= SERVICE=`, read(t, "Makefile"), "the target and its help line")
	for _, args := range [][]string{
		{"migrate"},
		{"migrate", "STAGE=dev"},
		{"migrate", "SERVICE=itsm"},
		{"migrate", "STAGE=dev", "SERVICE="},
	} {
		out, err := runMake(t, time.Minute, args...)
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "make %v must fail:\n%s", args, out)
		assert.Equal(t, 2, exit.ExitCode(), "make %v: exit code", args)
		assert.Contains(t, out, "usage: make migrate STAGE=<stage> SERVICE=<service>", "make %v: the usage", args)
		assert.NotContains(t, out, "go build", "make %v: refused before building", args)
	}
}
