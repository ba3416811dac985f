package test

import (
	"regexp"
	"strings"
	"testing"

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
