// Package awsloop is dev-only code: loopback HTTP servers that speak the real
// wire protocols of AWS APIs, so that code under test (and `make dev`) runs
// the real aws-sdk-go-v2 clients — serializers, signing, retries, error
// deserializers — against a fake that decodes every call the way AWS does.
//
// A Server serves one service on 127.0.0.1. It decodes each request by the
// service's protocol (awsQuery and ec2Query form posts, awsJson 1.0 and 1.1
// with X-Amz-Target), records it as a Call together with the access key id
// that signed it (from the SigV4 Authorization header), and answers through
// the Handler registered for the action, in the protocol's response shape.
// Per-service fakes (sts.go, ec2.go, rds.go, ecs.go, cloudformation.go, …)
// are thin layers of handlers with state on top of this core.
//
// VerifySignatures (sigv4.go) makes a server recompute each signature with
// the secret of its key, e.g. STS.Secrets for the sessions a fake STS
// issued: a test then proves which credentials signed a call.
// VerifyRequest applies the same check to any request, e.g. a REST call
// signed for API Gateway's execute-api.
//
// Point a client at a server with its BaseEndpoint, or through the
// service-specific environment variable the SDK reads
// (AWS_ENDPOINT_URL_<SERVICE>, see EndpointEnv).
//
// Never import this package from code that runs in Lambda.
package awsloop

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dynastack/dynastack/lambdas/platform/logx"
)

// Protocol is how a service encodes requests and responses.
type Protocol string

// The protocols of the AWS APIs the fakes serve.
const (
	// AWSQuery: form-encoded POST (Action, Version, params; lists as
	// Name.member.N), XML response <ActionResponse><ActionResult>. STS,
	// RDS, SNS, IAM.
	AWSQuery Protocol = "awsQuery"
	// EC2Query: form-encoded POST (lists as Name.N), XML response with the
	// result members directly under <ActionResponse>. EC2.
	EC2Query Protocol = "ec2Query"
	// AWSJSON10: JSON POST, X-Amz-Target: <prefix>.<Action>,
	// Content-Type application/x-amz-json-1.0. DynamoDB, SQS.
	AWSJSON10 Protocol = "awsJson1_0"
	// AWSJSON11: the same with application/x-amz-json-1.1. ECS,
	// EventBridge, CloudWatch Logs.
	AWSJSON11 Protocol = "awsJson1_1"
)

func (p Protocol) query() bool { return p == AWSQuery || p == EC2Query }

func (p Protocol) contentType() string {
	switch p {
	case AWSJSON10:
		return "application/x-amz-json-1.0"
	case AWSJSON11:
		return "application/x-amz-json-1.1"
	}
	return "application/x-www-form-urlencoded"
}

// Service describes the API a Server speaks.
type Service struct {
	// ID is the SDK's service ID (sts.ServiceID, eventbridge.ServiceID:
	// "EventBridge"), which names the endpoint variable a client reads
	// (EndpointEnv).
	ID string
	// Name is the SigV4 signing name ("sts", "ec2", "rds", "ecs", "sns",
	// "events"). A call signed for another service is refused, as AWS
	// would refuse it.
	Name     string
	Protocol Protocol
	// Version is the API version query clients must send (e.g.
	// "2011-06-15" for STS). Query protocols only.
	Version string
	// XMLNamespace is the xmlns of query responses (e.g.
	// "https://sts.amazonaws.com/doc/2011-06-15/").
	XMLNamespace string
	// TargetPrefix is the X-Amz-Target prefix of JSON protocols (e.g.
	// "AmazonEC2ContainerServiceV20141113").
	TargetPrefix string
}

// EndpointEnv is the variable that points the SDK's clients of s here:
// EndpointEnv(s.ID).
func (s Service) EndpointEnv() string { return EndpointEnv(s.ID) }

