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

// TestMakeKeepsTokensOffCommandLines: a bearer token given to make as a
// command-line variable (make smoke STAK_TOKEN=…) is refused before any
// recipe runs, naming the safe ways and not the token; a token exported
// in the environment, or a token file, is taken, and no command a recipe
// runs carries the token (make -n prints those commands with every make
// variable expanded: the old recipe's STAK_TOKEN="$(STAK_TOKEN)" put it
// in the shell's argv).
func TestMakeKeepsTokensOffCommandLines(t *testing.T) {
	const tok = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJtYWtlZmlsZS10ZXN0In0.planted"
	for _, target := range [][]string{{"smoke", "STAGE=stage"}, {"smoke", "LOCAL=http://127.0.0.1:8080"}, {"load"}, {"help"}} {
		t.Run(strings.Join(target, " ")+" STAK_TOKEN=…", func(t *testing.T) {
			out, err := runMake(t, time.Minute, append([]string{"-n"}, append(target, "STAK_TOKEN="+tok)...)...)
			require.Error(t, err, "make accepted STAK_TOKEN on its command line:\n%s", out)
			assert.Contains(t, out, "STAK_TOKEN=… on make's command line is refused", "refusal")
			for _, way := range []string{"STAK_TOKEN_FILE=<path>", "chmod 600", "STAK_TOKEN_FILE=-", "STAK_TOKEN exported in the environment"} {
				assert.Contains(t, out, way, "the refusal does not name a safe way")
			}
			assert.NotContains(t, out, tok, "the refusal prints the token")
		})
	}
	for _, tt := range []struct {
		name string
		env  []string
		args []string
		tool string
	}{
		{"smoke STAGE, token exported", []string{"STAK_TOKEN=" + tok}, []string{"smoke", "STAGE=stage"}, "bin/smoke -stage"},
		{"smoke STAGE, token file", nil, []string{"smoke", "STAGE=stage", "STAK_TOKEN_FILE=/run/user/1000/stak-token"}, "bin/smoke -stage"},
		{"smoke STAGE, token from stdin", nil, []string{"smoke", "STAGE=stage", "STAK_TOKEN_FILE=-"}, "bin/smoke -stage"},
		{"smoke LOCAL, token exported", []string{"STAK_TOKEN=" + tok}, []string{"smoke", "LOCAL=http://127.0.0.1:8080"}, "bin/smoke -local"},
		{"load, token exported", []string{"STAK_TOKEN=" + tok}, []string{"load"}, "go run ./devtools/cmd/load"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runMakeEnv(t, time.Minute, tt.env, append([]string{"-n"}, tt.args...)...)
			require.NoError(t, err, "make -n %s:\n%s", strings.Join(tt.args, " "), out)
			assert.NotContains(t, out, tok, "a recipe puts the token on a command line")
			assert.NotContains(t, out, "-stak-token ", "a recipe passes a token as a flag value")
			assert.Contains(t, out, tt.tool, "make -n did not print the recipe")
		})
	}
	// Nothing in a recipe names the variable itself: make would expand it
	// into the shell's command line.
	// Checked with a boolean: a failure names the match, not the Makefile.
	m := regexp.MustCompile(`(?m)^.*\$[({]STAK_TOKEN[)}].*$`).FindString(read(t, "Makefile"))
	assert.Empty(t, m, "Makefile expands the token's variable")
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
