// Package ntfy publishes notifications through ntfy's HTTP publish API
// (JSON publishing: POST to the server root with the topic in the body),
// which carries titles and tags in any script, where header publishing
// needs RFC 2047 encoding for anything but ASCII.
//
// Errors tell a caller whether retrying can help: IsRetryable is true for
// timeouts, transport failures, 408, 429 and 5xx answers; any other 4xx
// means the request or the credentials are wrong and will stay wrong.
package ntfy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/dynastack/dynastack/lambdas/platform/logx"
)

// Limits and defaults.
const (
	// DefaultTimeout bounds one publish. The processor's function timeout
	// is 30 s; a third of it leaves room for the DynamoDB writes around
	// the call and for the other records of a batch.
	DefaultTimeout = 10 * time.Second
	// maxErrorBody is how much of an error answer is kept for the message.
	maxErrorBody = 512
)

// Priorities by name, as ntfy numbers them.
var Priorities = map[string]int{"min": 1, "low": 2, "default": 3, "high": 4, "urgent": 5, "max": 5}

// Notification is one message to publish.
type Notification struct {
	Topic    string   `json:"topic"`
	Message  string   `json:"message"`
	Title    string   `json:"title,omitempty"`
	Priority int      `json:"priority,omitempty"`
	Tags     []string `json:"tags,omitempty"`
	Click    string   `json:"click,omitempty"`
}

// Published is ntfy's answer to a publish.
type Published struct {
	ID    string `json:"id"`
	Time  int64  `json:"time"`
	Event string `json:"event"`
	Topic string `json:"topic"`
}

// Client publishes to one ntfy server.
type Client struct {
	// Server is the root URL, e.g. https://ntfy.sh.
	Server string
	// Token is an access token sent as "Authorization: Bearer <token>";
	// empty publishes anonymously.
	Token string
	// HTTP defaults to a client with Timeout.
	HTTP *http.Client
	// Timeout bounds one publish, connection to answer.
	//
	// Default: DefaultTimeout.
	Timeout time.Duration
}

// StatusError is a non-2xx answer.
type StatusError struct {
	Code int
	Body string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("ntfy: HTTP %d: %s", e.Code, e.Body)
}

// ErrNoID: the server answered 2xx without a message id, so it is not an
// ntfy publish endpoint (a proxy, a wrong URL).
var ErrNoID = errors.New("ntfy: answer has no message id")

// IsRetryable reports whether publishing again may succeed.
func IsRetryable(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code == http.StatusRequestTimeout || se.Code == http.StatusTooManyRequests || se.Code >= 500
	}
	return err != nil && !errors.Is(err, ErrNoID) && !errors.Is(err, context.Canceled)
}

// Publish sends n and returns ntfy's message id.
func (c *Client) Publish(ctx context.Context, n Notification) (*Published, error) {
	if n.Topic == "" || n.Message == "" {
		return nil, errors.New("ntfy: topic and message are required")
	}
	body, err := json.Marshal(n)
	if err != nil {
		return nil, err
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(c.Server, "/")+"/", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("ntfy: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	// The message's trace header goes on, as an AWS service passes it:
	// ntfy ignores it, but a load balancer in front of a self-hosted
	// server keeps its Root (an ALB adds Self and logs it), so the
	// server's access logs join the message's trace. It names no one: an
	// X-Ray id is a time and a random number.
	if h := logx.TraceHeader(ctx); h != "" {
		req.Header.Set(logx.TraceHeaderName, h)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("ntfy: publish: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return nil, fmt.Errorf("ntfy: read answer: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if len(raw) > maxErrorBody {
			raw = raw[:maxErrorBody]
		}
		return nil, &StatusError{Code: resp.StatusCode, Body: strings.TrimSpace(string(raw))}
	}
	var p Published
	if err := json.Unmarshal(raw, &p); err != nil || p.ID == "" {
		return nil, fmt.Errorf("%w (HTTP %d)", ErrNoID, resp.StatusCode)
	}
	return &p, nil
}