// Throttle is the error the service answers when it throttles a caller,
// by protocol: awsQuery's Throttling, EC2's RequestLimitExceeded (a 503),
// the JSON protocols' ThrottlingException. The SDK's retryer knows each
// as a throttle: it retries with its throttle backoff, then returns it.
func (s Service) Throttle() *Error {
	switch s.Protocol {
	case AWSQuery:
		return &Error{Status: http.StatusBadRequest, Code: "Throttling", Message: "Rate exceeded"}
	case EC2Query:
		return &Error{Status: http.StatusServiceUnavailable, Code: "RequestLimitExceeded", Message: "Request limit exceeded."}
	}
	return &Error{Status: http.StatusBadRequest, Code: "ThrottlingException", Message: "Rate exceeded"}
}

// Call is one decoded request.
type Call struct {
	Service string
	// Action is the operation: the Action form field of query protocols,
	// the part of X-Amz-Target after the prefix of JSON protocols.
	Action string
	// Params is the decoded form of query protocols, without Action and
	// Version. Use List for list members.
	Params url.Values
	// Body is the request body of JSON protocols (use Decode).
	Body []byte
	// AccessKeyID signed the request (SigV4 Credential=<AccessKeyID>/…);
	// Region and SigningName are the rest of its credential scope.
	AccessKeyID string
	Region      string
	SigningName string
	// SessionToken is X-Amz-Security-Token: set for temporary
	// credentials such as those STS AssumeRole returns.
	SessionToken string
	// RequestID is the id the server answered with.
	RequestID string
	At        time.Time
	// TraceHeader is the request's X-Amzn-Trace-Id (percent-decoded, as
	// the SDK's recursion detection encodes it): the caller's X-Ray trace.
	TraceHeader string

	protocol Protocol
}

// Get returns a scalar query parameter.
func (c *Call) Get(name string) string { return c.Params.Get(name) }

// List returns the members of a query list parameter in order: Name.N for
// ec2Query, Name.member.N for awsQuery (pass the serialized name, e.g.
// "InstanceId" for EC2's InstanceIds).
func (c *Call) List(name string) []string {
	prefix := name + "."
	if c.protocol == AWSQuery {
		prefix += "member."
	}
	type member struct {
		n int
		v string
	}
	var ms []member
	for k, vs := range c.Params {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(rest)
		if err != nil || n < 1 || len(vs) == 0 {
			continue
		}
		ms = append(ms, member{n, vs[0]})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].n < ms[j].n })
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.v
	}
	return out
}

// Decode unmarshals the JSON body of a JSON-protocol call.
func (c *Call) Decode(v any) error {
	if err := json.Unmarshal(c.Body, v); err != nil {
		return &Error{Status: http.StatusBadRequest, Code: "SerializationException", Message: err.Error()}
	}
	return nil
}

// Handler answers one call. The result is rendered by the protocol: for
// query protocols a value that encoding/xml marshals into the children of
// <ActionResult> (awsQuery) or of <ActionResponse> (ec2Query), or an XML
// fragment used verbatim; for JSON protocols any value encoding/json
// marshals (nil is {}). An *Error becomes the protocol's error response;
// any other error a 500 InternalFailure.
type Handler func(c *Call) (any, error)

// XML is a verbatim XML fragment result.
type XML string

