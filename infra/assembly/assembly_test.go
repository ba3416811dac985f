package assembly_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dynastack/dynastack/infra/assembly"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func write(t *testing.T, path, body string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
}

func TestStacksFollowsStages(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "manifest.json"), `{"artifacts": {"assembly-prod": {"type": "cdk:cloud-assembly", "properties": {"directoryName": "assembly-prod", "displayName": "prod"}}}}`)
	write(t, filepath.Join(dir, "assembly-prod", "manifest.json"), `{"artifacts": {
		"proditsm": {"type": "aws:cloudformation:stack", "displayName": "prod/itsm", "properties": {"templateFile": "proditsm.template.json", "stackName": "itsm-prod", "terminationProtection": true}},
		"bare": {"type": "aws:cloudformation:stack", "properties": {"templateFile": "bare.template.json"}},
		"assets": {"type": "cdk:asset-manifest"}}}`)
	got, err := assembly.Stacks(dir)
	require.NoError(t, err)
	require.Len(t, got, 2, "stacks")
	bare, itsm := got[0], got[1]
	assert.Equal(t, "prod", bare.Stage, "a stack without a stage in its display name: %+v", bare)
	assert.Equal(t, "bare", bare.ID, "a stack without a stage in its display name: %+v", bare)
	assert.Equal(t, "prod", itsm.Stage, "itsm = %+v", itsm)
	assert.Equal(t, "itsm", itsm.ID, "itsm = %+v", itsm)
	assert.Equal(t, "itsm-prod", itsm.StackName, "itsm = %+v", itsm)
	assert.True(t, itsm.TerminationProtection, "itsm = %+v", itsm)
	assert.Equal(t, filepath.Join(dir, "assembly-prod", "proditsm.template.json"), itsm.Template, "itsm = %+v", itsm)
}

func TestStacksErrors(t *testing.T) {
	tests := []struct{ name, manifest, want string }{
		{"missing", "", "manifest.json: cannot read: no such file or directory"},
		{"invalid", `{"artifacts": `, "manifest.json: invalid JSON"},
		{"nested without directory", `{"artifacts": {"a": {"type": "cdk:cloud-assembly"}}}`, "artifact a has no properties.directoryName"},
		{"stack without template", `{"artifacts": {"s": {"type": "aws:cloudformation:stack"}}}`, "stack artifact s has no properties.templateFile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.manifest != "" {
				write(t, filepath.Join(dir, "manifest.json"), tt.manifest)
			}
			_, err := assembly.Stacks(dir)
			require.ErrorContains(t, err, tt.want, "Stacks()")
		})
	}
}
