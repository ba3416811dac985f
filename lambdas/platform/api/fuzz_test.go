package api_test

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/lambdas/platform/api"
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
		if !errors.As(err, &e) || e.Status < 400 || e.Status > 499 {
			t.Fatalf("DecodeJSON(%q) = %v, want a 4xx api.Error", in, err)
		}
		if e.Message == "" && len(e.Fields) == 0 {
			t.Fatalf("DecodeJSON(%q): %d without a message", in, e.Status)
		}
	})
}
