package test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	rezagentcontract "github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/infra/secretscan"
)

// TestSynthHoldsNoSecrets: the templates as synthesized, before golden
// files normalize asset hashes away, hold no secret-looking value in any
// stage: the scan of infra/config's TestNoSecretsCommitted, over what
// would deploy (real asset hashes in S3Key and the asset metadata, which
// secretscan allows by field). And no function's environment carries
// NTFY_TOKEN, the local runner's plaintext ntfy token: a deployed
// processor gets the name of its SSM parameter only.
func TestSynthHoldsNoSecrets(t *testing.T) {
	require.Len(t, asm.Templates, 3, "stages synthesized")
	for stage, stacks := range asm.Templates {
		for id, tmpl := range stacks {
			var found []string
			for _, f := range secretscan.Template(tmpl) {
				found = append(found, f.String())
			}
			assert.Empty(t, found, "%s/%s: secret-looking values", stage, id)
			for fid, fn := range tmpl.Resources("AWS::Lambda::Function") {
				env, _ := props(fn)["Environment"].(map[string]any)
				vars, _ := env["Variables"].(map[string]any)
				assert.NotContains(t, vars, rezagentcontract.EnvNtfyToken, "%s/%s %s: a plaintext ntfy token variable", stage, id, fid)
			}
		}
	}
}
