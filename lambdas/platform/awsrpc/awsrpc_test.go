package awsrpc_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"

	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/platform/awsrpc"
)

// noWait is the standard retryer without its backoff, so the tests do
// not sleep.
func noWait() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
	})
}

func config(endpoint string) aws.Config {
	cfg := awsloop.ConfigAt("AKIDRPC", endpoint)
	cfg.Retryer = noWait
	return cfg
}

func start(t *testing.T, s *awsloop.Server) {
	t.Helper()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
}

// TestQueryAndJSONAgainstVerifyingServers: each protocol's request is one
// the loopback servers (checked against the SDK's clients) decode, signed
// so that the recomputed signature matches, with a session token when the
// credentials have one.
func TestQueryAndJSONAgainstVerifyingServers(t *testing.T) {
	ctx := context.Background()
	ec2 := awsloop.NewServer(awsloop.EC2Service)
	ec2.Handle("StartInstances", func(c *awsloop.Call) (any, error) {
		return awsloop.XML(`<instancesSet><item><instanceId>` + c.List("InstanceId")[0] + `</instanceId><currentState><code>0</code><name>pending</name></currentState></item></instancesSet>`), nil
	})
	ssm := awsloop.NewServer(awsloop.SSMService)
	ssm.Handle("GetParameter", func(c *awsloop.Call) (any, error) {
		var in struct{ Name string }
		if err := c.Decode(&in); err != nil {
			return nil, err
		}
		return map[string]any{"Parameter": map[string]any{"Name": in.Name, "Value": "v-" + in.Name}}, nil
	})
	secrets := func(id string) (string, string, bool) {
		if id == "ASIATEMP" {
			return "temp-secret", "temp-token", true
		}
		return awsloop.ConfigSecrets(id)
	}
	for _, s := range []*awsloop.Server{ec2, ssm} {
		s.VerifySignatures(secrets)
		start(t, s)
	}

	var out struct {
		Items []struct {
			ID    string `xml:"instanceId"`
			State string `xml:"currentState>name"`
		} `xml:"instancesSet>item"`
	}
	cfg := config(ec2.URL())
	cfg.Region = "eu-central-1"
	if err := awsrpc.New(awsrpc.EC2, cfg).Query(ctx, "StartInstances", url.Values{"InstanceId.1": {"i-0123456789abcdef0"}}, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Items) != 1 || out.Items[0].ID != "i-0123456789abcdef0" || out.Items[0].State != "pending" {
		t.Errorf("decoded %+v", out)
	}
	c := ec2.CallsOf("StartInstances")[0]
	if c.Region != "eu-central-1" || c.SigningName != "ec2" || c.AccessKeyID != "AKIDRPC" || c.SessionToken != "" {
		t.Errorf("signed as %s/%s/%s token %q", c.AccessKeyID, c.Region, c.SigningName, c.SessionToken)
	}

	temp := config(ssm.URL())
	temp.Credentials = credentials.NewStaticCredentialsProvider("ASIATEMP", "temp-secret", "temp-token")
	var param struct{ Parameter struct{ Value string } }
	if err := awsrpc.New(awsrpc.SSM, temp).JSON(ctx, "GetParameter", map[string]any{"Name": "/p"}, &param); err != nil {
		t.Fatal(err)
	}
	if param.Parameter.Value != "v-/p" || ssm.CallsOf("GetParameter")[0].SessionToken != "temp-token" {
		t.Errorf("GetParameter %+v, token %q", param, ssm.CallsOf("GetParameter")[0].SessionToken)
	}

	// The wrong secret for the key: AWS's 403, not retried.
	bad := config(ssm.URL())
	bad.Credentials = credentials.NewStaticCredentialsProvider("AKIDRPC", "not-its-secret", "")
	err := awsrpc.New(awsrpc.SSM, bad).JSON(ctx, "GetParameter", map[string]any{"Name": "/p"}, nil)
	if awsrpc.Code(err) != "SignatureDoesNotMatch" || len(ssm.CallsOf("GetParameter")) != 2 {
		t.Errorf("bad signature: %v after %d calls", err, len(ssm.CallsOf("GetParameter")))
	}
}

