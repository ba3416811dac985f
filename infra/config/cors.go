package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/dynastack/dynastack/constructs/service"
	stak "github.com/dynastack/dynastack/constructs/stak/contract"
)

// CORS is which browser origins may call one service's HTTP API, and how
// (API Gateway's CORS configuration of the API: it answers preflight
// requests itself and adds the Access-Control-* headers to the answers of
// an allowed origin; another origin gets none, and the browser refuses to
// hand the answer to its page). An API without CORS allows no browser
// origin: the default, right for APIs called by services with SigV4.
type CORS struct {
	// AllowOrigins are the origins ("https://app.example.com", scheme and
	// host, no path) whose pages may call the API. Never "*".
	AllowOrigins []string
	// AllowMethods are the methods a page may use.
	AllowMethods []string
	// AllowHeaders are the request headers a page may send.
	AllowHeaders []string
	// ExposeHeaders are the answer headers a page may read besides the
	// CORS-safelisted ones.
	ExposeHeaders []string
	// MaxAgeSeconds is how long a browser may cache a preflight's answer.
	MaxAgeSeconds int
}

// LocalOrigins are the dev servers of a front end on a developer's
// machine (Vite's 5173, Create React App's and Next's 3000).
var LocalOrigins = []string{"http://localhost:3000", "http://localhost:5173", "http://127.0.0.1:3000", "http://127.0.0.1:5173"}

// endUserCORS is the CORS of Stak's end-user routes (service.JWT): the
// methods of those routes, as the contract declares them, with the
// bearer token's Authorization header.
func endUserCORS(origins []string) CORS {
	var methods []string
	for _, f := range stak.Service.Functions {
		for _, r := range f.Routes {
			if r.Auth == service.JWT && !slices.Contains(methods, r.Method) {
				methods = append(methods, r.Method)
			}
		}
	}
	return CORS{
		AllowOrigins:  origins,
		AllowMethods:  methods,
		AllowHeaders:  []string{"Authorization", "Content-Type"},
		ExposeHeaders: []string{"X-Request-Id", "Retry-After"},
		MaxAgeSeconds: 600,
	}
}

// CORSFor returns the CORS of the service's API in the stage, and false
// when browsers may not call it.
func (s Stage) CORSFor(serviceName string) (CORS, bool, error) {
	c, ok := s.CORS[serviceName]
	if !ok {
		return CORS{}, false, nil
	}
	if len(c.AllowOrigins) == 0 || len(c.AllowMethods) == 0 {
		return c, false, fmt.Errorf("stage %s: CORS of %s needs origins and methods", s.Name, serviceName)
	}
	for _, o := range c.AllowOrigins {
		u, err := url.Parse(o)
		if err != nil || o == "*" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || strings.HasSuffix(o, "/") {
			return c, false, fmt.Errorf("stage %s: CORS origin %q of %s must be a scheme and host, e.g. https://app.example.com (never *)", s.Name, o, serviceName)
		}
		local := u.Hostname() == "localhost" || u.Hostname() == "127.0.0.1"
		if u.Scheme != "https" && !(local && s.Name == "dev") {
			return c, false, fmt.Errorf("stage %s: CORS origin %q of %s must be https (http://localhost only in dev)", s.Name, o, serviceName)
		}
		if local && s.Name != "dev" {
			return c, false, fmt.Errorf("stage %s: CORS origin %q of %s is a developer's machine: only dev allows it", s.Name, o, serviceName)
		}
	}
	return c, true, nil
}
