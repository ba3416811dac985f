package api_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/stretchr/testify/require"
)

// FuzzDecodeJSON: any request body is decoded or refused with a 4xx
// api.Error (400, 413 or 422-style field errors), never a panic or an
// error that would become a 500.
func FuzzDecodeJSON(f *testing.F) {
	for _, seed := range []string{
		`{"name":"a","count":1,"tags":["x"],"nested":{"ok":true}}`, `{}`, ``, `null`, `[]`, `{"name":1}`,
		`{"unknown":1}`, `{"name":"a"} {}`, `{"name":"a"`, `{"count":1e400}`, `{"nested":{"ok":"yes"}}`,
		"\xef\xbb\xbf{}", `{"name":"\ud800"}`, strings.Repeat("[", 100),
	} {
		f.Add(seed)
	}
	type body struct {
		Name   string   `json:"name"`
		Count  int      `json:"count"`
		Tags   []string `json:"tags"`
		Nested *struct {
			OK bool `json:"ok"`
		} `json:"nested"`
	}
	f.Fuzz(func(t *testing.T, in string) {
		r := httptest.NewRequest("POST", "/", strings.NewReader(in))
		var dst body
		err := api.DecodeJSON(httptest.NewRecorder(), r, 1<<10, &dst)
		if err == nil {
			return
		}
		var e *api.Error
		require.ErrorAs(t, err, &e, "DecodeJSON(%q): want a 4xx api.Error", in)
		require.GreaterOrEqual(t, e.Status, 400, "DecodeJSON(%q) = %v: want a 4xx", in, err)
		require.LessOrEqual(t, e.Status, 499, "DecodeJSON(%q) = %v: want a 4xx", in, err)
		require.False(t, e.Message == "" && len(e.Fields) == 0, "DecodeJSON(%q): %d without a message", in, e.Status)
	})
}

// BenchmarkDecodeJSON is the strict decoding of a small create body, as
// every write pays it (docs/functions.md, "Request path").
func BenchmarkDecodeJSON(b *testing.B) {
	type body struct {
		CallerID         string            `json:"caller_id"`
		IssueDescription string            `json:"issue_description"`
		Tags             []string          `json:"tags"`
		Labels           map[string]string `json:"labels"`
		Count            int               `json:"count"`
	}
	const in = `{"caller_id":"poc-user-001","issue_description":"My laptop won't turn on","tags":["hw","urgent"],"labels":{"site":"berlin"},"count":3}`
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest("POST", "/", strings.NewReader(in))
		var dst body
		require.NoError(b, api.DecodeJSON(httptest.NewRecorder(), r, 1<<10, &dst))
	}
}