// TestErrors reads each protocol's error document as AWS writes it.
func TestErrors(t *testing.T) {
	tests := []struct {
		name, contentType, header, body string
		status                          int
		json                            bool
		code, message, requestID        string
	}{
		{"ec2Query", "text/xml", "", `<?xml version="1.0" encoding="UTF-8"?>
<Response><Errors><Error><Code>InvalidInstanceID.NotFound</Code><Message>The instance ID 'i-1' does not exist</Message></Error></Errors><RequestID>ea966190-f9aa-478e-9ede-example</RequestID></Response>`,
			400, false, "InvalidInstanceID.NotFound", "The instance ID 'i-1' does not exist", "ea966190-f9aa-478e-9ede-example"},
		{"awsQuery", "text/xml", "", `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>not authorized to perform: sts:AssumeRole</Message></Error><RequestId>c6104cbe-af31-11e0-8154-example</RequestId></ErrorResponse>`,
			403, false, "AccessDenied", "not authorized to perform: sts:AssumeRole", "c6104cbe-af31-11e0-8154-example"},
		{"awsJson, namespaced __type", "application/x-amz-json-1.1", "", `{"__type":"com.amazonaws.ssm#ParameterNotFound","message":"gone"}`,
			400, true, "ParameterNotFound", "gone", "req-1"},
		{"awsJson, __type with a URL, Message", "application/x-amz-json-1.1", "", `{"__type":"ThrottlingException:http://internal.amazon.com/coral/","Message":"Rate exceeded"}`,
			400, true, "ThrottlingException", "Rate exceeded", "req-1"},
		{"awsJson, X-Amzn-ErrorType wins", "application/x-amz-json-1.1", "ServerException:http://internal.amazon.com/", `{"__type":"Other","message":"m"}`,
			500, true, "ServerException", "m", "req-1"},
		{"no error document", "text/html", "", `<html>Service Unavailable</html>`,
			503, false, "ServiceUnavailable", "", "req-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				w.Header().Set("X-Amzn-RequestId", "req-1")
				if tt.header != "" {
					w.Header().Set("X-Amzn-ErrorType", tt.header)
				}
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			}))
			defer srv.Close()
			cfg := config(srv.URL)
			cfg.Retryer = func() aws.Retryer { return retry.AddWithMaxAttempts(noWait(), 1) }
			c := awsrpc.New(awsrpc.Service{ID: "Svc", SigningName: "svc", Version: "2020-01-01", TargetPrefix: "Svc"}, cfg)
			var err error
			if tt.json {
				err = c.JSON(context.Background(), "Op", struct{}{}, nil)
			} else {
				err = c.Query(context.Background(), "Op", nil, nil)
			}
			var e *awsrpc.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T), want *awsrpc.Error", err, err)
			}
			if e.Code != tt.code || e.Message != tt.message || e.RequestID != tt.requestID || e.StatusCode != tt.status {
				t.Errorf("got %q %q %q %d, want %q %q %q %d", e.Code, e.Message, e.RequestID, e.StatusCode, tt.code, tt.message, tt.requestID, tt.status)
			}
			var apiErr smithy.APIError
			if !errors.As(err, &apiErr) || apiErr.ErrorCode() != tt.code {
				t.Errorf("smithy.APIError %v", apiErr)
			}
			if want := smithy.FaultClient; tt.status >= 500 && apiErr.ErrorFault() == want {
				t.Errorf("a %d is the server's fault", tt.status)
			}
		})
	}
}

