package ddbguard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/dynastack/dynastack/infra/assembly"
)

// Layout is how a Set was laid out on disk.
type Layout string

const (
	// LayoutFile is a single template file.
	LayoutFile Layout = "file"
	// LayoutGolden is <dir>/<stage>/<stack>.template.json (test/snapshots).
	LayoutGolden Layout = "golden"
	// LayoutAssembly is a CDK cloud assembly: cdk.out with
	// assembly-<stage>/manifest.json, or one such nested assembly.
	LayoutAssembly Layout = "assembly"
)

// Set is the templates of one side of a comparison.
type Set struct {
	Path      string
	Layout    Layout
	Templates []*Template
}

// Template is one stack's CloudFormation template.
type Template struct {
	Path string
	// Stage and Stack identify the template across the two sides. A single
	// file takes them from its aws:cdk:path metadata ("prod/itsm/..."); the
	// command's --stage overrides Stage.
	Stage, Stack string
	Resources    map[string]Resource

	tables map[string]*table
}

// Resource is the part of a CloudFormation resource the guard reads.
type Resource struct {
	Type                string
	Properties          map[string]any
	DeletionPolicy      string
	UpdateReplacePolicy string
	// CDKPath is the aws:cdk:path metadata, e.g. "prod/itsm/Tickets/Resource".
	CDKPath string
}

// Load reads a template file or a directory of templates (golden or cloud
// assembly layout). Every problem wraps ErrMalformed and names the path.
func Load(path string) (Set, error) {
	info, err := os.Stat(path)
	if err != nil {
		return Set{}, malformed("%s: cannot read: %v", path, assembly.UnwrapPathError(err))
	}
	if !info.IsDir() {
		t, err := ReadTemplate(path)
		if err != nil {
			return Set{}, err
		}
		return Set{Path: path, Layout: LayoutFile, Templates: []*Template{t}}, nil
	}
	assembly, err := isAssembly(path)
	if err != nil {
		return Set{}, err
	}
	golden, err := goldenStages(path)
	if err != nil {
		return Set{}, err
	}
	var set Set
	switch {
	case assembly && len(golden) > 0:
		return Set{}, malformed("%s: holds both a cloud assembly (manifest.json) and golden stage directories (%s); pass one layout per side", path, strings.Join(golden, ", "))
	case assembly:
		set = Set{Path: path, Layout: LayoutAssembly}
		err = set.loadAssembly(path)
	case len(golden) > 0:
		set = Set{Path: path, Layout: LayoutGolden}
		err = set.loadGolden(path, golden)
	default:
		return Set{}, malformed("%s: no templates found: expected <dir>/<stage>/<stack>.template.json or a cdk.out cloud assembly (manifest.json)", path)
	}
	if err != nil {
		return Set{}, err
	}
	seen := map[string]string{}
	for _, t := range set.Templates {
		key := t.Stage + "/" + t.Stack
		if prev, ok := seen[key]; ok {
			return Set{}, malformed("%s: two templates for %s: %s and %s", path, key, prev, t.Path)
		}
		seen[key] = t.Path
	}
	return set, nil
}

// Compatible refuses a file on one side and a directory on the other: the
// single template would be compared with one stack and every other stack
// would count as removed, which is never what the caller meant.
func Compatible(old, new Set) error {
	if (old.Layout == LayoutFile) != (new.Layout == LayoutFile) {
		return malformed("mismatched layouts: %s is a %s, %s is a %s; pass two files or two directories", old.Path, describe(old.Layout), new.Path, describe(new.Layout))
	}
	return nil
}

func describe(l Layout) string {
	switch l {
	case LayoutFile:
		return "single template file"
	case LayoutGolden:
		return "golden directory"
	default:
		return "cloud assembly"
	}
}

func isAssembly(dir string) (bool, error) {
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err == nil {
		return true, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, malformed("%s: cannot read: %v", filepath.Join(dir, "manifest.json"), assembly.UnwrapPathError(err))
	}
	return false, nil
}

