package test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/constructs/gofunction"
)

// TestBootstrapCacheFlags: make test's bootstrap-cache step compiles the
// Lambda mains with the flags gofunction bundles them with; with other
// flags the dev synth's build would find nothing in Go's cache and compile
// everything again (slow, not wrong: this test is what keeps it fast).
func TestBootstrapCacheFlags(t *testing.T) {
	m := regexp.MustCompile(`(?m)^LAMBDA_BUILD_FLAGS := (.*)$`).FindStringSubmatch(read(t, "Makefile"))
	if m == nil {
		t.Fatal("Makefile: no LAMBDA_BUILD_FLAGS := line")
	}
	var want []string
	for _, f := range gofunction.BuildFlags() {
		if strings.ContainsAny(f, " \t") {
			f = `"` + f + `"`
		}
		want = append(want, f)
	}
	if got := strings.TrimSpace(m[1]); got != strings.Join(want, " ") {
		t.Errorf("Makefile LAMBDA_BUILD_FLAGS = %s, gofunction.BuildFlags() = %s: make them equal", got, strings.Join(want, " "))
	}
}
