package workflows

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/dynastack/dynastack/lambdas/devtools/repo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// full is a workflow with what the delivery workflows' tests read beyond
// workflow's fields.
type full struct {
	On          map[string]any     `yaml:"on"`
	Permissions any                `yaml:"permissions"`
	Concurrency map[string]any     `yaml:"concurrency"`
	Jobs        map[string]fullJob `yaml:"jobs"`
}

type fullJob struct {
	If          string            `yaml:"if"`
	Needs       any               `yaml:"needs"`
	Permissions any               `yaml:"permissions"`
	Environment any               `yaml:"environment"`
	Outputs     map[string]string `yaml:"outputs"`
	Strategy    map[string]any    `yaml:"strategy"`
	Steps       []step            `yaml:"steps"`
}

func loadFull(t *testing.T, name string) full {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, ".github", "workflows", name))
	require.NoError(t, err)
	var w full
	require.NoError(t, yaml.Unmarshal(raw, &w), "%s", name)
	return w
}

// asJob adapts a fullJob to grants'.
func (j fullJob) asJob() job { return job{Permissions: j.Permissions, Needs: j.Needs, Steps: j.Steps} }

// needs lists a job's needs whatever its YAML form.
func needs(j fullJob) []string {
	switch n := j.Needs.(type) {
	case string:
		return []string{n}
	case []any:
		var out []string
		for _, v := range n {
			s, _ := v.(string)
			out = append(out, s)
		}
		return out
	}
	return nil
}

// environment is a job's GitHub environment name.
func environment(j fullJob) string {
	switch e := j.Environment.(type) {
	case string:
		return e
	case map[string]any:
		s, _ := e["name"].(string)
		return s
	}
	return ""
}

// runs joins a job's run steps.
func runs(j fullJob) string {
	var b strings.Builder
	for _, s := range j.Steps {
		b.WriteString(s.Run)
		b.WriteString("\n")
	}
	return b.String()
}

// TestReleaseWorkflow: on a push to main only, one job, the only one able
// to write (contents: write to push the tag), runs the tested script with
// the pushed commit and a history deep enough to see tags and parents.
func TestReleaseWorkflow(t *testing.T) {
	repo.DependOnTree()
	w := loadFull(t, "release.yml")
	require.Contains(t, w.On, "push", "release runs on push")
	assert.Len(t, w.On, 1, "release runs on push to main only (never on a pull request)")
	push, _ := w.On["push"].(map[string]any)
	assert.Equal(t, []any{"main"}, push["branches"], "release: push to main")
	assert.Equal(t, map[string]any{"contents": "read"}, w.Permissions, "release: workflow permissions read-only")
	require.Contains(t, w.Jobs, "tag")
	j := w.Jobs["tag"]
	assert.Equal(t, map[string]string{"contents": "write"}, grants(workflow{Permissions: w.Permissions}, j.asJob()), "tag: contents: write and nothing else")
	assert.Contains(t, runs(j), "go run ./infra/cmd/releasetag -rev \"$GITHUB_SHA\" -push", "tag: runs the tested script on the pushed commit")
	var depth string
	for _, s := range j.Steps {
		if strings.HasPrefix(s.Uses, "actions/checkout@") {
			depth = s.With["fetch-depth"]
		}
	}
	assert.Equal(t, "0", depth, "tag: checkout with fetch-depth: 0 (tags and the first parent)")
	assert.Equal(t, false, w.Concurrency["cancel-in-progress"], "release: a run is never cancelled halfway through a push")
}

