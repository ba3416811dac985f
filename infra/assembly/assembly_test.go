package assembly_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/infra/assembly"
)

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestStacksFollowsStages(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "manifest.json"), `{"artifacts": {"assembly-prod": {"type": "cdk:cloud-assembly", "properties": {"directoryName": "assembly-prod", "displayName": "prod"}}}}`)
	write(t, filepath.Join(dir, "assembly-prod", "manifest.json"), `{"artifacts": {
		"proditsm": {"type": "aws:cloudformation:stack", "displayName": "prod/itsm", "properties": {"templateFile": "proditsm.template.json", "stackName": "itsm-prod", "terminationProtection": true}},
		"bare": {"type": "aws:cloudformation:stack", "properties": {"templateFile": "bare.template.json"}},
		"assets": {"type": "cdk:asset-manifest"}}}`)
	got, err := assembly.Stacks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("stacks = %+v", got)
	}
	bare, itsm := got[0], got[1]
	if bare.Stage != "prod" || bare.ID != "bare" {
		t.Errorf("a stack without a stage in its display name: %+v", bare)
	}
	if itsm.Stage != "prod" || itsm.ID != "itsm" || itsm.StackName != "itsm-prod" || !itsm.TerminationProtection ||
		itsm.Template != filepath.Join(dir, "assembly-prod", "proditsm.template.json") {
		t.Errorf("itsm = %+v", itsm)
	}
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
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Stacks() = %v, want %q", err, tt.want)
			}
		})
	}
}
