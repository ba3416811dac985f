// Package workflows checks the GitHub workflows for what actionlint does
// not: every action pinned by commit SHA, the pull-request workflow's trust
// boundary (only a job that runs no pull-request code holds the AWS OIDC
// token or a write permission), and Dependabot covering every module.
package workflows

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/dynastack/dynastack/lambdas/devtools/repo"
)

// root is the repository's: the workflows and the go.mod files checked are
// outside this module, so every test calls repo.DependOnTree and its
// cached result holds for the same tree only.
const root = "../.."

type workflow struct {
	Permissions any            `yaml:"permissions"`
	Jobs        map[string]job `yaml:"jobs"`
}

type job struct {
	Permissions any    `yaml:"permissions"`
	Needs       any    `yaml:"needs"`
	Steps       []step `yaml:"steps"`
}

type step struct {
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	With map[string]string `yaml:"with"`
}

func load(t *testing.T, name string) (workflow, string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, ".github", "workflows", name))
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(raw, &w); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return w, string(raw)
}

// pinned is owner/repo[/path]@<40 hex> # v<major>[.minor.patch]: the SHA is
// what runs, the comment is what a reviewer and Dependabot read.
var pinned = regexp.MustCompile(`^\s*(?:-\s+)?uses:\s+([\w.-]+/[\w./-]+)@([0-9a-f]{40}) # v\d+(?:\.\d+){0,2}\s*$`)

func TestActionsPinnedBySHA(t *testing.T) {
	repo.DependOnTree()
	files, _ := filepath.Glob(filepath.Join(root, ".github", "workflows", "*.yml"))
	if len(files) < 2 {
		t.Fatalf("found %d workflows, want ci.yml and pull-request.yml", len(files))
	}
	uses := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(raw), "\n") {
			if !regexp.MustCompile(`^\s*(-\s+)?uses:`).MatchString(line) {
				continue
			}
			uses++
			if strings.Contains(line, "uses: ./") {
				continue // a local action is the repository's own code
			}
			if !pinned.MatchString(line) {
				t.Errorf("%s:%d: %q: pin the action by its full commit SHA with the version as a comment (uses: owner/repo@<sha> # vN.N.N)", filepath.Base(f), i+1, strings.TrimSpace(line))
			}
		}
	}
	if uses == 0 {
		t.Fatal("no uses: lines found; the check would pass vacuously")
	}
}

// grants returns a job's permissions as scope -> level; a job without
// its own block gets the workflow's.
func grants(w workflow, j job) map[string]string {
	p := j.Permissions
	if p == nil {
		p = w.Permissions
	}
	out := map[string]string{}
	switch p := p.(type) {
	case map[string]any:
		for k, v := range p {
			out[k], _ = v.(string)
		}
	case string: // read-all / write-all
		out["*"] = p
	}
	return out
}

// runsPullRequestCode: a job checks out the pull request's head (a checkout
// without a ref) and runs something.
func runsPullRequestCode(j job) bool {
	for _, s := range j.Steps {
		if strings.HasPrefix(s.Uses, "actions/checkout@") && s.With["ref"] == "" {
			return true
		}
	}
	return false
}

// cdkCommand is a line that starts the CDK CLI.
var cdkCommand = regexp.MustCompile(`^(node_modules/\.bin/)?cdk\s`)

