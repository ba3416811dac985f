package cfntables

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Route is a route of a template's HTTP API and the function its
// integration invokes.
type Route struct {
	// Key is the route key, "GET /tickets/{id}".
	Key string
	// Auth is its AuthorizationType: AWS_IAM, JWT (or NONE).
	Auth string
	// Function is the logical id of the function the route's Lambda
	// proxy integration invokes (its alias or version followed to it).
	Function string
}

// Routes returns the template's HTTP API routes, sorted by logical id, each
// with its function: the local runner sends a request where API Gateway's
// integration would, and a test proves each function serves the routes
// the template sends it.
func (t *Template) Routes() ([]Route, error) {
	var out []Route
	for _, id := range t.logicalIDs("AWS::ApiGatewayV2::Route") {
		var p struct {
			RouteKey          string
			AuthorizationType string
			Target            json.RawMessage
		}
		if err := json.Unmarshal(t.Resources[id].Properties, &p); err != nil {
			return nil, fmt.Errorf("cfntables: route %s: %w", id, err)
		}
		integration, ok := integrationOf(p.Target)
		if !ok {
			return nil, fmt.Errorf("%w: route %s (%s): a Target other than integrations/<Ref of an integration>", ErrUnsupported, id, p.RouteKey)
		}
		r, ok := t.Resources[integration]
		if !ok || r.Type != "AWS::ApiGatewayV2::Integration" {
			return nil, fmt.Errorf("%w: route %s (%s): target %s is no integration of the template", ErrUnsupported, id, p.RouteKey, integration)
		}
		var ip struct {
			IntegrationURI json.RawMessage `json:"IntegrationUri"`
		}
		if err := json.Unmarshal(r.Properties, &ip); err != nil {
			return nil, fmt.Errorf("cfntables: integration %s: %w", integration, err)
		}
		fn, ok := t.FunctionOf(ip.IntegrationURI)
		if !ok {
			return nil, fmt.Errorf("%w: route %s (%s): integration %s invokes no function of the template", ErrUnsupported, id, p.RouteKey, integration)
		}
		out = append(out, Route{Key: p.RouteKey, Auth: p.AuthorizationType, Function: fn})
	}
	return out, nil
}

// integrationOf reads {"Fn::Join": ["", ["integrations/", {"Ref": id}]]},
// how CDK writes a route's target, as id.
func integrationOf(raw json.RawMessage) (string, bool) {
	var v struct {
		Join []json.RawMessage `json:"Fn::Join"`
	}
	var sep, prefix string
	var parts []json.RawMessage
	if json.Unmarshal(raw, &v) != nil || len(v.Join) != 2 || json.Unmarshal(v.Join[0], &sep) != nil || sep != "" ||
		json.Unmarshal(v.Join[1], &parts) != nil || len(parts) != 2 || json.Unmarshal(parts[0], &prefix) != nil ||
		!strings.EqualFold(prefix, "integrations/") { // API Gateway's target prefix, not a route (allowed in services/names_test.go)
		return "", false
	}
	return ref(parts[1])
}
