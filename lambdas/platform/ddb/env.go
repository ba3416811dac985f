package ddb

// WithEndpoint returns a getenv in which DYNAMODB_ENDPOINT is endpoint and
// every other variable comes from getenv (nil reads as all unset). The local
// runner, DynamoDB Local and tests all hand services their environment this
// way: the service code reads the endpoint exactly as in Lambda, where the
// variable is simply absent.
func WithEndpoint(endpoint string, getenv func(string) string) func(string) string {
	return func(k string) string {
		if k == EnvEndpoint {
			return endpoint
		}
		if getenv == nil {
			return ""
		}
		return getenv(k)
	}
}