// TestRetries: what the SDK's standard retryer retries (throttling,
// 5xx, a connection that drops) is sent again up to its three attempts;
// a client error is not; a cancelled context stops.
func TestRetries(t *testing.T) {
	throttle := func(w http.ResponseWriter) {
		w.WriteHeader(400)
		fmt.Fprint(w, `<Response><Errors><Error><Code>RequestLimitExceeded</Code><Message>slow down</Message></Error></Errors></Response>`)
	}
	unavailable := func(w http.ResponseWriter) { w.WriteHeader(503) }
	invalid := func(w http.ResponseWriter) {
		w.WriteHeader(400)
		fmt.Fprint(w, `<Response><Errors><Error><Code>InvalidParameterValue</Code><Message>no</Message></Error></Errors></Response>`)
	}
	drop := func(w http.ResponseWriter) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		}
	}
	ok := func(w http.ResponseWriter) { fmt.Fprint(w, `<OpResponse><value>done</value></OpResponse>`) }
	tests := []struct {
		name     string
		answers  []func(http.ResponseWriter)
		attempts int
		code     string // "" for success
	}{
		{"throttled, then answered", []func(http.ResponseWriter){throttle, ok}, 2, ""},
		{"503 twice, then answered", []func(http.ResponseWriter){unavailable, unavailable, ok}, 3, ""},
		{"503 three times: the last error", []func(http.ResponseWriter){unavailable, unavailable, unavailable, ok}, 3, "ServiceUnavailable"},
		{"connection dropped, then answered", []func(http.ResponseWriter){drop, ok}, 2, ""},
		{"a client error is not retried", []func(http.ResponseWriter){invalid, ok}, 1, "InvalidParameterValue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				i := int(n.Add(1)) - 1
				tt.answers[min(i, len(tt.answers)-1)](w)
			}))
			defer srv.Close()
			var out struct {
				Value string `xml:"value"`
			}
			err := awsrpc.New(awsrpc.EC2, config(srv.URL)).Query(context.Background(), "Op", nil, &out)
			if int(n.Load()) != tt.attempts {
				t.Errorf("%d attempts, want %d", n.Load(), tt.attempts)
			}
			switch {
			case tt.code == "" && (err != nil || out.Value != "done"):
				t.Errorf("err %v, value %q", err, out.Value)
			case tt.code != "" && awsrpc.Code(err) != tt.code:
				t.Errorf("err %v, want code %s", err, tt.code)
			}
		})
	}

	t.Run("a cancelled context stops retrying", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			cancel()
			w.WriteHeader(503)
		}))
		defer srv.Close()
		err := awsrpc.New(awsrpc.EC2, config(srv.URL)).Query(ctx, "Op", nil, nil)
		if err == nil || n.Load() != 1 {
			t.Errorf("err %v after %d attempts, want an error after 1", err, n.Load())
		}
	})
}

// TestEndpoint: without BaseEndpoint the regional endpoint is used, in the
// China partition's domain there.
func TestEndpoint(t *testing.T) {
	for region, want := range map[string]string{
		"eu-central-1": "ec2.eu-central-1.amazonaws.com",
		"cn-north-1":   "ec2.cn-north-1.amazonaws.com.cn",
	} {
		var host string
		cfg := awsloop.Config("AKIDRPC")
		cfg.Region = region
		cfg.HTTPClient = &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
			host = r.URL.Host
			return nil, errors.New("offline")
		})}
		cfg.Retryer = func() aws.Retryer { return retry.AddWithMaxAttempts(noWait(), 1) }
		_ = awsrpc.New(awsrpc.EC2, cfg).Query(context.Background(), "Op", nil, nil)
		if host != want || !strings.HasSuffix(want, host[strings.Index(host, "."):]) {
			t.Errorf("%s: host %q, want %q", region, host, want)
		}
	}
	cfg := awsloop.Config("AKIDRPC")
	cfg.Region = ""
	if err := awsrpc.New(awsrpc.EC2, cfg).Query(context.Background(), "Op", nil, nil); err == nil || !strings.Contains(err.Error(), "no region") {
		t.Errorf("no region: %v", err)
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
