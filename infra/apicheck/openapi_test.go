package apicheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/infra/config"
)

// TestDeliberateBreakingHTTPChange makes breaking changes to a copy of
// itsm's OpenAPI document (a response field removed, a required parameter
// added) and checks the gate fails on them unless the version and the
// changelog say so.
func TestDeliberateBreakingHTTPChange(t *testing.T) {
	root, err := config.RepoRoot()
	require.NoError(t, err)
	bin := filepath.Join(root, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	tool, err := InstallOASDiff(bin)
	require.NoError(t, err)
	base := filepath.Join(root, APIDocs)
	entry := "### 2.0.0 — 2026-11-28\n\n- Breaking: deliberate.\n\n"
	for _, tt := range []struct {
		name      string
		edit      func(t *testing.T, doc map[string]any)
		version   string
		changelog string
		fails     bool
		change    string
	}{
		{"no change", func(*testing.T, map[string]any) {}, "", "", false, ""},
		{"a response field removed", removeTicketField, "", "", true, "comments"},
		{"a required parameter added", requireParameter, "", "", true, "required"},
		{"a response field removed, a major bump without a changelog entry", removeTicketField, "2.0.0", "", true, "comments"},
		{"a response field removed, a major bump with its changelog entry", removeTicketField, "2.0.0", entry, false, "comments"},
		{"a required parameter added, a minor bump with an entry", requireParameter, "1.1.0", "### 1.1.0 — 2026-11-28\n\n- Added.\n\n", true, "required"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			head := t.TempDir()
			require.NoError(t, os.CopyFS(head, os.DirFS(base)))
			p := filepath.Join(head, "itsm.openapi.json")
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			var doc map[string]any
			require.NoError(t, json.Unmarshal(b, &doc))
			tt.edit(t, doc)
			if tt.version != "" {
				doc["info"].(map[string]any)["version"] = tt.version
			}
			b, err = json.MarshalIndent(doc, "", "  ")
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, b, 0o644))
			if tt.changelog != "" {
				c, err := os.ReadFile(filepath.Join(head, "CHANGELOG.md"))
				require.NoError(t, err)
				s := strings.Replace(string(c), "## itsm\n\n", "## itsm\n\n"+tt.changelog, 1)
				require.NotEqual(t, string(c), s, "the itsm section of the changelog")
				require.NoError(t, os.WriteFile(filepath.Join(head, "CHANGELOG.md"), []byte(s), 0o644))
			}
			rs, err := CompareHTTP(tool, base, head)
			require.NoError(t, err)
			var itsm *ServiceReport
			for i := range rs {
				if rs[i].Service == "itsm" {
					itsm = &rs[i]
				} else {
					assert.Empty(t, rs[i].Changes, "%s: unchanged", rs[i].Service)
					assert.Empty(t, rs[i].Problem(), "%s: unchanged", rs[i].Service)
				}
			}
			require.NotNil(t, itsm, "a report for itsm")
			p2 := itsm.Problem()
			assert.Equal(t, tt.fails, p2 != "", "Problem() = %q (changes %v)", p2, itsm.Changes)
			if tt.change != "" {
				var all []string
				for _, c := range itsm.Breaking() {
					all = append(all, c.String())
				}
				assert.Contains(t, strings.Join(all, "\n"), tt.change, "the breaking changes name it")
			} else {
				assert.Empty(t, itsm.Breaking(), "no breaking change")
			}
		})
	}
}

// TestLogged reads a service's section of the changelog only.
func TestLogged(t *testing.T) {
	c := "# Changelog\n\n## itsm\n\n### 2.0.0 — x\n\n## stak\n\n### 3.0.0 — y\n"
	assert.True(t, logged(c, "itsm", "2.0.0"), "itsm 2.0.0")
	assert.False(t, logged(c, "itsm", "3.0.0"), "another service's entry")
	assert.False(t, logged(c, "nucleus", "2.0.0"), "no section")
}

func removeTicketField(t *testing.T, doc map[string]any) {
	op := doc["paths"].(map[string]any)["/tickets/{id}"].(map[string]any)["get"].(map[string]any)
	s := op["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
	// A ticket is a named schema every operation answering one refers to
	// (components/schemas/Ticket): the field goes from there.
	if ref, ok := s["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		s = doc["components"].(map[string]any)["schemas"].(map[string]any)[name].(map[string]any)
	}
	props := s["properties"].(map[string]any)
	require.Contains(t, props, "comments", "the field to remove: update the deliberate change")
	delete(props, "comments")
	var req []any
	for _, f := range s["required"].([]any) {
		if f != "comments" {
			req = append(req, f)
		}
	}
	s["required"] = req
}

func requireParameter(t *testing.T, doc map[string]any) {
	op := doc["paths"].(map[string]any)["/tickets/{id}"].(map[string]any)["get"].(map[string]any)
	params, _ := op["parameters"].([]any)
	op["parameters"] = append(params, map[string]any{"name": "tenant", "in": "query", "required": true, "schema": map[string]any{"type": "string"}})
}
