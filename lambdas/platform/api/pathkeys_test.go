package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ids"
	"github.com/stretchr/testify/assert"
)

// Every path parameter is a key before the handler runs: a segment that
// would collapse onto another key (invalid UTF-8 becomes U+FFFD), split
// one ('/', '#') or act as an IAM wildcard ('*', '?') is a 400 naming it.
func TestPathKeys(t *testing.T) {
	one := service.Route{Method: "GET", Path: "/tenants/{tenant}/inboxes/{inbox}"}
	greedy := service.Route{Method: "GET", Path: "/files/{path+}"}
	fn := service.Function{Name: "keys", Kind: service.HTTP, Routes: []service.Route{one, greedy}}
	ran := 0
	h := func(w http.ResponseWriter, r *http.Request) error {
		ran++
		api.WriteJSON(w, 200, map[string]string{"tenant": r.PathValue("tenant"), "path": r.PathValue("path")})
		return nil
	}
	r := api.NewRouter(fn)
	r.Handle(one, h)
	r.Handle(greedy, h)
	rt := r.Done()
	for _, tt := range []struct {
		path  string
		field string // "" when served
	}{
		{"/tenants/acme/inboxes/main", ""},
		{"/tenants/%EF%BF%BDx/inboxes/main", ""}, // U+FFFD itself is a character
		{"/tenants/caf%C3%A9/inboxes/main", ""},
		{"/tenants/%FEx/inboxes/main", "tenant"},
		{"/tenants/a%23b/inboxes/main", "tenant"},
		{"/tenants/a%2Fb/inboxes/main", "tenant"},
		{"/tenants/a*/inboxes/main", "tenant"},
		{"/tenants/a%3Fb/inboxes/main", "tenant"},
		{"/tenants/a%00b/inboxes/main", "tenant"},
		{"/tenants/a%20b/inboxes/main", "tenant"},
		{"/tenants/a%C2%A0b/inboxes/main", "tenant"}, // no-break space
		{"/tenants/acme/inboxes/" + strings.Repeat("k", ids.MaxKeyBytes), ""},
		{"/tenants/acme/inboxes/" + strings.Repeat("k", ids.MaxKeyBytes+1), "inbox"},
		{"/files/a/b/c", ""},
		{"/files/" + strings.Repeat("k", ids.MaxGreedyKeyBytes), ""},
		{"/files/" + strings.Repeat("k", ids.MaxGreedyKeyBytes+1), "path"},
		{"/files/a/%FF", "path"},
		{"/files/a/*", "path"},
		{"/files/a%23b", "path"},
	} {
		ran = 0
		rec := httptest.NewRecorder()
		rt.ServeHTTP(rec, httptest.NewRequest("GET", tt.path, nil))
		if tt.field == "" {
			assert.Equal(t, 200, rec.Code, "GET %.60s: status (body %s)", tt.path, rec.Body)
			assert.Equal(t, 1, ran, "GET %.60s: handler runs", tt.path)
			continue
		}
		var body struct {
			Error struct {
				Code   string           `json:"code"`
				Fields []api.FieldError `json:"fields"`
			} `json:"error"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &body)
		assert.Equal(t, 400, rec.Code, "GET %.60s: status (body %s)", tt.path, rec.Body)
		assert.Equal(t, 0, ran, "GET %.60s: handler runs", tt.path)
		assert.Equal(t, api.CodeValidation, body.Error.Code, "GET %.60s: code", tt.path)
		if assert.Len(t, body.Error.Fields, 1, "GET %.60s: fields", tt.path) {
			assert.Equal(t, tt.field, body.Error.Fields[0].Field, "GET %.60s: the field named", tt.path)
		}
	}
}

func TestCheckKey(t *testing.T) {
	for s, want := range map[string]string{
		"acme":                  "",
		"":                      "is required",
		"a\xffb":                "must be valid UTF-8",
		"a#b":                   "must not contain '#', '/', '*', '?'",
		"a\tb":                  "must not contain whitespace or control characters",
		strings.Repeat("é", 65): "must be at most 128 bytes of UTF-8 (got 130)",
	} {
		got := ids.CheckKey(s, 128)
		if want == "" {
			assert.Empty(t, got, "CheckKey(%q)", s)
		} else {
			assert.True(t, strings.HasPrefix(got, want), "CheckKey(%q) = %q, want the prefix %q", s, got, want)
		}
	}
}
