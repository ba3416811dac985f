// Package awsrpc calls AWS APIs of the Query (EC2's dialect too) and JSON
// 1.1 protocols without their SDK clients: a request signed with SigV4,
// retried by the SDK's standard retryer, an error carrying AWS's code and
// message. It is for functions that call an operation or two of a service
// whose generated client would cost their cold start (SSM's, RDS's and
// ECS's package initialisers take 1–2 ms each) and every fresh build (EC2's
// client alone is two minutes of compiling): docs/functions.md, "Cold
// start", says which and what each cost. DynamoDB, which every function
// calls on every request, keeps the SDK's client.
//
// What the SDK's clients do that this does not: endpoint rules beyond the
// regional endpoint (FIPS, dual-stack, other partitions than aws and
// aws-cn; the stacks use none), clock-skew correction (Lambda's clock is
// synchronised), response checksums and paginators (no operation called
// here pages). Like the SDK, it retries a request whose answer was lost,
// so an operation that is not idempotent may run twice; the callers'
// are safe to repeat: a second SNS notice of a rez_agent message is one
// the processor already handles as a redelivery, AgenticPM's events carry
// an idempotency key integrations act on once, and a second KMS Encrypt
// only makes another ciphertext of the same credentials.
//
// A call's shape (parameters, result paths) is the caller's: the operation
// packages that use it are tested against devtools/awsloop's servers, which
// the SDK's own clients are tested against, and devtools/awsloop checks
// that this package and the SDK send the same parameters.
package awsrpc

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Service is what a call needs to know of an AWS service beyond its
// operation. devtools/awsloop's servers of these services read the same
// values.
type Service struct {
	// ID is the SDK's service ID, which names the endpoint variable
	// (AWS_ENDPOINT_URL_<ID>, upper case): what awsconf.For takes.
	ID string
	// SigningName is SigV4's service name, also the endpoint's prefix.
	SigningName string
	// Version is the API version a Query protocol call sends.
	Version string
	// TargetPrefix is what precedes the operation in a JSON protocol
	// call's X-Amz-Target ("AmazonSSM" in "AmazonSSM.GetParameter").
	TargetPrefix string
}

// The services the functions call through this package, each written
// once: the versions and target prefixes are those of the SDK's clients,
// which devtools/awsloop's TestRuntimeCallsMatchTheSDK holds every call
// to.
var (
	EC2         = Service{ID: "EC2", SigningName: "ec2", Version: "2016-11-15"}
	ECS         = Service{ID: "ECS", SigningName: "ecs", TargetPrefix: "AmazonEC2ContainerServiceV20141113"}
	EventBridge = Service{ID: "EventBridge", SigningName: "events", TargetPrefix: "AWSEvents"}
	KMS         = Service{ID: "KMS", SigningName: "kms", TargetPrefix: "TrentService"}
	RDS         = Service{ID: "RDS", SigningName: "rds", Version: "2014-10-31"}
	SNS         = Service{ID: "SNS", SigningName: "sns", Version: "2010-03-31"}
	SSM         = Service{ID: "SSM", SigningName: "ssm", TargetPrefix: "AmazonSSM"}
	STS         = Service{ID: "STS", SigningName: "sts", Version: "2011-06-15"}
)

// Client calls one AWS service. Build it with New. A Client is safe for
// concurrent use; like an SDK client, it keeps one retry token bucket, so
// build one per service and reuse it where the SDK client would have been
// reused.
type Client struct {
	svc     Service
	cfg     aws.Config
	retryer aws.Retryer
	http    aws.HTTPClient
	signer  *v4.Signer
}

// New returns a client of svc (EC2, RDS, …). cfg gives the region, the
// credentials (required), the HTTP client (default: the SDK's, with its
// timeouts), the retryer (default: the SDK's standard one, 3 attempts) and
// BaseEndpoint (default: https://<signing name>.<region>.amazonaws.com,
// .com.cn in the China regions).
func New(svc Service, cfg aws.Config) *Client {
	c := &Client{svc: svc, cfg: cfg, signer: v4.NewSigner()}
	if cfg.Retryer != nil {
		c.retryer = cfg.Retryer()
	} else {
		c.retryer = retry.NewStandard()
	}
	c.http = cfg.HTTPClient
	if c.http == nil {
		c.http = awshttp.NewBuildableClient()
	}
	return c
}

