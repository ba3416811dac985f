package ddbguard

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load: %v; want ErrMalformed with %q", err, tc.want)
			}
		})
	}
}

func TestCompatible(t *testing.T) {
	dir, err := Load(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	file, err := Load(filepath.Join(goldenDir, "prod", "itsm.template.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Compatible(file, dir); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "mismatched layouts") {
		t.Errorf("file against dir: %v", err)
	}
	if err := Compatible(dir, dir); err != nil {
		t.Errorf("dir against dir: %v", err)
	}
	if err := Compatible(file, file); err != nil {
		t.Errorf("file against file: %v", err)
	}
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
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, f := range files {
		stage := filepath.Base(filepath.Dir(f))
		stack := strings.TrimSuffix(filepath.Base(f), ".template.json")
		out[stage+"/"+stack] = loadGolden(t, stage, stack)
	}
	return out
}

func TestAssemblyLayout(t *testing.T) {
	golden, err := Load(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	templates := allGolden(t)
	dir := t.TempDir()
	writeAssembly(t, dir, templates)

	t.Run("cdk.out against golden is clean", func(t *testing.T) {
		asm, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if asm.Layout != LayoutAssembly || len(asm.Templates) != len(golden.Templates) {
			t.Fatalf("layout %s with %d templates; want assembly with %d", asm.Layout, len(asm.Templates), len(golden.Templates))
		}
		r := Compare(golden, asm)
		if len(r.Hazards)+len(r.Changes) > 0 || r.Stacks != len(golden.Templates) {
			t.Errorf("%d stacks compared:\n%s%s", r.Stacks, lines(r.Hazards), lines(r.Changes))
		}
	})

	t.Run("one nested assembly", func(t *testing.T) {
		asm, err := Load(filepath.Join(dir, "assembly-prod"))
		if err != nil {
			t.Fatal(err)
		}
		for _, tm := range asm.Templates {
			if tm.Stage != "prod" {
				t.Errorf("%s: stage %q", tm.Path, tm.Stage)
			}
		}
	})

	t.Run("a hazard in the assembly", func(t *testing.T) {
		addGSI(templates["prod/itsm"], tickets, "ByStatus", "status")
		addGSI(templates["prod/itsm"], tickets, "ByAssignee", "assignee")
		changed := t.TempDir()
		writeAssembly(t, changed, templates)
		asm, err := Load(changed)
		if err != nil {
			t.Fatal(err)
		}
		r := Compare(golden, asm)
		if got := classes(r.Hazards); !slices.Equal(got, []Class{MultipleGSIChanges}) || r.Hazards[0].Stage != "prod" || r.Hazards[0].Stack != "itsm" {
			t.Errorf("hazards %v:\n%s", got, lines(r.Hazards))
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
	if err != nil {
		t.Fatal(err)
	}
	n, err := Load(filepath.Join(dir, "after.json"))
	if err != nil {
		t.Fatal(err)
	}
	if tm := n.Templates[0]; tm.Stage != "prod" || tm.Stack != "itsm" {
		t.Fatalf("stage %q stack %q; want them from aws:cdk:path", tm.Stage, tm.Stack)
	}
	r := Compare(o, n)
	if got := classes(r.Hazards); !slices.Equal(got, []Class{ProtectionDropped}) {
		t.Errorf("hazards %v:\n%s", got, lines(r.Hazards))
	}

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
	if got := classes(Compare(o, n).Hazards); !slices.Equal(got, []Class{ProtectionDropped}) {
		t.Errorf("unknown stage: hazards %v", got)
	}
	if tm := n.Templates[0]; tm.Stage != "" || tm.Stack != "after" {
		t.Errorf("stage %q stack %q; want none and the file name", tm.Stage, tm.Stack)
	}
}
