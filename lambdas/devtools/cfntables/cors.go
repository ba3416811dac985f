package cfntables

import (
	"encoding/json"
	"fmt"
)

// CORS is an HTTP API's CORS configuration as the template states it
// (AWS::ApiGatewayV2::Api CorsConfiguration).
type CORS struct {
	AllowOrigins  []string
	AllowMethods  []string
	AllowHeaders  []string
	ExposeHeaders []string
	MaxAge        int
}

// CORS returns the CORS configuration of the template's HTTP API, nil when
// it has none (no browser origin may call it).
func (t *Template) CORS() (*CORS, error) {
	for _, id := range t.logicalIDs("AWS::ApiGatewayV2::Api") {
		var p struct {
			CorsConfiguration *CORS
		}
		if err := json.Unmarshal(t.Resources[id].Properties, &p); err != nil {
			return nil, fmt.Errorf("cfntables: API %s: %w", id, err)
		}
		if p.CorsConfiguration != nil {
			return p.CorsConfiguration, nil
		}
	}
	return nil, nil
}