// Error is an error AWS answered. It implements smithy.APIError as the
// SDK's errors do, so code that reads an SDK error's code reads this one's,
// and HTTPStatusCode, which the standard retryer reads.
type Error struct {
	// Operation is "<service>:<action>" ("ec2:StartInstances").
	Operation  string
	StatusCode int
	// Code is AWS's error code ("InvalidInstanceID.NotFound",
	// "ThrottlingException"); for an answer without one, the HTTP status
	// text without spaces ("ServiceUnavailable").
	Code      string
	Message   string
	RequestID string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: HTTP %d %s: %s (request id %s)", e.Operation, e.StatusCode, e.Code, e.Message, e.RequestID)
}

// ErrorCode is AWS's error code.
func (e *Error) ErrorCode() string { return e.Code }

// ErrorMessage is AWS's message.
func (e *Error) ErrorMessage() string { return e.Message }

// ErrorFault says whose fault the error is: the server's for a 5xx.
func (e *Error) ErrorFault() smithy.ErrorFault {
	if e.StatusCode >= 500 {
		return smithy.FaultServer
	}
	return smithy.FaultClient
}

// HTTPStatusCode is the answer's status.
func (e *Error) HTTPStatusCode() int { return e.StatusCode }

var _ smithy.APIError = (*Error)(nil)

// Query calls action of an awsQuery or ec2Query service: params (nil for
// none) as the form body beside Action and the service's Version, and the XML answer
// decoded into out (nil to ignore it) from its root element, so out's
// paths start below it ("StopDBInstanceResult>DBInstance>DBInstanceStatus",
// EC2's "instancesSet>item"). List parameters are the caller's to name as
// the service wants them: ec2Query "InstanceId.1", awsQuery
// "Names.member.1".
func (c *Client) Query(ctx context.Context, action string, params url.Values, out any) error {
	form := url.Values{}
	for k, v := range params {
		form[k] = v
	}
	form.Set("Action", action)
	form.Set("Version", c.svc.Version)
	body := []byte(form.Encode())
	answer, err := c.do(ctx, action, body, func(h http.Header) {
		h.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	}, queryError)
	return c.read(action, answer, err, out, xml.Unmarshal)
}

// JSON calls operation ("GetParameter") of an awsJson1_1 service, its
// X-Amz-Target the service's TargetPrefix and operation: in marshalled as
// the body, the answer decoded into out (nil to ignore it).
func (c *Client) JSON(ctx context.Context, operation string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("%s:%s: marshal the request: %w", c.svc.SigningName, operation, err)
	}
	answer, err := c.do(ctx, operation, body, func(h http.Header) {
		h.Set("Content-Type", "application/x-amz-json-1.1")
		h.Set("X-Amz-Target", c.svc.TargetPrefix+"."+operation)
	}, jsonError)
	return c.read(operation, answer, err, out, json.Unmarshal)
}

// read decodes a call's answer into out with the protocol's unmarshal,
// unless the call failed or the caller wants nothing from it.
func (c *Client) read(action string, answer []byte, err error, out any, unmarshal func([]byte, any) error) error {
	if err != nil || out == nil {
		return err
	}
	if err := unmarshal(answer, out); err != nil {
		return fmt.Errorf("%s:%s: decode the answer: %w", c.svc.SigningName, action, err)
	}
	return nil
}

// decodeError fills e's code, message and request id from an error answer.
type decodeError func(e *Error, h http.Header, body []byte)

