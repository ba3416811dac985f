package smoke

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
)

// OutputKey is the output every service stack carries with its API's base
// URL (infra/stacks/httpapi.go). The stacks do not export it, so it is
// read with DescribeStacks.
const OutputKey = "ApiUrl"

// StackName is the CloudFormation stack of a service in a stage
// (infra/stacks: "<service>-<stage>").
func StackName(service, stage string) string { return service + "-" + stage }

// LocalURLs are the base URLs of the local runner at base (make dev's
// URL): each service under /<service>.
func LocalURLs(base string) map[string]string {
	base = strings.TrimSuffix(base, "/")
	out := map[string]string{}
	for _, s := range Services {
		out[s] = base + "/" + s
	}
	return out
}

// StackDescriber is the part of the CloudFormation client Discover uses.
type StackDescriber interface {
	DescribeStacks(context.Context, *cloudformation.DescribeStacksInput, ...func(*cloudformation.Options)) (*cloudformation.DescribeStacksOutput, error)
}

// Discover reads each service's base URL from the ApiUrl output of its
// stack in stage. The error names every stack it could not read or that
// has no such output.
func Discover(ctx context.Context, cfn StackDescriber, stage string) (map[string]string, error) {
	out := map[string]string{}
	var errs []error
	for _, svc := range Services {
		name := StackName(svc, stage)
		res, err := cfn.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
		if err != nil {
			errs = append(errs, fmt.Errorf("stack %s: %w", name, err))
			continue
		}
		for _, st := range res.Stacks {
			for _, o := range st.Outputs {
				if aws.ToString(o.OutputKey) == OutputKey && aws.ToString(o.OutputValue) != "" {
					out[svc] = strings.TrimSuffix(aws.ToString(o.OutputValue), "/")
				}
			}
		}
		if out[svc] == "" {
			errs = append(errs, fmt.Errorf("stack %s has no %s output (deployed before the API existed?)", name, OutputKey))
		}
	}
	return out, errors.Join(errs...)
}

// Signer is an http.RoundTripper that signs each request with SigV4 for
// API Gateway (service execute-api), as the stages' IAM-authorized routes
// require. A request that already carries an Authorization header (a
// bearer token for Stak's JWT routes) is sent as it is: API Gateway reads
// one Authorization header, and those routes want the token.
type Signer struct {
	Credentials aws.CredentialsProvider
	Region      string
	// Base sends the signed request; http.DefaultTransport when nil.
	Base http.RoundTripper
	// Now is the signing time; time.Now when nil.
	Now func() time.Time
}

// RoundTrip signs and sends r.
func (s *Signer) RoundTrip(r *http.Request) (*http.Response, error) {
	base := s.Base
	if base == nil {
		base = http.DefaultTransport
	}
	if r.Header.Get("Authorization") != "" {
		return base.RoundTrip(r)
	}
	var body []byte
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	req := r.Clone(r.Context())
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	req.ContentLength = int64(len(body))
	creds, err := s.Credentials.Retrieve(r.Context())
	if err != nil {
		return nil, fmt.Errorf("AWS credentials for signing: %w", err)
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(r.Context(), creds, req, hex.EncodeToString(sum[:]), "execute-api", s.Region, now()); err != nil {
		return nil, err
	}
	return base.RoundTrip(req)
}
