package nucleus_test

import (
	"testing"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	svc "github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryRouteIsIAM: the audit log's user is the IAM caller's ARN, and
// X-User-Id counts only where API Gateway names no IAM caller, which on
// the deployed API (every route IAM) is never. A route of another
// authorizer (a JWT route) would let its caller name any user in the
// audit log with that header: such a route must first teach the handler
// to read its own authorizer's subject, and change this test.
func TestEveryRouteIsIAM(t *testing.T) {
	fns := contract.Service.HTTPFunctions()
	require.NotEmpty(t, fns, "Nucleus has an HTTP API")
	for _, fn := range fns {
		for _, r := range fn.Routes {
			assert.Equal(t, svc.IAM, r.Auth, "%s: its writes would take the user from %s", r.Key(), nucleus.HeaderUserID)
		}
	}
}
