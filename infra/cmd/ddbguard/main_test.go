package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const goldenDir = "../../../test/snapshots"

func TestMain(m *testing.M) {
	// The repository's own acknowledgement file, should one be committed,
	// must not change what these cases expect.
	defaultAckFile = func() string { return filepath.Join(os.TempDir(), "ddbguard-test-no-such.ack.json") }
	os.Exit(m.Run())
}

// copyGolden copies the golden dir and applies edit to the decoded
// stage/stack template.
func copyGolden(t *testing.T, stage, stack string, edit func(resources map[string]any)) string {
	t.Helper()
	dir := t.TempDir()
	err := filepath.WalkDir(goldenDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(goldenDir, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if rel == filepath.Join(stage, stack+".template.json") {
			var v map[string]any
			if err := json.Unmarshal(data, &v); err != nil {
				return err
			}
			edit(v["Resources"].(map[string]any))
			if data, err = json.Marshal(v); err != nil {
				return err
			}
		}
		dst := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	require.NoError(t, err)
	return dir
}

// twoIndexes adds two GSIs to the prod ITSM table in one change.
func twoIndexes(resources map[string]any) {
	p := resources["Tickets83B11BB2"].(map[string]any)["Properties"].(map[string]any)
	for _, name := range []string{"ByStatus", "ByAssignee"} {
		p["GlobalSecondaryIndexes"] = append(p["GlobalSecondaryIndexes"].([]any), map[string]any{
			"IndexName":  name,
			"KeySchema":  []any{map[string]any{"AttributeName": "caller_id", "KeyType": "HASH"}},
			"Projection": map[string]any{"ProjectionType": "ALL"},
		})
	}
}

func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func TestRun(t *testing.T) {
	hazardous := copyGolden(t, "prod", "itsm", twoIndexes)
	retainDropped := copyGolden(t, "prod", "itsm", func(r map[string]any) {
		r["Tickets83B11BB2"].(map[string]any)["DeletionPolicy"] = "Delete"
	})
	lambdaOnly := copyGolden(t, "prod", "itsm", func(r map[string]any) {
		r["Handler886CB40B"].(map[string]any)["Properties"].(map[string]any)["MemorySize"] = 2048
	})
	itsmFile := filepath.Join(goldenDir, "prod", "itsm.template.json")
	ackFile := write(t, "ack.json", `[{"stage": "prod", "stack": "*", "logicalId": "Tickets83B11BB2", "hazard": "multiple-gsi-changes", "reason": "table empty in prod"}]`)
	noReason := write(t, "ack.json", `[{"stage": "prod", "stack": "itsm", "logicalId": "Tickets83B11BB2", "hazard": "multiple-gsi-changes"}]`)

	for _, tc := range []struct {
		name        string
		args        []string
		ackDefault  string // overrides the default ack file when set
		code        int
		stdout      []string
		stderr      []string
		stdoutEmpty bool
	}{
		{
			name:   "golden against itself",
			args:   []string{goldenDir, goldenDir},
			code:   0,
			stdout: []string{"ok: ", "tables compared, no safe changes"},
		},
		{
			name:   "non-DynamoDB change",
			args:   []string{goldenDir, lambdaOnly},
			code:   0,
			stdout: []string{"ok: ", "no safe changes"},
		},
		{
			name: "two GSIs in one update",
			args: []string{goldenDir, hazardous},
			code: 1,
			stdout: []string{
				"HAZARD prod/itsm Tickets83B11BB2 poc-itsm-tickets-prod multiple-gsi-changes: 2 index operations in one update",
				"safe way: split into two deploys: add index ByAssignee, then index ByStatus",
				"FAIL: 1 unacknowledged hazard;",
			},
		},
		{
			name:   "acknowledged by flag, flags after the operands",
			args:   []string{goldenDir, hazardous, "--ack-hazard", "prod/itsm/Tickets83B11BB2/multiple-gsi-changes=table empty in prod"},
			code:   0,
			stdout: []string{"ACKED prod/itsm Tickets83B11BB2 poc-itsm-tickets-prod multiple-gsi-changes:", "; reason: table empty in prod", "ok: 1 acknowledged hazard, "},
		},
		{
			name:   "acknowledged by file",
			args:   []string{"--ack", ackFile, goldenDir, hazardous},
			code:   0,
			stdout: []string{"ACKED prod/itsm Tickets83B11BB2", "ok: 1 acknowledged hazard"},
		},
		{
			name:       "acknowledged by the default file",
			args:       []string{goldenDir, hazardous},
			ackDefault: ackFile,
			code:       0,
			stdout:     []string{"ACKED prod/itsm Tickets83B11BB2"},
		},
		{
			name:   "stale acknowledgement warns but passes",
			args:   []string{"-ack-hazard", "dev/itsm/Tickets83B11BB2/ttl-change=old rename", goldenDir, goldenDir},
			code:   0,
			stdout: []string{"ok: "},
			stderr: []string{"warning: stale acknowledgement dev/itsm/Tickets83B11BB2/ttl-change (--ack-hazard) matches no hazard"},
		},
		{
			name:   "acknowledgement for another class does not pass",
			args:   []string{"--ack-hazard", "prod/itsm/Tickets83B11BB2/gsi-replaced=wrong", goldenDir, hazardous},
			code:   1,
			stdout: []string{"HAZARD prod/itsm"},
			stderr: []string{"stale acknowledgement"},
		},
		{
			name:        "ack file entry without reason",
			args:        []string{"--ack", noReason, goldenDir, hazardous},
			code:        2,
			stderr:      []string{noReason + " entry 1:", "has no reason"},
			stdoutEmpty: true,
		},
		{
			name:        "ack flag without reason",
			args:        []string{"--ack-hazard", "prod/itsm/Tickets83B11BB2/multiple-gsi-changes", goldenDir, hazardous},
			code:        2,
			stderr:      []string{"has no reason"},
			stdoutEmpty: true,
		},
		{
			name:        "invalid JSON",
			args:        []string{itsmFile, write(t, "bad.template.json", "{")},
			code:        2,
			stderr:      []string{"bad.template.json: invalid JSON"},
			stdoutEmpty: true,
		},
		{
			name:        "template without Resources",
			args:        []string{itsmFile, write(t, "empty.template.json", `{"Description": "x"}`)},
			code:        2,
			stderr:      []string{"empty.template.json: no Resources section"},
			stdoutEmpty: true,
		},
		{
			name:        "unreadable path",
			args:        []string{goldenDir, filepath.Join(t.TempDir(), "missing")},
			code:        2,
			stderr:      []string{"missing: cannot read"},
			stdoutEmpty: true,
		},
		{
			name:        "file against directory",
			args:        []string{itsmFile, goldenDir},
			code:        2,
			stderr:      []string{"mismatched layouts"},
			stdoutEmpty: true,
		},
		{
			name:        "one operand",
			args:        []string{goldenDir},
			code:        2,
			stderr:      []string{"want OLD and NEW, got 1 operands", "usage: ddbguard"},
			stdoutEmpty: true,
		},
		{
			name:        "--stage with directories",
			args:        []string{"--stage", "dev", goldenDir, goldenDir},
			code:        2,
			stderr:      []string{"--stage applies to two single files"},
			stdoutEmpty: true,
		},
		{
			name:   "single files take the stage from metadata",
			args:   []string{itsmFile, filepath.Join(retainDropped, "prod", "itsm.template.json")},
			code:   1,
			stdout: []string{"HAZARD prod/itsm Tickets83B11BB2 poc-itsm-tickets-prod protection-dropped: DeletionPolicy Retain → Delete"},
		},
		{
			name:   "single files with --stage dev",
			args:   []string{"--stage", "dev", itsmFile, filepath.Join(retainDropped, "prod", "itsm.template.json")},
			code:   0,
			stdout: []string{"ok: 1 stack, 1 table compared, 1 safe change (dev/itsm Tickets83B11BB2: DeletionPolicy Retain → Delete)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.ackDefault != "" {
				prev := defaultAckFile
				defaultAckFile = func() string { return tc.ackDefault }
				defer func() { defaultAckFile = prev }()
			}
			var stdout, stderr bytes.Buffer
			code := run(tc.args, &stdout, &stderr)
			assert.Equal(t, tc.code, code, "exit code\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			for _, want := range tc.stdout {
				assert.Contains(t, stdout.String(), want, "stdout")
			}
			for _, want := range tc.stderr {
				assert.Contains(t, stderr.String(), want, "stderr")
			}
			if tc.stdoutEmpty {
				assert.Empty(t, stdout.String(), "stdout should be empty on malformed input")
			}
		})
	}
}
