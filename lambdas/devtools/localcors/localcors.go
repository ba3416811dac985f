// Package localcors answers browsers as API Gateway's CORS configuration
// of an HTTP API does, so make dev behaves like a deployed stage: a
// preflight (OPTIONS with Origin and Access-Control-Request-Method) is
// answered 204 by the gateway itself, before any authorizer or function,
// with the Access-Control-Allow-* headers when the origin is allowed and
// without them when it is not; the answer to any other request of an
// allowed origin carries Access-Control-Allow-Origin and
// Access-Control-Expose-Headers, and that of another origin none.
package localcors

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
)

// Handler wraps h with c; a nil c is h itself (no browser origin).
func Handler(c *cfntables.CORS, h http.Handler) http.Handler {
	if c == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		allowed := origin != "" && (slices.Contains(c.AllowOrigins, origin) || slices.Contains(c.AllowOrigins, "*"))
		if r.Method == http.MethodOptions && origin != "" && r.Header.Get("Access-Control-Request-Method") != "" {
			method := r.Header.Get("Access-Control-Request-Method")
			if allowed && methodAllowed(c, method) {
				w.Header().Set("Access-Control-Allow-Origin", origin)
				w.Header().Set("Access-Control-Allow-Methods", strings.Join(c.AllowMethods, ","))
				if len(c.AllowHeaders) > 0 {
					w.Header().Set("Access-Control-Allow-Headers", strings.ToLower(strings.Join(c.AllowHeaders, ",")))
				}
				if c.MaxAge > 0 {
					w.Header().Set("Access-Control-Max-Age", strconv.Itoa(c.MaxAge))
				}
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if allowed {
			w.Header().Set("Access-Control-Allow-Origin", origin)
			if len(c.ExposeHeaders) > 0 {
				w.Header().Set("Access-Control-Expose-Headers", strings.ToLower(strings.Join(c.ExposeHeaders, ",")))
			}
		}
		h.ServeHTTP(w, r)
	})
}

func methodAllowed(c *cfntables.CORS, m string) bool {
	return slices.Contains(c.AllowMethods, m) || slices.Contains(c.AllowMethods, "*")
}
