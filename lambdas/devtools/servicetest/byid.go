package servicetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
)

// GetByID checks route, which reads one item by the UUID its one path
// parameter names: the item answers 200 with want (compared after
// decoding into a new T); an unknown UUID, one in upper case or braces and
// a non-UUID all answer 404 not_found without a read that could tell them
// apart, and an id over the platform's 128-byte key bound a 400 naming
// the parameter (ids.CheckKey); DELETE answers 405 naming allow in Allow;
// a sub-path the API does not have answers 404.
func GetByID[T any](t *testing.T, s Service, route service.Route, id string, want T, allow string) {
	t.Helper()
	params := route.Params()
	require.Len(t, params, 1, "%s: GetByID takes a route with one path parameter", route.Key())
	for _, tt := range []struct {
		name, id string
		status   int
	}{
		{"existing", id, 200},
		{"unknown uuid", "3f1d7e3a-1111-4000-8000-000000000000", 404},
		{"not a uuid", "abc", 404},
		{"uppercase uuid", strings.ToUpper(id), 404},
		{"braced uuid", "{" + id + "}", 404},
		{"huge id", strings.Repeat("a", 3000), 400},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, route.Method, route.URL(tt.id), "")
			if tt.status == 400 {
				apitest.WantError(t, r, 400, "validation_failed", params[0].String(), "")
				return
			}
			if tt.status != 200 {
				apitest.WantError(t, r, tt.status, "not_found", "", "")
				return
			}
			var got T
			r.JSON(t, &got)
			assert.Equal(t, fmt.Sprint(want), fmt.Sprint(got), "%s: the item", route.Key())
		})
	}
	t.Run("wrong method", func(t *testing.T) {
		r := s.Do(t, "DELETE", route.URL(id), "")
		apitest.WantError(t, r, 405, "method_not_allowed", "", "")
		assert.Contains(t, r.Header.Get("Allow"), allow, "DELETE %s: Allow", route.Key())
	})
	t.Run("unknown route", func(t *testing.T) {
		apitest.WantError(t, s.Do(t, route.Method, route.URL(id)+"/history", ""), 404, "not_found", "", "")
	})
}
