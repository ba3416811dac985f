package inittrace_test

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/dynastack/dynastack/lambdas/devtools/inittrace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	out := []byte("init internal/bytealg @0.005 ms, 0 ms clock, 0 bytes, 0 allocs\n" +
		"a line of the program's own\n" +
		"init github.com/aws/aws-sdk-go-v2/service/dynamodb/schemas @1.2 ms, 0.95 ms clock, 586696 bytes, 3151 allocs\n" +
		"init net/netip @2.5 ms, 0.068 ms clock, 728 bytes, 18 allocs\n")
	inits := inittrace.Parse(out)
	require.Len(t, inits, 3, "initialisers")
	want := inittrace.Init{Package: "github.com/aws/aws-sdk-go-v2/service/dynamodb/schemas", Clock: 950 * time.Microsecond, Bytes: 586696, Allocs: 3151}
	got, ok := inittrace.Find(inits, want.Package)
	assert.True(t, ok, "Find %s", want.Package)
	assert.Equal(t, want, got, "Find %s", want.Package)
	_, ok = inittrace.Find(inits, "runtime")
	assert.False(t, ok, "found an initialiser that has no line")
	assert.Equal(t, 1018*time.Microsecond, inittrace.Clock(inits), "Clock")
}

// TestRuntimeFormat: the lines this Go prints parse, so a change of the
// runtime's format fails here rather than as an empty report.
func TestRuntimeFormat(t *testing.T) {
	if os.Getenv("GODEBUG") == "inittrace=1" {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRuntimeFormat$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	_, ok := inittrace.Find(inittrace.Parse(out), "runtime")
	assert.True(t, ok, "no runtime initialiser parsed from:\n%s", out)
}
