package config

import (
	"fmt"
	"net/url"
	"strings"
)

// StakTokens names the identity provider whose tokens the Stak API's
// end-user routes accept (API Gateway's JWT authorizer): the token's iss
// must be Issuer and its aud must include Audience. The gateway fetches
// the signing keys from Issuer's OpenID discovery document
// (<Issuer>/.well-known/openid-configuration → jwks_uri).
type StakTokens struct {
	// Issuer is the provider's issuer URL, exactly as tokens spell it
	// (https, no query). Default: https://auth.<stage>.stak.dynastack.example/.
	Issuer string
	// Audience is the client id (or API identifier) the provider puts in
	// aud for Stak's front ends. Default: stak-<stage>.
	Audience string
}

// StakTokensFor returns the stage's Stak token settings with defaults
// filled in, or an error naming the value to fix.
func (s Stage) StakTokensFor() (StakTokens, error) {
	t := s.StakTokens
	if t.Issuer == "" {
		t.Issuer = fmt.Sprintf("https://auth.%s.stak.dynastack.example/", s.Name)
	}
	if t.Audience == "" {
		t.Audience = "stak-" + string(s.Name)
	}
	u, err := url.Parse(t.Issuer)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return t, fmt.Errorf("stage %s: StakTokens.Issuer %q must be an https URL without query or fragment, e.g. https://login.example.com/", s.Name, t.Issuer)
	}
	if strings.TrimSpace(t.Audience) != t.Audience || strings.ContainsAny(t.Audience, " \t\n,") {
		return t, fmt.Errorf("stage %s: StakTokens.Audience %q must be one audience without spaces or commas", s.Name, t.Audience)
	}
	return t, nil
}
