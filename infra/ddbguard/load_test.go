package ddbguard

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadMalformed(t *testing.T) {
	itsm := func() tpl { return loadGolden(t, "prod", "itsm") }
	for _, tc := range []struct {
		name string
		// setup writes the input under dir and returns the path to load.
		setup func(t *testing.T, dir string) string
		want  string
	}{
		{
			name: "invalid JSON",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "a.template.json")
				writeFile(t, p, `{"Resources": {`)
				return p
			},
			want: "a.template.json: invalid JSON",
		},
		{
			name: "template without Resources",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "a.template.json")
				writeFile(t, p, `{"Outputs": {}}`)
				return p
			},
			want: "a.template.json: no Resources section",
		},
		{
			name: "Resources not an object",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "a.template.json")
				writeFile(t, p, `{"Resources": []}`)
				return p
			},
			want: "Resources is not an object",
		},
		{
			name:  "unreadable path",
			setup: func(t *testing.T, dir string) string { return filepath.Join(dir, "nope") },
			want:  "nope: cannot read: no such file or directory",
		},
		{
			name: "resource without Type",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "a.template.json")
				writeFile(t, p, `{"Resources": {"X": {"Properties": {}}}}`)
				return p
			},
			want: "resource X has no Type",
		},
		{
			name: "key schema of the wrong shape",
			setup: func(t *testing.T, dir string) string {
				v := itsm()
				props(v, tickets)["KeySchema"] = "ticket_id"
				p := filepath.Join(dir, "a.template.json")
				writeJSON(t, p, v)
				return p
			},
			want: "resource Tickets83B11BB2: KeySchema is not the CloudFormation shape",
		},
		{
			name: "golden dir with one bad file",
			setup: func(t *testing.T, dir string) string {
				writeGolden(t, dir, map[string]tpl{"prod/itsm": itsm()})
				writeFile(t, filepath.Join(dir, "prod", "stak.template.json"), "not json")
				return dir
			},
			want: filepath.Join("prod", "stak.template.json") + ": invalid JSON",
		},
		{
			name:  "directory without templates",
			setup: func(t *testing.T, dir string) string { return dir },
			want:  "no templates found",
		},
		{
			name: "directory mixing layouts",
			setup: func(t *testing.T, dir string) string {
				writeGolden(t, dir, map[string]tpl{"prod/itsm": itsm()})
				writeFile(t, filepath.Join(dir, "manifest.json"), `{"artifacts": {}}`)
				return dir
			},
			want: "holds both a cloud assembly",
		},
		{
			name: "assembly manifest invalid",
			setup: func(t *testing.T, dir string) string {
				writeFile(t, filepath.Join(dir, "manifest.json"), `{"artifacts": `)
				return dir
			},
			want: "manifest.json: invalid JSON",
		},
		{
			name: "assembly stack template missing",
			setup: func(t *testing.T, dir string) string {
				writeFile(t, filepath.Join(dir, "manifest.json"), `{"artifacts": {"s": {"type": "aws:cloudformation:stack", "displayName": "prod/itsm", "properties": {"templateFile": "gone.template.json"}}}}`)
				return dir
			},
			want: "gone.template.json: cannot read",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.setup(t, t.TempDir())
			_, err := Load(path)
			if assert.ErrorIs(t, err, ErrMalformed, "Load") {
				assert.ErrorContains(t, err, tc.want, "Load")
			}
		})
	}
}

func TestCompatible(t *testing.T) {
	dir, err := Load(goldenDir)
	require.NoError(t, err)
	file, err := Load(filepath.Join(goldenDir, "prod", "itsm.template.json"))
	require.NoError(t, err)
	err = Compatible(file, dir)
	if assert.ErrorIs(t, err, ErrMalformed, "file against dir") {
		assert.ErrorContains(t, err, "mismatched layouts", "file against dir")
	}
	assert.NoError(t, Compatible(dir, dir), "dir against dir")
	assert.NoError(t, Compatible(file, file), "file against file")
}

// writeAssembly lays the golden templates out as `cdk synth` does: a root
// manifest naming one nested assembly per stage, whose manifest names the
// stacks by display name and hashed template file.
func writeAssembly(t *testing.T, dir string, templates map[string]tpl) {
	t.Helper()
	root := map[string]any{}
	stages := map[string]map[string]any{}
	for _, key := range slices.Sorted(maps.Keys(templates)) {
		stage, stack := splitKey(key)
		if stages[stage] == nil {
			stages[stage] = map[string]any{}
			root["assembly-"+stage] = map[string]any{
				"type":       "cdk:cloud-assembly",
				"properties": map[string]any{"directoryName": "assembly-" + stage, "displayName": stage},
			}
		}
		id := fmt.Sprintf("%s%sABCD1234", stage, stack)
		stages[stage][id+".assets"] = map[string]any{"type": "cdk:asset-manifest", "properties": map[string]any{"file": id + ".assets.json"}}
		stages[stage][id] = map[string]any{
			"type":        "aws:cloudformation:stack",
			"displayName": stage + "/" + stack,
			"properties":  map[string]any{"templateFile": id + ".template.json", "stackName": stack + "-" + stage},
		}
		writeJSON(t, filepath.Join(dir, "assembly-"+stage, id+".template.json"), templates[key])
	}
	root["Tree"] = map[string]any{"type": "cdk:tree", "properties": map[string]any{"file": "tree.json"}}
	writeJSON(t, filepath.Join(dir, "manifest.json"), map[string]any{"version": "55.0.0", "artifacts": root})
	for stage, artifacts := range stages {
		writeJSON(t, filepath.Join(dir, "assembly-"+stage, "manifest.json"), map[string]any{"version": "55.0.0", "artifacts": artifacts})
	}
}