// Error is an AWS error response.
type Error struct {
	// Status is the HTTP status, 400 when 0.
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// ClientError returns a 400 error with code and a formatted message.
func ClientError(code, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Server is a loopback endpoint for one service.
type Server struct {
	svc      Service
	mu       sync.Mutex
	handlers map[string]Handler
	calls    []Call
	keep     int // recorded calls kept, newest first out (DefaultKeep)
	seq      atomic.Int64
	ln       net.Listener
	srv      *http.Server
	url      string
	secrets  Secrets // nil: signatures are not verified
	injected map[string]*injection
}

// injection is what Inject set for an action.
type injection struct {
	left int // answers still to give; < 0: every call
	err  *Error
}

// NewServer returns a server for svc; register handlers, then Start.
func NewServer(svc Service) *Server {
	return &Server{svc: svc, handlers: map[string]Handler{}}
}

// Service returns what the server speaks.
func (s *Server) Service() Service { return s.svc }

// Handle registers h for action (replacing any earlier handler).
func (s *Server) Handle(action string, h Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[action] = h
}

// Inject makes the next n calls of action answer e instead of its
// handler (n < 0: every call, until Inject is called again for action;
// n == 0 ends an injection). The calls are decoded, authenticated and
// recorded first, as any other, so a test counts the attempts a client
// made. It serves the answers a fake does not give by itself, a throttle
// (Service.Throttle) or a server error, to whichever operation a test
// needs them from.
func (s *Server) Inject(action string, n int, e *Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.injected == nil {
		s.injected = map[string]*injection{}
	}
	if n == 0 || e == nil {
		delete(s.injected, action)
		return
	}
	s.injected[action] = &injection{left: n, err: e}
}

// injectedError is the error Inject set for c's action, if any is left.
func (s *Server) injectedError(c *Call) *Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.injected[c.Action]
	if in == nil {
		return nil
	}
	if in.left > 0 {
		if in.left--; in.left == 0 {
			delete(s.injected, c.Action)
		}
	}
	e := *in.err
	return &e
}

// Start listens on a free port of 127.0.0.1 and serves until Close.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("awsloop: %s: listen: %w", s.svc.Name, err)
	}
	s.ln = ln
	s.url = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return nil
}

// URL is the endpoint ("http://127.0.0.1:<port>") once started.
func (s *Server) URL() string { return s.url }

// Close stops the server.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	return s.srv.Close()
}

// Calls returns the calls served so far, in arrival order, including
// refused ones: the newest DefaultKeep of them (SetKeep).
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return newest(s.calls, s.keep)
}

// SetKeep sets how many of the newest calls the server keeps (n <= 0:
// DefaultKeep).
func (s *Server) SetKeep(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keep = n
}

// CallsOf returns the calls of one action.
func (s *Server) CallsOf(action string) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.Action == action {
			out = append(out, c)
		}
	}
	return out
}

// Reset forgets the recorded calls.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = nil
}

// ServeHTTP decodes, records and answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := &Call{Service: s.svc.Name, protocol: s.svc.Protocol, At: time.Now().UTC(),
		RequestID: fmt.Sprintf("%08x-0000-4000-8000-%012x", s.seq.Add(1), time.Now().UnixNano()&0xffffffffffff)}
	c.TraceHeader = r.Header.Get(logx.TraceHeaderName)
	if v, err := url.PathUnescape(c.TraceHeader); err == nil {
		c.TraceHeader = v
	}
	result, err := s.serve(c, r)
	s.mu.Lock()
	s.calls = keepNewest(s.calls, *c, s.keep)
	s.mu.Unlock()
	if err != nil {
		s.writeError(w, c, err)
		return
	}
	s.writeResult(w, c, result)
}

func (s *Server) serve(c *Call, r *http.Request) (any, error) {
	if r.Method != http.MethodPost {
		return nil, &Error{Status: http.StatusMethodNotAllowed, Code: "InvalidHttpMethod", Message: r.Method + " is not supported; the protocol posts"}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 10<<20))
	if err != nil {
		return nil, ClientError("InvalidRequest", "read body: %v", err)
	}
	if err := s.decode(c, r, body); err != nil {
		return nil, err
	}
	if err := s.authenticate(c, r); err != nil {
		return nil, err
	}
	if err := s.verify(c, r, body); err != nil {
		return nil, err
	}
	if e := s.injectedError(c); e != nil {
		return nil, e
	}
	s.mu.Lock()
	h := s.handlers[c.Action]
	s.mu.Unlock()
	if h == nil {
		if s.svc.Protocol.query() {
			return nil, ClientError("InvalidAction", "The action %s is not valid for this web service.", c.Action)
		}
		return nil, ClientError("UnknownOperationException", "Unknown operation %s", c.Action)
	}
	return h(c)
}

