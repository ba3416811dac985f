package services_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// devOnly are the packages that serve tests and the local runner: every
// package under devtools/ (devOnlyTree), and these. A Lambda binary that
// linked one would carry its dependencies (the DynamoDB Streams client, a
// java launcher, template parsing) into every cold start.
const devOnlyTree = "github.com/dynastack/dynastack/lambdas/devtools/"

var devOnly = []string{
	"github.com/dynastack/dynastack/lambdas/cmd/local",
	"github.com/dynastack/dynastack/lambdas/devtools/apitest",
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables",
	"github.com/dynastack/dynastack/lambdas/devtools/ddblocal",
	"github.com/dynastack/dynastack/lambdas/devtools/jwtauth",
	"github.com/dynastack/dynastack/lambdas/devtools/repo",
	"github.com/dynastack/dynastack/lambdas/devtools/testenv",
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams",
	"testing",
}

// TestLambdaMainsLinkNoDevPackages builds the dependency list of every
// Lambda main as `go build -tags lambda.norpc` sees it.
func TestLambdaMainsLinkNoDevPackages(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "lambda.norpc", "-f",
		`{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "../cmd/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	mains := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, " ")
		// A Lambda main is one that links aws-lambda-go/lambda, as gofunction
		// finds them; the local runner and operator tools (stak-replay) run
		// on a workstation.
		if strings.HasSuffix(pkg, "/cmd/local") || !slices.Contains(strings.Fields(deps), "github.com/aws/aws-lambda-go/lambda") {
			continue
		}
		mains++
		for _, d := range strings.Fields(deps) {
			if strings.HasPrefix(d, devOnlyTree) || slices.Contains(devOnly, d) {
				t.Errorf("%s links the dev-only package %s", pkg, d)
			}
		}
	}
	if mains < 6 {
		t.Errorf("checked %d Lambda mains, want at least 6:\n%s", mains, out)
	}
}
