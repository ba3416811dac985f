package synth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/infra/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var stageNames = []string{"dev", "stage", "prod"}

func TestDeployingStages(t *testing.T) {
	cli := func(args ...string) [][]string {
		return [][]string{{"/home/u/go/bin/app"}, {"go", "run", "./app"}, {"/bin/sh", "-c", "go run ./app"},
			append([]string{"node", "/repo/node_modules/.bin/cdk"}, args...), {"make", "deploy"}}
	}
	for _, tt := range []struct {
		name      string
		context   string
		ancestors [][]string
		want      []string
		err       string
	}{
		{"make deploy's context", "prod", cli("deploy", "-c", "dynastack:deploy=prod", "prod/*"), []string{"prod"}, ""},
		{"context wins over the command", "dev", cli("deploy", "prod/*"), []string{"dev"}, ""},
		{"two stages", "stage, prod", nil, []string{"stage", "prod"}, ""},
		{"an unknown stage", "qa", nil, nil, `"qa" is not a stage; use one of dev, stage, prod`},
		{"a bare cdk deploy", "", cli("deploy", "--require-approval", "broadening", "prod/*"), []string{"prod"}, ""},
		{"one stack", "", cli("deploy", "--profile", "prod", "stage/itsm"), []string{"stage"}, ""},
		{"every stage's stack", "", cli("deploy", "*/itsm"), []string{"dev", "stage", "prod"}, ""},
		{"--all", "", cli("deploy", "--all"), []string{"dev", "stage", "prod"}, ""},
		{"dev only", "", cli("deploy", "--outputs-file", "out/o.json", "dev/*"), []string{"dev"}, ""},
		{"npx", "", [][]string{{"go", "run", "./app"}, {"npm", "exec", "cdk", "deploy", "prod/*"}}, []string{"prod"}, ""},
		{"cdk synth", "", cli("synth", "--quiet", "prod/*"), nil, ""},
		{"cdk diff", "", cli("diff", "prod/*"), nil, ""},
		{"no CLI (tests, go run)", "", [][]string{{"go", "test", "./..."}, {"make", "test"}}, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DeployingStages(tt.context, tt.ancestors, stageNames)
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			if assert.NoError(t, err, "DeployingStages()") {
				assert.Equal(t, tt.want, got, "DeployingStages()")
			}
		})
	}
}

func TestPreflight(t *testing.T) {
	stages := config.Stages()
	assert.NoError(t, Preflight(stages, nil), "no deploy")
	assert.NoError(t, Preflight(stages, []string{"dev"}), "dev deploys with the local defaults")
	err := Preflight(stages, []string{"prod"})
	require.Error(t, err, "a deploy of prod with placeholder settings passed")
	lines := strings.Split(err.Error(), "\n")
	assert.Len(t, lines, 7, "want one line per setting:\n%v", err)
	assert.True(t, strings.HasPrefix(lines[0], "stage prod: Account is not set"), "first line:\n%v", err)
	err = Preflight(stages, []string{"stage", "prod"})
	if assert.Error(t, err, "stage and prod") {
		assert.Equal(t, 13, strings.Count(err.Error(), "\n"), "stage and prod: %v", err)
	}
}

// TestProcessInfo: the reader of the process table sees this process as
// it is (its arguments and its parent), which is what Ancestors walks.
func TestProcessInfo(t *testing.T) {
	argv, ppid, ok := processInfo(os.Getpid())
	if assert.True(t, ok, "processInfo(self) not ok") && assert.NotEmpty(t, argv, "processInfo(self)") {
		assert.Equal(t, os.Getppid(), ppid, "processInfo(self) parent")
		assert.True(t, strings.HasSuffix(argv[0], filepath.Base(os.Args[0])), "processInfo(self) = %v; want %v", argv, os.Args)
	}
	assert.NotEmpty(t, Ancestors(), "no ancestor readable: a bare cdk deploy would go unnoticed")
}