func (s *Server) decode(c *Call, r *http.Request, body []byte) error {
	mediaType, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	mediaType = strings.TrimSpace(mediaType)
	if mediaType != s.svc.Protocol.contentType() {
		return ClientError("UnsupportedMediaType", "Content-Type %q, want %s for %s", mediaType, s.svc.Protocol.contentType(), s.svc.Protocol)
	}
	if s.svc.Protocol.query() {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return ClientError("MalformedQueryString", "%v", err)
		}
		c.Action = form.Get("Action")
		version := form.Get("Version")
		form.Del("Action")
		form.Del("Version")
		c.Params = form
		switch {
		case c.Action == "":
			return ClientError("MissingAction", "Could not find operation to perform: no Action parameter")
		case s.svc.Version != "" && version != s.svc.Version:
			return ClientError("InvalidParameterValue", "Version %q is not %s", version, s.svc.Version)
		}
		return nil
	}
	prefix, action := Target(r)
	c.Action = action
	c.Body = body
	if prefix != s.svc.TargetPrefix || action == "" {
		return ClientError("UnknownOperationException", "X-Amz-Target %q is not %s.<Operation>", r.Header.Get("X-Amz-Target"), s.svc.TargetPrefix)
	}
	if !json.Valid(body) {
		return ClientError("SerializationException", "request body is not JSON")
	}
	return nil
}

// Target reads a JSON-protocol request's X-Amz-Target, <prefix>.<operation>
// ("TrentService", "Encrypt"; DynamoDB's "DynamoDB_20120810", "GetItem"):
// for the servers here and for tests that decode what an SDK client sent,
// so that code outside devtools/ names no wire header. Both are "" when
// the header has no dot.
func Target(r *http.Request) (prefix, operation string) {
	prefix, operation, ok := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
	if !ok {
		return "", ""
	}
	return prefix, operation
}

// authenticate reads the SigV4 Authorization header. The signature itself
// is not recomputed: the point is which credentials the client used, and
// that it signed for this service.
func (s *Server) authenticate(c *Call, r *http.Request) error {
	auth := r.Header.Get("Authorization")
	c.SessionToken = r.Header.Get("X-Amz-Security-Token")
	scheme, params, _ := strings.Cut(auth, " ")
	if scheme != "AWS4-HMAC-SHA256" {
		return &Error{Status: http.StatusForbidden, Code: missingAuthCode(s.svc.Protocol), Message: "Request is missing Authentication Token"}
	}
	for part := range strings.SplitSeq(params, ",") {
		cred, ok := strings.CutPrefix(strings.TrimSpace(part), "Credential=")
		if !ok {
			continue
		}
		// <AccessKeyID>/<date>/<region>/<service>/aws4_request
		f := strings.Split(cred, "/")
		if len(f) != 5 || f[4] != "aws4_request" {
			break
		}
		c.AccessKeyID, c.Region, c.SigningName = f[0], f[2], f[3]
	}
	switch {
	case c.AccessKeyID == "":
		return &Error{Status: http.StatusForbidden, Code: "IncompleteSignature", Message: "Authorization header has no Credential=<AccessKeyId>/<date>/<region>/<service>/aws4_request"}
	case c.SigningName != s.svc.Name:
		return &Error{Status: http.StatusForbidden, Code: "SignatureDoesNotMatch",
			Message: fmt.Sprintf("Credential should be scoped to correct service: '%s', not '%s'", s.svc.Name, c.SigningName)}
	}
	return nil
}

func missingAuthCode(p Protocol) string {
	if p.query() {
		return "MissingAuthenticationToken"
	}
	return "MissingAuthenticationTokenException"
}