func allGolden(t *testing.T) map[string]tpl {
	t.Helper()
	out := map[string]tpl{}
	files, err := filepath.Glob(filepath.Join(goldenDir, "*", "*.template.json"))
	require.NoError(t, err, "no golden files")
	require.NotEmpty(t, files, "no golden files")
	for _, f := range files {
		stage := filepath.Base(filepath.Dir(f))
		stack := strings.TrimSuffix(filepath.Base(f), ".template.json")
		out[stage+"/"+stack] = loadGolden(t, stage, stack)
	}
	return out
}

func TestAssemblyLayout(t *testing.T) {
	golden, err := Load(goldenDir)
	require.NoError(t, err)
	templates := allGolden(t)
	dir := t.TempDir()
	writeAssembly(t, dir, templates)

	t.Run("cdk.out against golden is clean", func(t *testing.T) {
		asm, err := Load(dir)
		require.NoError(t, err)
		require.Equal(t, LayoutAssembly, asm.Layout, "layout")
		require.Len(t, asm.Templates, len(golden.Templates), "templates")
		r := Compare(golden, asm)
		assert.Empty(t, r.Hazards, "hazards:\n%s", lines(r.Hazards))
		assert.Empty(t, r.Changes, "changes:\n%s", lines(r.Changes))
		assert.Equal(t, len(golden.Templates), r.Stacks, "stacks compared")
	})

	t.Run("one nested assembly", func(t *testing.T) {
		asm, err := Load(filepath.Join(dir, "assembly-prod"))
		require.NoError(t, err)
		for _, tm := range asm.Templates {
			assert.Equal(t, "prod", tm.Stage, "%s: stage", tm.Path)
		}
	})

	t.Run("a hazard in the assembly", func(t *testing.T) {
		addGSI(templates["prod/itsm"], tickets, "ByStatus", "status")
		addGSI(templates["prod/itsm"], tickets, "ByAssignee", "assignee")
		changed := t.TempDir()
		writeAssembly(t, changed, templates)
		asm, err := Load(changed)
		require.NoError(t, err)
		r := Compare(golden, asm)
		if assert.Equal(t, []Class{MultipleGSIChanges}, classes(r.Hazards), "hazards:\n%s", lines(r.Hazards)) {
			assert.Equal(t, "prod", r.Hazards[0].Stage, "hazard stage")
			assert.Equal(t, "itsm", r.Hazards[0].Stack, "hazard stack")
		}
	})
}

// TestSingleFiles: two files pair whatever their names, and the stage comes
// from the aws:cdk:path metadata, so prod's protections apply.
func TestSingleFiles(t *testing.T) {
	dir := t.TempDir()
	old, new := loadGolden(t, "prod", "itsm"), loadGolden(t, "prod", "itsm")
	resource(new, tickets)["DeletionPolicy"] = "Delete"
	writeJSON(t, filepath.Join(dir, "before.json"), old)
	writeJSON(t, filepath.Join(dir, "after.json"), new)
	o, err := Load(filepath.Join(dir, "before.json"))
	require.NoError(t, err)
	n, err := Load(filepath.Join(dir, "after.json"))
	require.NoError(t, err)
	tm := n.Templates[0]
	require.Equal(t, "prod", tm.Stage, "stage: want it from aws:cdk:path")
	require.Equal(t, "itsm", tm.Stack, "stack: want it from aws:cdk:path")
	r := Compare(o, n)
	assert.Equal(t, []Class{ProtectionDropped}, classes(r.Hazards), "hazards:\n%s", lines(r.Hazards))

	// Without metadata the stage is unknown, which counts as protected.
	for _, v := range []tpl{old, new} {
		for _, res := range resources(v) {
			delete(res.(map[string]any), "Metadata")
		}
	}
	writeJSON(t, filepath.Join(dir, "before.json"), old)
	writeJSON(t, filepath.Join(dir, "after.json"), new)
	o, _ = Load(filepath.Join(dir, "before.json"))
	n, _ = Load(filepath.Join(dir, "after.json"))
	assert.Equal(t, []Class{ProtectionDropped}, classes(Compare(o, n).Hazards), "unknown stage: hazards")
	tm = n.Templates[0]
	assert.Empty(t, tm.Stage, "stage: want none")
	assert.Equal(t, "after", tm.Stack, "stack: want the file name")
}
