package config_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/infra/config"
	"github.com/dynastack/dynastack/infra/secretscan"
)

// scanGo returns every string literal of a Go source file that looks
// like a secret (secretscan.Find), as "<file>:<line>: <kind>".
func scanGo(t *testing.T, name string, src []byte) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, 0)
	require.NoError(t, err, "parse %s", name)
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		require.NoError(t, err, "%s: unquote %s", fset.Position(lit.Pos()), lit.Value)
		if k := secretscan.Find(s); k != "" {
			out = append(out, fmt.Sprintf("%s: %s", fset.Position(lit.Pos()), k))
		}
		return true
	})
	return out
}

// scanTemplate returns every secret-looking value of a template file.
func scanTemplate(t *testing.T, raw []byte) []string {
	t.Helper()
	var tmpl map[string]any
	require.NoError(t, json.Unmarshal(raw, &tmpl))
	var out []string
	for _, f := range secretscan.Template(tmpl) {
		out = append(out, f.String())
	}
	return out
}

// TestNoSecretsCommitted: no golden template of any stage
// (test/snapshots/<stage>/*.json) and no string of the config source
// (infra/config, tests aside) holds a value that looks like a secret:
// a token, an access key, a URL carrying a credential, a random-looking
// string. Logical ids and asset hashes are allowed by their fields
// (secretscan.Template), not by a weaker detector. TestScannersFindPlanted
// proves the same scan fails on a planted value.
func TestNoSecretsCommitted(t *testing.T) {
	root, err := config.RepoRoot()
	require.NoError(t, err)
	for _, s := range config.Stages() {
		files, err := filepath.Glob(filepath.Join(root, "test", "snapshots", string(s.Name), "*.json"))
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(files), 5, "%s: golden templates", s.Name)
		for _, f := range files {
			raw, err := os.ReadFile(f)
			require.NoError(t, err)
			assert.Empty(t, scanTemplate(t, raw), "%s: secret-looking values (move the value to SSM SecureString or Secrets Manager and pass its name)", f)
		}
	}
	files, err := filepath.Glob(filepath.Join(root, "infra", "config", "*.go"))
	require.NoError(t, err)
	scanned := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.Empty(t, scanGo(t, filepath.Base(f), src), "%s: secret-looking string literals", f)
		scanned++
	}
	assert.GreaterOrEqual(t, scanned, 5, "config source files scanned")
}

// TestScannersFindPlanted: the scans of TestNoSecretsCommitted fail when
// a secret is planted in a real golden template (a Lambda environment
// variable, an alarm subscription) or in config source.
func TestScannersFindPlanted(t *testing.T) {
	root, err := config.RepoRoot()
	require.NoError(t, err)
	golden, err := os.ReadFile(filepath.Join(root, "test", "snapshots", "prod", "rezagent.template.json"))
	require.NoError(t, err)
	require.Empty(t, scanTemplate(t, golden), "the real template passes")
	for _, tt := range []struct {
		name, old, new, want string
	}{
		{"ntfy token in the processor's environment", `"NTFY_TOPIC": "rez-agent-prod"`, `"NTFY_TOKEN": "tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2", "NTFY_TOPIC": "rez-agent-prod"`,
			"Environment.Variables.NTFY_TOKEN: an ntfy access token (tk_…)"},
		{"random topic in the processor's environment", `"NTFY_TOPIC": "rez-agent-prod"`, `"NTFY_TOPIC": "rez-agent-prod-a4733f0f2da693eb99826bfdea938f51"`,
			"Environment.Variables.NTFY_TOPIC: a random-looking string"},
		{"ntfy URL with credentials", `"NTFY_URL": "https://ntfy.sh"`, `"NTFY_URL": "https://rez:hunter2@ntfy.sh"`,
			"Environment.Variables.NTFY_URL: a URL with user information (user:password@)"},
		{"AWS key in the environment", `"NTFY_URL": "https://ntfy.sh"`, `"AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE", "NTFY_URL": "https://ntfy.sh"`,
			"Environment.Variables.AWS_ACCESS_KEY_ID: an AWS access key id"},
		{"Slack webhook subscribed", `"Endpoint": "dynastack-oncall@example.com"`, `"Endpoint": "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"`,
			"Properties.Endpoint: a Slack webhook URL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, string(golden), tt.old, "the golden template no longer has the line to plant beside")
			planted := strings.Replace(string(golden), tt.old, tt.new, 1)
			got := scanTemplate(t, []byte(planted))
			require.Len(t, got, 1, "findings")
			assert.Contains(t, got[0], tt.want, "finding")
			assert.NotContains(t, got[0], "hunter2", "the finding repeats the secret")
		})
	}
	for _, tt := range []struct{ name, src, want string }{
		{"ntfy token", "package config\n\nconst ntfyToken = \"tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2\"\n", "x.go:3:19: an ntfy access token (tk_…)"},
		{"webhook with a token", "package config\n\nvar hooks = []string{\n\t\"https://alerts.acme.io/sns?token=abc\",\n}\n", "x.go:4:2: a URL with a credential in its query"},
		{"unguessable topic", "package config\n\nfunc f() { _ = RezAgentPipeline{NtfyTopic: `rez-prod-9f86d081884c7d659a2feaa0`} }\n", "x.go:3:44: a random-looking string"},
		{"JWT", "package config\n\nconst tok = \"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1MSJ9.c2ln\"\n", "x.go:3:13: a JWT"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, []string{tt.want}, scanGo(t, "x.go", []byte(tt.src)), "findings")
		})
	}
}