func (s *Server) writeResult(w http.ResponseWriter, c *Call, result any) {
	if !s.svc.Protocol.query() {
		if result == nil {
			result = struct{}{}
		}
		b, err := json.Marshal(result)
		if err != nil {
			s.writeError(w, c, err)
			return
		}
		w.Header().Set("Content-Type", s.svc.Protocol.contentType())
		w.Header().Set("X-Amzn-RequestId", c.RequestID)
		_, _ = w.Write(b)
		return
	}
	inner, err := innerXML(result)
	if err != nil {
		s.writeError(w, c, err)
		return
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	fmt.Fprintf(&b, `<%sResponse xmlns="%s">`, c.Action, s.svc.XMLNamespace)
	if s.svc.Protocol == EC2Query {
		fmt.Fprintf(&b, "<requestId>%s</requestId>%s", c.RequestID, inner)
	} else {
		fmt.Fprintf(&b, "<%sResult>%s</%sResult><ResponseMetadata><RequestId>%s</RequestId></ResponseMetadata>",
			c.Action, inner, c.Action, c.RequestID)
	}
	fmt.Fprintf(&b, "</%sResponse>", c.Action)
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.Header().Set("X-Amzn-RequestId", c.RequestID)
	_, _ = w.Write(b.Bytes())
}

// innerXML renders a query result: the children of the element it is
// marshalled as.
func innerXML(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case XML:
		return string(v), nil
	}
	var b bytes.Buffer
	enc := xml.NewEncoder(&b)
	if err := enc.EncodeElement(v, xml.StartElement{Name: xml.Name{Local: "r"}}); err != nil {
		return "", fmt.Errorf("awsloop: marshal result: %w", err)
	}
	if err := enc.Flush(); err != nil {
		return "", err
	}
	s := b.String()
	s = strings.TrimPrefix(s, "<r>")
	s = strings.TrimSuffix(s, "</r>")
	if s == "<r/>" || s == "<r></r>" {
		return "", nil
	}
	return s, nil
}

func (s *Server) writeError(w http.ResponseWriter, c *Call, err error) {
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Status: http.StatusInternalServerError, Code: "InternalFailure", Message: err.Error()}
	}
	status := e.Status
	if status == 0 {
		status = http.StatusBadRequest
	}
	w.Header().Set("X-Amzn-RequestId", c.RequestID)
	switch s.svc.Protocol {
	case AWSQuery:
		typ := "Sender"
		if status >= 500 {
			typ = "Receiver"
		}
		w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
		w.WriteHeader(status)
		fmt.Fprintf(w, `%s<ErrorResponse xmlns="%s"><Error><Type>%s</Type><Code>%s</Code><Message>%s</Message></Error><RequestId>%s</RequestId></ErrorResponse>`,
			xml.Header, s.svc.XMLNamespace, typ, escape(e.Code), escape(e.Message), c.RequestID)
	case EC2Query:
		w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
		w.WriteHeader(status)
		fmt.Fprintf(w, `%s<Response><Errors><Error><Code>%s</Code><Message>%s</Message></Error></Errors><RequestID>%s</RequestID></Response>`,
			xml.Header, escape(e.Code), escape(e.Message), c.RequestID)
	default:
		w.Header().Set("Content-Type", s.svc.Protocol.contentType())
		w.Header().Set("X-Amzn-ErrorType", e.Code)
		w.WriteHeader(status)
		b, _ := json.Marshal(map[string]string{"__type": e.Code, "message": e.Message})
		_, _ = w.Write(b)
	}
}

func escape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// EndpointEnv returns the environment variable the AWS SDKs read for a
// service-specific endpoint: AWS_ENDPOINT_URL_ and the SDK's service id in
// upper case with spaces as underscores ("STS" → AWS_ENDPOINT_URL_STS,
// "EventBridge" → AWS_ENDPOINT_URL_EVENTBRIDGE). The service id is not
// always the signing name: pass the id.
func EndpointEnv(serviceID string) string {
	return "AWS_ENDPOINT_URL_" + strings.ToUpper(strings.ReplaceAll(serviceID, " ", "_"))
}
