package e2e

import (
	"testing"

	constructsitsm "github.com/dynastack/dynastack/constructs/itsm"
	"github.com/dynastack/dynastack/infra/stacks"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/services"
	lambdaitsm "github.com/dynastack/dynastack/lambdas/services/itsm"
)

// The lambdas module cannot import the constructs (it has no CDK
// dependency), so the names both sides agree on are checked here.
func TestSharedNames(t *testing.T) {
	pairs := []struct{ what, infra, code string }{
		{"ITSM table env var", constructsitsm.EnvTableName, lambdaitsm.EnvTable},
		{"service env var", stacks.ServiceEnv, cfntables.EnvService},
	}
	for _, p := range pairs {
		if p.infra != p.code {
			t.Errorf("%s: infrastructure sets %q, code reads %q", p.what, p.infra, p.code)
		}
	}
	if _, ok := services.Lookup(constructsitsm.Service); !ok {
		t.Errorf("service %q has a stack but no registered handler", constructsitsm.Service)
	}
}