// stages are the app's stages, as the golden files name them.
func stages(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "test", "snapshots"))
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestDriftWorkflow: scheduled; detection runs make drift for every stage
// with the AWS token and no write permission, and for each service placed
// in another account (infra/cmd/driftplan's matrix, planned with no
// token) with the role the plan names; filing writes issues with no AWS
// token, after both.
func TestDriftWorkflow(t *testing.T) {
	repo.DependOnTree()
	w := loadFull(t, "drift.yml")
	assert.Contains(t, w.On, "schedule", "drift runs on a schedule")
	assert.Equal(t, map[string]any{}, w.Permissions, "drift: permissions: {} at the top, each job its own")
	for _, j := range []string{"plan", "detect", "detect-placed", "issues"} {
		require.Contains(t, w.Jobs, j)
	}
	plan, detect, placed, issues := w.Jobs["plan"], w.Jobs["detect"], w.Jobs["detect-placed"], w.Jobs["issues"]
	assert.Equal(t, map[string]string{"contents": "read"}, grants(workflow{}, plan.asJob()), "plan: no AWS token")
	assert.Contains(t, runs(plan), "go run ./infra/cmd/driftplan -placed", "plan: the tested plan")
	assert.Equal(t, "${{ steps.plan.outputs.placed }}", plan.Outputs["placed"], "plan: its matrix as an output")
	assert.Equal(t, map[string]string{"contents": "read", "id-token": "write"}, grants(workflow{}, detect.asJob()), "detect: read and the OIDC token only")
	assert.Equal(t, map[string]string{"contents": "read", "id-token": "write"}, grants(workflow{}, placed.asJob()), "detect-placed: read and the OIDC token only")
	assert.Equal(t, map[string]string{"issues": "write"}, grants(workflow{}, issues.asJob()), "issues: write issues, no AWS token")
	assert.Equal(t, []string{"plan"}, needs(placed), "detect-placed after plan")
	assert.Equal(t, "${{ needs.plan.outputs.placed != '[]' }}", placed.If, "detect-placed: skipped when nothing is placed elsewhere (an empty matrix fails a run)")
	placedMatrix, _ := placed.Strategy["matrix"].(map[string]any)
	assert.Equal(t, "${{ fromJSON(needs.plan.outputs.placed) }}", placedMatrix["include"], "detect-placed: the plan's matrix")
	var role string
	for _, st := range placed.Steps {
		if strings.HasPrefix(st.Uses, "aws-actions/configure-aws-credentials@") {
			role = st.With["role-to-assume"]
		}
	}
	assert.Equal(t, "${{ matrix.role }}", role, "detect-placed: the drift role the plan names, in the service's account")
	assert.ElementsMatch(t, []string{"detect", "detect-placed"}, needs(issues), "issues after both detections")
	assert.Contains(t, runs(detect), `make drift STAGE="$STAGE" DRIFT_FLAGS="-issues drift-issues/$STAGE`, "detect: the tested make target and issue files")
	assert.Contains(t, runs(placed), `make drift STAGE="$STAGE" SERVICE="$SERVICE" DRIFT_FLAGS="-issues drift-issues/$STAGE-$SERVICE`, "detect-placed: one service's stack")
	assert.Contains(t, runs(placed), `bin/drift-$STAGE-$SERVICE.txt`, "detect-placed: reads the output make drift wrote for the service")
	include, _ := detect.Strategy["matrix"].(map[string]any)["include"].([]any)
	var got []string
	for _, e := range include {
		s, _ := e.(map[string]any)["stage"].(string)
		got = append(got, s)
	}
	assert.ElementsMatch(t, stages(t), got, "detect: every stage")
	for _, s := range issues.Steps {
		assert.False(t, strings.HasPrefix(s.Uses, "actions/checkout@"), "issues: runs no code of the repository")
	}
}

