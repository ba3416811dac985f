package jwtauth

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/dynastack/dynastack/lambdas/platform/api"
)

// Middleware answers 401, as the gateway does, for a request to one of
// routes (API Gateway route keys, "GET /tenants/{tenant}/…") without a
// valid bearer token, and passes the others through. A verified token's
// claims become the request's api.Caller.
func Middleware(v Verifier, routes []string, next http.Handler) http.Handler {
	guarded := http.NewServeMux()
	for _, r := range routes {
		guarded.Handle(r, http.NotFoundHandler())
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := guarded.Handler(r); pattern == "" {
			next.ServeHTTP(w, r)
			return
		}
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			unauthorized(w, r, errors.New("no bearer token (make token TENANT=… USER=… mints one)"))
			return
		}
		claims, err := v.Verify(strings.TrimSpace(token))
		if err != nil {
			unauthorized(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(api.WithCaller(r.Context(), api.Caller{Subject: claims["sub"], Claims: claims})))
	})
}

// unauthorized is API Gateway's answer to a refused token, byte for byte
// in body and status, so clients meet locally what they meet in AWS; the
// reason, which the gateway keeps to itself, goes to the runner's log.
func unauthorized(w http.ResponseWriter, r *http.Request, reason error) {
	slog.InfoContext(r.Context(), "token refused", "method", r.Method, "path", r.URL.Path, "error", reason.Error())
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write([]byte(`{"message":"Unauthorized"}`))
}
