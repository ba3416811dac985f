package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReport(t *testing.T) {
	raw, err := os.ReadFile("../../drift/testdata/cdk-drift.txt")
	require.NoError(t, err)
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 1, report(string(raw), dir, "", &stdout, &stderr), "drift found: exit 1")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"prod-agenticpm.md", "prod-itsm.md"}, names, "one issue file per drifted stack")
	b, err := os.ReadFile(filepath.Join(dir, "prod-itsm.md"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(b), "Drift: prod/itsm\n\n"), "title line, blank line, body")

	stdout.Reset()
	assert.Equal(t, 0, report("Stack dev/itsm\nNo drift detected\n", "", "", &stdout, &stderr), "no drift: exit 0")
	assert.Equal(t, "dev/itsm: no drift\n", stdout.String())
	assert.Equal(t, 2, report("Unable to resolve AWS account to use\n", "", "", &stdout, &stderr), "no stack checked: exit 2")
}