// TestDeployWorkflow: on a push to main, one synth job uploads the
// assembly; dev, stage and prod run in that order, each in its GitHub
// environment with the OIDC token and read-only contents, each downloading
// that assembly (never synthesizing), running the preflight before the
// deploy and the smoke after it.
func TestDeployWorkflow(t *testing.T) {
	repo.DependOnTree()
	w := loadFull(t, "deploy.yml")
	assert.Len(t, w.On, 1, "deploy runs on push to main only")
	push, _ := w.On["push"].(map[string]any)
	assert.Equal(t, []any{"main"}, push["branches"], "deploy: push to main")
	assert.Equal(t, map[string]any{}, w.Permissions, "deploy: permissions: {} at the top")
	assert.Equal(t, false, w.Concurrency["cancel-in-progress"], "deploy: never cancelled halfway")

	require.Contains(t, w.Jobs, "synth")
	synth := w.Jobs["synth"]
	assert.Equal(t, map[string]string{"contents": "read"}, grants(workflow{}, synth.asJob()), "synth: no AWS token")
	assert.Contains(t, runs(synth), "make synth", "synth: the app synthesized once")
	uploaded := ""
	for _, s := range synth.Steps {
		if strings.HasPrefix(s.Uses, "actions/upload-artifact@") {
			uploaded = s.With["name"]
		}
	}
	require.Equal(t, "assembly", uploaded, "synth uploads the assembly")

	order := []string{"dev", "stage", "prod"}
	assert.ElementsMatch(t, stages(t), order, "every stage is promoted")
	assert.Len(t, w.Jobs, 1+len(order), "jobs: synth and one per stage")
	for i, stage := range order {
		require.Contains(t, w.Jobs, stage)
		j := w.Jobs[stage]
		assert.Equal(t, stage, environment(j), "%s: its GitHub environment (its deploy role trusts only that)", stage)
		assert.Equal(t, map[string]string{"contents": "read", "id-token": "write"}, grants(workflow{}, j.asJob()), "%s: permissions", stage)
		want := []string{"synth"}
		if i > 0 {
			want = append(want, order[i-1])
		}
		assert.ElementsMatch(t, want, needs(j), "%s: needs", stage)
		r := runs(j)
		assert.NotContains(t, r, "make synth", "%s: never synthesizes again", stage)
		assert.NotContains(t, r, "cdk synth", "%s: never synthesizes again", stage)
		var downloaded bool
		var order []string
		for _, s := range j.Steps {
			if strings.HasPrefix(s.Uses, "actions/download-artifact@") && s.With["name"] == "assembly" {
				downloaded = true
			}
			switch {
			case strings.Contains(s.Run, "go run ./infra/cmd/preflight -stage "+stage):
				order = append(order, "preflight")
			case strings.Contains(s.Run, "cdk deploy --app assembly"):
				assert.Contains(t, s.Run, "'"+stage+"/*'", "%s: deploys its own stacks", stage)
				order = append(order, "deploy")
			case strings.Contains(s.Run, "make smoke STAGE="+stage):
				order = append(order, "smoke")
			}
		}
		assert.True(t, downloaded, "%s: deploys the uploaded assembly", stage)
		assert.Equal(t, []string{"preflight", "deploy", "smoke"}, order, "%s: preflight, deploy, smoke", stage)
	}
}

// TestTokensOutsideEnvironments: the drift roles trust any job of this
// repository on main that runs in no GitHub environment
// (config.OIDCBranchSubject), so the jobs that may ask for an OIDC token
// outside an environment are named here: drift.yml's detections (each
// stage's account, and the accounts of services placed elsewhere), and the
// pull request's deployed diff (a pull request's subject, which no role
// of the bootstrap stack trusts). A new one must not be able to read what
// the drift role reads without a review of this list.
func TestTokensOutsideEnvironments(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, ".github", "workflows", "*.yml"))
	require.NoError(t, err)
	var got []string
	for _, f := range files {
		w := loadFull(t, filepath.Base(f))
		for name, j := range w.Jobs {
			if grants(workflow{Permissions: w.Permissions}, j.asJob())["id-token"] == "write" && j.Environment == nil {
				got = append(got, filepath.Base(f)+"/"+name)
			}
		}
	}
	assert.ElementsMatch(t, []string{"drift.yml/detect", "drift.yml/detect-placed", "pull-request.yml/deployed-diff"}, got, "jobs with id-token: write in no environment")
}