// goldenStages lists the subdirectories holding *.template.json files.
func goldenStages(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, malformed("%s: cannot read: %v", dir, assembly.UnwrapPathError(err))
	}
	var stages []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		// A cdk.out holds assembly-<stage> directories; they are not stages.
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "manifest.json")); err == nil {
			continue
		}
		matches, err := filepath.Glob(filepath.Join(dir, e.Name(), "*.template.json"))
		if err != nil {
			return nil, malformed("%s: %v", dir, err)
		}
		if len(matches) > 0 {
			stages = append(stages, e.Name())
		}
	}
	return stages, nil
}

func (s *Set) loadGolden(dir string, stages []string) error {
	for _, stage := range stages {
		files, _ := filepath.Glob(filepath.Join(dir, stage, "*.template.json"))
		sort.Strings(files)
		for _, f := range files {
			t, err := ReadTemplate(f)
			if err != nil {
				return err
			}
			// The layout names the stage and stack; metadata may be absent
			// in hand-written fixtures.
			t.Stage = stage
			t.Stack = strings.TrimSuffix(filepath.Base(f), ".template.json")
			s.Templates = append(s.Templates, t)
		}
	}
	return nil
}

// loadAssembly reads a cloud assembly's stacks, nested stage assemblies
// included.
func (s *Set) loadAssembly(dir string) error {
	stacks, err := assembly.Stacks(dir)
	if err != nil {
		return malformed("%v", err)
	}
	for _, st := range stacks {
		t, err := ReadTemplate(st.Template)
		if err != nil {
			return err
		}
		t.Stage, t.Stack = st.Stage, st.ID
		s.Templates = append(s.Templates, t)
	}
	return nil
}

// ReadTemplate reads and parses one template file.
func ReadTemplate(path string) (*Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, malformed("%s: cannot read: %v", path, assembly.UnwrapPathError(err))
	}
	return ParseTemplate(path, data)
}

// ParseTemplate parses a template; path only names it in errors and output.
// Stage and Stack come from the aws:cdk:path metadata, else the file name.
func ParseTemplate(path string, data []byte) (*Template, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, malformed("%s: invalid JSON: %v", path, err)
	}
	raw, ok := top["Resources"]
	if !ok {
		return nil, malformed("%s: no Resources section (not a CloudFormation template?)", path)
	}
	var resources map[string]json.RawMessage
	if err := json.Unmarshal(raw, &resources); err != nil || resources == nil {
		return nil, malformed("%s: Resources is not an object", path)
	}
	t := &Template{
		Path:      path,
		Stack:     strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".json"), ".template"),
		Resources: make(map[string]Resource, len(resources)),
		tables:    map[string]*table{},
	}
	var cdkPaths []string
	for _, id := range slices.Sorted(maps.Keys(resources)) {
		var r struct {
			Type                string
			Properties          map[string]any
			DeletionPolicy      any
			UpdateReplacePolicy any
			Metadata            map[string]any
		}
		if err := json.Unmarshal(resources[id], &r); err != nil {
			return nil, malformed("%s: resource %s: %v", path, id, err)
		}
		if r.Type == "" {
			return nil, malformed("%s: resource %s has no Type", path, id)
		}
		res := Resource{
			Type:                r.Type,
			Properties:          r.Properties,
			DeletionPolicy:      render(r.DeletionPolicy),
			UpdateReplacePolicy: render(r.UpdateReplacePolicy),
		}
		if p, ok := r.Metadata["aws:cdk:path"].(string); ok {
			res.CDKPath = p
			cdkPaths = append(cdkPaths, p)
		}
		t.Resources[id] = res
		if isTable(r.Type) {
			tb, err := parseTable(id, res)
			if err != nil {
				return nil, malformed("%s: resource %s: %v", path, id, err)
			}
			t.tables[id] = tb
		}
	}
	for _, p := range cdkPaths {
		if parts := strings.Split(p, "/"); len(parts) >= 3 {
			t.Stage, t.Stack = parts[0], parts[1]
			break
		}
	}
	return t, nil
}

// render turns a JSON value into text for comparison and output: strings as
// they are, anything else (an intrinsic function) as compact JSON.
func render(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

func (t *Template) String() string {
	return fmt.Sprintf("%s/%s (%s)", t.Stage, t.Stack, t.Path)
}
