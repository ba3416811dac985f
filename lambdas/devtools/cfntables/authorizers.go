package cfntables

import (
	"encoding/json"
	"fmt"
)

// JWTAuthorizer is an HTTP API JWT authorizer of a template with the
// routes it guards.
type JWTAuthorizer struct {
	LogicalID string
	Issuer    string
	Audience  []string
	// Routes are the route keys ("GET /tenants/{tenant}/…") behind it.
	Routes []string
}

// JWTAuthorizers returns the template's JWT authorizers that guard at
// least one route, so the local runner can verify tokens where API Gateway
// would, against the same issuer and audience.
func (t *Template) JWTAuthorizers() ([]JWTAuthorizer, error) {
	byID := map[string]*JWTAuthorizer{}
	var order []string
	for _, id := range t.logicalIDs("AWS::ApiGatewayV2::Authorizer") {
		var p struct {
			AuthorizerType   string
			JwtConfiguration struct {
				Issuer   string
				Audience []string
			}
		}
		if err := json.Unmarshal(t.Resources[id].Properties, &p); err != nil {
			return nil, fmt.Errorf("cfntables: authorizer %s: %w", id, err)
		}
		if p.AuthorizerType != "JWT" {
			continue
		}
		if p.JwtConfiguration.Issuer == "" || len(p.JwtConfiguration.Audience) == 0 {
			return nil, fmt.Errorf("%w: JWT authorizer %s without a literal issuer and audience", ErrUnsupported, id)
		}
		byID[id] = &JWTAuthorizer{LogicalID: id, Issuer: p.JwtConfiguration.Issuer, Audience: p.JwtConfiguration.Audience}
		order = append(order, id)
	}
	for _, id := range t.logicalIDs("AWS::ApiGatewayV2::Route") {
		var p struct {
			AuthorizationType string
			AuthorizerID      json.RawMessage `json:"AuthorizerId"`
			RouteKey          string
		}
		if err := json.Unmarshal(t.Resources[id].Properties, &p); err != nil {
			return nil, fmt.Errorf("cfntables: route %s: %w", id, err)
		}
		if p.AuthorizationType != "JWT" {
			continue
		}
		a, ok := ref(p.AuthorizerID)
		if !ok || byID[a] == nil {
			return nil, fmt.Errorf("%w: JWT route %s (%s) names no JWT authorizer of the template", ErrUnsupported, id, p.RouteKey)
		}
		byID[a].Routes = append(byID[a].Routes, p.RouteKey)
	}
	var out []JWTAuthorizer
	for _, id := range order {
		if len(byID[id].Routes) > 0 {
			out = append(out, *byID[id])
		}
	}
	return out, nil
}
