package e2e

import (
	"bytes"
	"net/http/httptest"
	"testing"

	"github.com/dynastack/dynastack/constructs/catalog"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/idempotency"
	"github.com/dynastack/dynastack/lambdas/services"
)

// Every route a contract marks Idempotent honours Idempotency-Key in its
// service: the same request with the same key is answered again, byte for
// byte, without running twice; the key with another body is refused.
func TestIdempotentRoutesHonourTheKey(t *testing.T) {
	routes := 0
	for _, fn := range catalog.Functions() {
		for _, route := range fn.Routes {
			if !route.Idempotent {
				continue
			}
			routes++
			t.Run(route.Key(), func(t *testing.T) {
				path := testenv.Template(t, "dev", fn.Name)
				tmpl, tables := testenv.Tables(t, path)
				getenv := testenv.Getenv(t, testenv.ServiceEnv(t, tmpl, tables, fn.Name))
				build, _ := services.Lookup(fn.Name)
				h, err := build(t.Context(), getenv, ddbrecord.ClientOptions(getenv)...)
				if err != nil {
					t.Fatal(err)
				}
				target := pathParam.ReplaceAllString(route.Path, "00000000-0000-4000-8000-000000000000")
				do := func(body string) *httptest.ResponseRecorder {
					req := httptest.NewRequest(route.Method, target, bytes.NewReader([]byte(body)))
					req.Header.Set(idempotency.Header, "key-1")
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					return rec
				}
				first, again := do(`{}`), do(`{}`)
				if first.Code >= 500 || again.Code != first.Code || again.Body.String() != first.Body.String() || again.Header().Get("Idempotent-Replayed") != "true" {
					t.Errorf("first %d %s; again %d %s (replayed %q)", first.Code, first.Body, again.Code, again.Body, again.Header().Get("Idempotent-Replayed"))
				}
				if other := do(`{"other":true}`); other.Code != 422 {
					t.Errorf("the key with another body: %d %s, want 422", other.Code, other.Body)
				}
			})
		}
	}
	if routes == 0 {
		t.Fatal("no contract route is Idempotent")
	}
}