// do sends body until it is answered with a 2xx, the error is not
// retryable, or the retryer's attempts or tokens run out: the SDK's retry
// loop, with its retryer.
func (c *Client) do(ctx context.Context, action string, body []byte, headers func(http.Header), decode decodeError) ([]byte, error) {
	endpoint, err := c.endpoint()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	payloadHash := hex.EncodeToString(sum[:])
	release := func(error) error { return nil }
	if r, ok := c.retryer.(aws.RetryerV2); ok {
		if t, err := r.GetAttemptToken(ctx); err == nil {
			release = t
		}
	}
	for attempt := 1; ; attempt++ {
		answer, err := c.attempt(ctx, endpoint, action, body, payloadHash, headers, decode)
		_ = release(err)
		if err == nil {
			return answer, nil
		}
		if ctx.Err() != nil || attempt >= c.retryer.MaxAttempts() || !c.retryer.IsErrorRetryable(err) {
			return nil, err
		}
		delay, derr := c.retryer.RetryDelay(attempt, err)
		if derr != nil {
			return nil, err
		}
		if release, derr = c.retryer.GetRetryToken(ctx, err); derr != nil {
			return nil, err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
	}
}

func (c *Client) attempt(ctx context.Context, endpoint, action string, body []byte, payloadHash string, headers func(http.Header), decode decodeError) ([]byte, error) {
	op := c.svc.SigningName + ":" + action
	creds, err := c.cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: credentials: %w", op, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	headers(req.Header)
	req.Header.Set("User-Agent", "dynastack-awsrpc")
	if err := c.signer.SignHTTP(ctx, creds, req, payloadHash, c.svc.SigningName, c.cfg.Region, time.Now()); err != nil {
		return nil, fmt.Errorf("%s: sign: %w", op, err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, &smithyhttp.RequestSendError{Err: err})
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: read the answer: %w", op, &smithyhttp.RequestSendError{Err: err})
	}
	if resp.StatusCode/100 == 2 {
		return answer, nil
	}
	e := &Error{Operation: op, StatusCode: resp.StatusCode, RequestID: resp.Header.Get("X-Amzn-RequestId")}
	decode(e, resp.Header, answer)
	if e.Code == "" {
		e.Code = strings.ReplaceAll(http.StatusText(resp.StatusCode), " ", "")
	}
	return nil, e
}

func (c *Client) endpoint() (string, error) {
	if c.cfg.BaseEndpoint != nil {
		return *c.cfg.BaseEndpoint, nil
	}
	if c.cfg.Region == "" {
		return "", fmt.Errorf("awsrpc: %s: no region in the configuration", c.svc.SigningName)
	}
	suffix := "amazonaws.com"
	if strings.HasPrefix(c.cfg.Region, "cn-") {
		suffix = "amazonaws.com.cn"
	}
	return "https://" + c.svc.SigningName + "." + c.cfg.Region + "." + suffix, nil
}

// queryError reads both error documents of the Query protocols: awsQuery's
// <ErrorResponse><Error>… and ec2Query's <Response><Errors><Error>….
func queryError(e *Error, _ http.Header, body []byte) {
	var doc struct {
		Error struct {
			Code    string `xml:"Code"`
			Message string `xml:"Message"`
		} `xml:"Error"`
		Errors []struct {
			Code    string `xml:"Code"`
			Message string `xml:"Message"`
		} `xml:"Errors>Error"`
		EC2RequestID   string `xml:"RequestID"`
		QueryRequestID string `xml:"RequestId"`
	}
	if xml.Unmarshal(body, &doc) != nil {
		return
	}
	e.Code, e.Message = doc.Error.Code, doc.Error.Message
	if len(doc.Errors) > 0 {
		e.Code, e.Message = doc.Errors[0].Code, doc.Errors[0].Message
	}
	if id := doc.EC2RequestID + doc.QueryRequestID; id != "" {
		e.RequestID = id
	}
}

// jsonError reads the awsJson error: the code from X-Amzn-ErrorType or the
// body's __type, either maybe "<namespace>#<Code>" or "<Code>:<URL>".
func jsonError(e *Error, h http.Header, body []byte) {
	var doc struct {
		Type    string `json:"__type"`
		Code    string `json:"code"`
		Message string `json:"message"`
		Msg     string `json:"Message"`
	}
	_ = json.Unmarshal(body, &doc)
	code := h.Get("X-Amzn-ErrorType")
	for _, c := range []string{doc.Type, doc.Code} {
		if code == "" {
			code = c
		}
	}
	if i := strings.LastIndexByte(code, '#'); i >= 0 {
		code = code[i+1:]
	}
	code, _, _ = strings.Cut(code, ":")
	e.Code = code
	e.Message = doc.Message
	if e.Message == "" {
		e.Message = doc.Msg
	}
}

// Code is err's AWS error code, "" when err is not an answer from AWS.
func Code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
