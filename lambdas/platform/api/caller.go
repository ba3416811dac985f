package api

import "context"

// Caller is who sent a request, as the gateway established it: an IAM
// principal for SigV4 routes, a token's claims for JWT routes. Handlers
// authorize with it; Instrument logs it on every line of the request.
type Caller struct {
	// IAM is the caller's IAM ARN (requestContext.authorizer.iam.userArn).
	IAM string `json:"iam,omitempty"`
	// Subject is the token's sub claim (requestContext.authorizer.jwt).
	Subject string `json:"sub,omitempty"`
	// Claims are the token's claims as API Gateway passes them: strings.
	Claims map[string]string `json:"-"`
}

// ID is how logs name the caller: the IAM ARN or the token subject.
func (c Caller) ID() string {
	if c.IAM != "" {
		return c.IAM
	}
	return c.Subject
}

type callerKey struct{}

// WithCaller stores the request's caller; lambdahttp does it from the
// API Gateway request context, the local runner from a token it verified.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the request's caller; ok is false when no gateway or
// verifier named one.
func CallerFrom(ctx context.Context) (c Caller, ok bool) {
	c, ok = ctx.Value(callerKey{}).(Caller)
	return c, ok
}