func TestPullRequestTrustBoundary(t *testing.T) {
	repo.DependOnTree()
	w, _ := load(t, "pull-request.yml")
	if m, ok := w.Permissions.(map[string]any); !ok || len(m) != 0 {
		t.Errorf("workflow permissions %v: set `permissions: {}` and give each job its own", w.Permissions)
	}
	var oidc, writers, prCode []string
	for name, j := range w.Jobs {
		g := grants(w, j)
		if j.Permissions == nil {
			t.Errorf("job %s has no permissions block of its own", name)
		}
		for scope, level := range g {
			if level == "write" && scope != "id-token" {
				writers = append(writers, name)
			}
			if scope == "*" {
				t.Errorf("job %s: permissions %s: list scopes one by one", name, level)
			}
		}
		if g["id-token"] == "write" {
			oidc = append(oidc, name)
		}
		for _, s := range j.Steps {
			if strings.HasPrefix(s.Uses, "actions/checkout@") && s.With["persist-credentials"] != "false" {
				t.Errorf("job %s: checkout without persist-credentials: false leaves the token in .git/config for every later step", name)
			}
		}
		if runsPullRequestCode(j) {
			prCode = append(prCode, name)
			for scope, level := range g {
				if level != "read" || scope != "contents" {
					t.Errorf("job %s runs pull-request code with %s: %s; it may hold contents: read only", name, scope, level)
				}
			}
		}
	}
	if len(oidc) != 1 {
		t.Fatalf("jobs with id-token: write: %v, want exactly one", oidc)
	}
	if len(prCode) == 0 {
		t.Fatal("no job checks out the pull request: the synth job is missing")
	}

	// The credentialed job runs nothing from the pull request: a checkout
	// of the base commit's npm files, the CLI pinned there installed
	// without scripts, and cdk diff over the downloaded assembly.
	cred := w.Jobs[oidc[0]]
	downloaded := ""
	for _, s := range cred.Steps {
		switch {
		case strings.HasPrefix(s.Uses, "actions/checkout@"):
			if s.With["ref"] != "${{ github.event.pull_request.base.sha }}" {
				t.Errorf("job %s checks out %q; it may check out the base commit only", oidc[0], s.With["ref"])
			}
			files := strings.Fields(s.With["sparse-checkout"])
			slices.Sort(files)
			if !slices.Equal(files, []string{".npmrc", "package-lock.json", "package.json"}) {
				t.Errorf("job %s checks out %v of the base commit; package.json, package-lock.json and .npmrc are all it needs", oidc[0], files)
			}
		case strings.HasPrefix(s.Uses, "actions/download-artifact@"):
			downloaded = s.With["path"]
		}
		for _, line := range strings.Split(strings.TrimSpace(s.Run), "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			if regexp.MustCompile(`(^|[\s;&|])(make|go|npx|bash|sh|\./)`).MatchString(line) {
				t.Errorf("job %s runs %q: it may run only npm ci --ignore-scripts and cdk diff --app <downloaded assembly>", oidc[0], line)
			}
			if strings.Contains(line, "npm ") && !strings.Contains(line, "npm ci --ignore-scripts") {
				t.Errorf("job %s runs %q: install with npm ci --ignore-scripts (no lifecycle scripts)", oidc[0], line)
			}
			if cdkCommand.MatchString(line) && (downloaded == "" || !strings.Contains(line, "--app "+downloaded+" ")) {
				t.Errorf("job %s runs %q: cdk must read the downloaded assembly (--app %s), never synthesize", oidc[0], line, downloaded)
			}
		}
	}
	if downloaded == "" {
		t.Errorf("job %s downloads no assembly", oidc[0])
	}
	if runsPullRequestCode(cred) {
		t.Errorf("job %s holds id-token: write and checks out the pull request", oidc[0])
	}

	// The one writer posts the comment and runs no pull-request code.
	if len(writers) != 1 {
		t.Fatalf("jobs with a write permission: %v, want exactly one (the comment)", writers)
	}
	for _, s := range w.Jobs[writers[0]].Steps {
		if strings.HasPrefix(s.Uses, "actions/checkout@") {
			t.Errorf("job %s holds a write permission and checks out code", writers[0])
		}
		if regexp.MustCompile(`(^|[\s;&|])(make|go|npm|npx|node|cdk)\s`).MatchString(s.Run) {
			t.Errorf("job %s holds a write permission and runs %q", writers[0], s.Run)
		}
	}

	// The synth job hands the assembly over.
	uploads := false
	for _, name := range prCode {
		for _, s := range w.Jobs[name].Steps {
			if strings.HasPrefix(s.Uses, "actions/upload-artifact@") && strings.HasPrefix(strings.TrimSpace(s.With["path"]), "cdk.out") {
				uploads = true
			}
		}
	}
	if !uploads {
		t.Error("no job uploads cdk.out for the deployed diff")
	}
}

func TestCIReadOnly(t *testing.T) {
	repo.DependOnTree()
	w, _ := load(t, "ci.yml")
	for name, j := range w.Jobs {
		for scope, level := range grants(w, j) {
			if scope != "contents" || level != "read" {
				t.Errorf("ci job %s: %s: %s; CI needs contents: read only", name, scope, level)
			}
		}
		for _, s := range j.Steps {
			if strings.HasPrefix(s.Uses, "actions/checkout@") && s.With["persist-credentials"] != "false" {
				t.Errorf("ci job %s: checkout without persist-credentials: false", name)
			}
		}
	}
}

func TestDependabotCoversEveryModule(t *testing.T) {
	repo.DependOnTree()
	raw, err := os.ReadFile(filepath.Join(root, ".github", "dependabot.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Updates []struct {
			Ecosystem   string   `yaml:"package-ecosystem"`
			Directory   string   `yaml:"directory"`
			Directories []string `yaml:"directories"`
		} `yaml:"updates"`
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	covered := map[string]map[string]bool{}
	for _, u := range cfg.Updates {
		if covered[u.Ecosystem] == nil {
			covered[u.Ecosystem] = map[string]bool{}
		}
		for _, d := range append(u.Directories, u.Directory) {
			if d != "" {
				covered[u.Ecosystem][d] = true
			}
		}
	}
	if !covered["github-actions"]["/"] || !covered["npm"]["/"] {
		t.Errorf("dependabot: github-actions %v, npm %v; want both at /", covered["github-actions"], covered["npm"])
	}
	var modules []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "cdk.out") {
			return filepath.SkipDir
		}
		// A patched copy of a dependency follows its upstream release by
		// hand (lambdas/third_party/*/README.md says how), not by
		// Dependabot.
		if d.IsDir() && d.Name() == "third_party" {
			return filepath.SkipDir
		}
		if d.Name() == "go.mod" {
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			modules = append(modules, "/"+filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(modules) < 5 {
		t.Fatalf("found modules %v; the walk missed the repository", modules)
	}
	for _, m := range modules {
		if !covered["gomod"][m] {
			t.Errorf("go module %s is not in .github/dependabot.yml (gomod directories)", m)
		}
	}
}

// TestCIScansForVulnerabilities: CI runs make vulncheck (govulncheck over
// every module and the JSON Schema copy's upstream release), which the
// replace in lambdas/go.mod would otherwise hide.
func TestCIScansForVulnerabilities(t *testing.T) {
	repo.DependOnTree()
	w, _ := load(t, "ci.yml")
	for _, j := range w.Jobs {
		for _, s := range j.Steps {
			if strings.TrimSpace(s.Run) == "make vulncheck" {
				return
			}
		}
	}
	t.Error("no ci.yml job runs make vulncheck")
}
