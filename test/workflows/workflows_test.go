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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, err)
	var w workflow
	require.NoError(t, yaml.Unmarshal(raw, &w), "%s", name)
	return w, string(raw)
}

// pinned is owner/repo[/path]@<40 hex> # v<major>[.minor.patch]: the SHA is
// what runs, the comment is what a reviewer and Dependabot read.
var pinned = regexp.MustCompile(`^\s*(?:-\s+)?uses:\s+([\w.-]+/[\w./-]+)@([0-9a-f]{40}) # v\d+(?:\.\d+){0,2}\s*$`)

func TestActionsPinnedBySHA(t *testing.T) {
	repo.DependOnTree()
	files, _ := filepath.Glob(filepath.Join(root, ".github", "workflows", "*.yml"))
	require.GreaterOrEqual(t, len(files), 2, "workflows found: want ci.yml and pull-request.yml")
	uses := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		for i, line := range strings.Split(string(raw), "\n") {
			if !regexp.MustCompile(`^\s*(-\s+)?uses:`).MatchString(line) {
				continue
			}
			uses++
			if strings.Contains(line, "uses: ./") {
				continue // a local action is the repository's own code
			}
			assert.Regexp(t, pinned, line, "%s:%d: pin the action by its full commit SHA with the version as a comment (uses: owner/repo@<sha> # vN.N.N)", filepath.Base(f), i+1)
		}
	}
	require.NotZero(t, uses, "no uses: lines found; the check would pass vacuously")
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
	assert.Equal(t, map[string]any{}, w.Permissions, "workflow permissions: set `permissions: {}` and give each job its own")
	var oidc, writers, prCode []string
	for name, j := range w.Jobs {
		g := grants(w, j)
		assert.NotNil(t, j.Permissions, "job %s has no permissions block of its own", name)
		for scope, level := range g {
			if level == "write" && scope != "id-token" {
				writers = append(writers, name)
			}
			assert.NotEqual(t, "*", scope, "job %s: permissions %s: list scopes one by one", name, level)
		}
		if g["id-token"] == "write" {
			oidc = append(oidc, name)
		}
		for _, s := range j.Steps {
			if strings.HasPrefix(s.Uses, "actions/checkout@") {
				assert.Equal(t, "false", s.With["persist-credentials"], "job %s: checkout without persist-credentials: false leaves the token in .git/config for every later step", name)
			}
		}
		if runsPullRequestCode(j) {
			prCode = append(prCode, name)
			for scope, level := range g {
				assert.Equal(t, "contents: read", scope+": "+level, "job %s runs pull-request code; it may hold contents: read only", name)
			}
		}
	}
	require.Len(t, oidc, 1, "jobs with id-token: write: want exactly one")
	require.NotEmpty(t, prCode, "no job checks out the pull request: the synth job is missing")

	// The credentialed job runs nothing from the pull request: a checkout
	// of the base commit's npm files, the CLI pinned there installed
	// without scripts, and cdk diff over the downloaded assembly.
	cred := w.Jobs[oidc[0]]
	downloaded := ""
	for _, s := range cred.Steps {
		switch {
		case strings.HasPrefix(s.Uses, "actions/checkout@"):
			assert.Equal(t, "${{ github.event.pull_request.base.sha }}", s.With["ref"], "job %s: it may check out the base commit only", oidc[0])
			files := strings.Fields(s.With["sparse-checkout"])
			slices.Sort(files)
			assert.Equal(t, []string{".npmrc", "package-lock.json", "package.json"}, files, "job %s: package.json, package-lock.json and .npmrc of the base commit are all it needs", oidc[0])
		case strings.HasPrefix(s.Uses, "actions/download-artifact@"):
			downloaded = s.With["path"]
		}
		for _, line := range strings.Split(strings.TrimSpace(s.Run), "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			assert.NotRegexp(t, `(^|[\s;&|])(make|go|npx|bash|sh|\./)`, line, "job %s: it may run only npm ci --ignore-scripts and cdk diff --app <downloaded assembly>", oidc[0])
			if strings.Contains(line, "npm ") {
				assert.Contains(t, line, "npm ci --ignore-scripts", "job %s: install with npm ci --ignore-scripts (no lifecycle scripts)", oidc[0])
			}
			if cdkCommand.MatchString(line) {
				assert.NotEmpty(t, downloaded, "job %s runs %q: cdk must read the downloaded assembly, never synthesize", oidc[0], line)
				assert.Contains(t, line, "--app "+downloaded+" ", "job %s: cdk must read the downloaded assembly, never synthesize", oidc[0])
			}
		}
	}
	assert.NotEmpty(t, downloaded, "job %s downloads no assembly", oidc[0])
	assert.False(t, runsPullRequestCode(cred), "job %s holds id-token: write and checks out the pull request", oidc[0])

	// The one writer posts the comment and runs no pull-request code.
	require.Len(t, writers, 1, "jobs with a write permission: want exactly one (the comment)")
	for _, s := range w.Jobs[writers[0]].Steps {
		assert.False(t, strings.HasPrefix(s.Uses, "actions/checkout@"), "job %s holds a write permission and checks out code", writers[0])
		assert.NotRegexp(t, `(^|[\s;&|])(make|go|npm|npx|node|cdk)\s`, s.Run, "job %s holds a write permission and runs a command", writers[0])
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
	assert.True(t, uploads, "no job uploads cdk.out for the deployed diff")
}

func TestCIReadOnly(t *testing.T) {
	repo.DependOnTree()
	w, _ := load(t, "ci.yml")
	for name, j := range w.Jobs {
		for scope, level := range grants(w, j) {
			assert.Equal(t, "contents: read", scope+": "+level, "ci job %s: CI needs contents: read only", name)
		}
		for _, s := range j.Steps {
			if strings.HasPrefix(s.Uses, "actions/checkout@") {
				assert.Equal(t, "false", s.With["persist-credentials"], "ci job %s: checkout without persist-credentials: false", name)
			}
		}
	}
}

func TestDependabotCoversEveryModule(t *testing.T) {
	repo.DependOnTree()
	raw, err := os.ReadFile(filepath.Join(root, ".github", "dependabot.yml"))
	require.NoError(t, err)
	var cfg struct {
		Updates []struct {
			Ecosystem   string   `yaml:"package-ecosystem"`
			Directory   string   `yaml:"directory"`
			Directories []string `yaml:"directories"`
		} `yaml:"updates"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &cfg))
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
	assert.True(t, covered["github-actions"]["/"], "dependabot: github-actions %v; want it at /", covered["github-actions"])
	assert.True(t, covered["npm"]["/"], "dependabot: npm %v; want it at /", covered["npm"])
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
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(modules), 5, "found modules %v; the walk missed the repository", modules)
	for _, m := range modules {
		assert.True(t, covered["gomod"][m], "go module %s is not in .github/dependabot.yml (gomod directories)", m)
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
	assert.Fail(t, "no ci.yml job runs make vulncheck")
}
