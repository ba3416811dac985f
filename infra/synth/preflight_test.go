package synth

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/infra/config"
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
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("DeployingStages() = %v, %v, want %v", got, err, tt.want)
			}
		})
	}
}

func TestPreflight(t *testing.T) {
	stages := config.Stages()
	if err := Preflight(stages, nil); err != nil {
		t.Errorf("no deploy: %v", err)
	}
	if err := Preflight(stages, []string{"dev"}); err != nil {
		t.Errorf("dev deploys with the local defaults: %v", err)
	}
	err := Preflight(stages, []string{"prod"})
	if err == nil {
		t.Fatal("a deploy of prod with placeholder settings passed")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 7 || !strings.HasPrefix(lines[0], "stage prod: Account is not set") {
		t.Errorf("%d lines, want 7 (one per setting):\n%v", len(lines), err)
	}
	if err := Preflight(stages, []string{"stage", "prod"}); err == nil || strings.Count(err.Error(), "\n") != 13 {
		t.Errorf("stage and prod: %v", err)
	}
}

// TestProcessInfo: the reader of the process table sees this process as
// it is (its arguments and its parent), which is what Ancestors walks.
func TestProcessInfo(t *testing.T) {
	argv, ppid, ok := processInfo(os.Getpid())
	if !ok || ppid != os.Getppid() || len(argv) == 0 || !strings.HasSuffix(argv[0], filepath.Base(os.Args[0])) {
		t.Errorf("processInfo(self) = %v, %d, %v; want %v, %d", argv, ppid, ok, os.Args, os.Getppid())
	}
	if len(Ancestors()) == 0 {
		t.Error("no ancestor readable: a bare cdk deploy would go unnoticed")
	}
}
