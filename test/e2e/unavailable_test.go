package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/apienv"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/services"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestThrottledRoutesAnswer503: when DynamoDB throttles every request (a
// table at its on-demand maximum, all retries spent), no route of any
// service answers 500: a route that reaches the table answers 503
// unavailable with Retry-After, one that refuses its input first answers
// as it always does.
func TestThrottledRoutesAnswer503(t *testing.T) {
	for _, name := range services.Names() {
		t.Run(name, func(t *testing.T) {
			path := testenv.Template(t, "dev", name)
			tmpl, tables := testenv.Tables(t, path)
			proxy, err := ddbfault.Start(testenv.Endpoint(t))
			require.NoError(t, err)
			defer proxy.Close()
			h := apienv.Handler(t, tmpl, tables, name, func(base func(string) string) func(string) string {
				return func(k string) string {
					if k == "AWS_ENDPOINT_URL_DYNAMODB" {
						return proxy.URL
					}
					return base(k)
				}
			})
			proxy.Set(ddbfault.Throttle, 1)
			unavailable, routes := 0, apiRoutes(t, path)
			for _, r := range routes {
				c, ok := contractRoute(t, r)
				if !ok {
					continue
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(r.method, target(c), bytes.NewReader([]byte(`{}`))))
				switch {
				case rec.Code == http.StatusServiceUnavailable:
					unavailable++
					var body struct{ Error api.Error }
					_ = json.Unmarshal(rec.Body.Bytes(), &body)
					assert.Equal(t, api.CodeUnavailable, body.Error.Code, "%s %s: 503 code", r.method, r.path)
					assert.Equal(t, strconv.Itoa(int(ddb.RetryAfter.Seconds())), rec.Header().Get("Retry-After"), "%s %s: 503 Retry-After", r.method, r.path)
				case rec.Code >= 500:
					assert.Fail(t, "500 under a throttle", "%s %s under a throttle: %d %s", r.method, r.path, rec.Code, rec.Body)
				}
			}
			t.Logf("%s under a sustained throttle: %d routes, %d answered 503 unavailable with Retry-After %s, %d refused the request before DynamoDB (4xx), none 500",
				name, len(routes), unavailable, strconv.Itoa(int(ddb.RetryAfter.Seconds())), len(routes)-unavailable)
			assert.NotZero(t, unavailable, "no route reached the throttled table: no answer 503")
			assert.NotZero(t, proxy.Faults(), "no route reached the throttled table: no throttled request")
		})
	}
}
