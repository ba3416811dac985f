package smoke_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"

	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/devtools/smoke"
)

// Discover reads each service's ApiUrl output with DescribeStacks of
// <service>-<stage>, through the real SDK client against a CloudFormation
// fake that checks every signature; a stage with a missing stack or output
// is an error naming each.
func TestDiscover(t *testing.T) {
	fake := awsloop.NewCloudFormation()
	fake.VerifySignatures(awsloop.ConfigSecrets)
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fake.Close() })
	for _, svc := range smoke.Services {
		fake.AddStack(smoke.StackName(svc, "stage"), map[string]string{
			"ApiUrl": "https://" + svc + ".execute-api.us-east-1.amazonaws.com/", "Other": "x"})
	}
	fake.AddStack("itsm-prod", map[string]string{"ApiUrl": "https://itsm.example/"})
	fake.AddStack("stak-prod", map[string]string{"NotTheUrl": "x"})
	cfn := cloudformation.NewFromConfig(awsloop.Config("smoke"), func(o *cloudformation.Options) { o.BaseEndpoint = aws.String(fake.URL()) })

	urls, err := smoke.Discover(t.Context(), cfn, "stage")
	if err != nil {
		t.Fatal(err)
	}
	for _, svc := range smoke.Services {
		if want := "https://" + svc + ".execute-api.us-east-1.amazonaws.com"; urls[svc] != want {
			t.Errorf("%s: %q, want %q", svc, urls[svc], want)
		}
	}
	if n := len(fake.CallsOf("DescribeStacks")); n != len(smoke.Services) {
		t.Errorf("%d DescribeStacks calls, want %d", n, len(smoke.Services))
	}

	_, err = smoke.Discover(t.Context(), cfn, "prod")
	if err == nil {
		t.Fatal("prod: no error with four stacks missing and one without ApiUrl")
	}
	for _, want := range []string{"stack rezagent-prod", "stack nucleus-prod", "stack agenticpm-prod", "does not exist", "stack stak-prod has no ApiUrl output"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "itsm-prod") {
		t.Errorf("error names itsm-prod, which has its output:\n%v", err)
	}
}

// The Signer signs for execute-api in its region so that a server checking
// SigV4 as AWS does (awsloop.VerifyRequest, the signature recomputed with
// the key's secret) accepts GETs and JSON writes, and refuses them signed
// with another secret; a request that carries a bearer token goes out
// unsigned with its token.
func TestSigner(t *testing.T) {
	type seen struct {
		auth string
		cred awsloop.Credential
		err  error
		body string
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s := seen{auth: r.Header.Get("Authorization"), body: string(body)}
		if !strings.HasPrefix(s.auth, "Bearer ") {
			s.cred, s.err = awsloop.VerifyRequest(r, body, "execute-api", awsloop.ConfigSecrets)
		}
		got <- s
	}))
	t.Cleanup(srv.Close)
	send := func(t *testing.T, secret, method, path, body string, headers ...string) seen {
		t.Helper()
		c := &http.Client{Transport: &smoke.Signer{
			Credentials: credentials.NewStaticCredentialsProvider("AKIASMOKE", secret, "session-token"),
			Region:      "eu-central-1", Now: func() time.Time { return time.Now().Add(-time.Minute) }}}
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, _ := http.NewRequestWithContext(context.Background(), method, srv.URL+path, rd)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return <-got
	}
	good := "secret-of-AKIASMOKE" // awsloop.ConfigSecrets' secret of the key
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/tickets?caller=smoke-1", ""},
		{"POST", "/tickets", `{"caller_id":"smoke-1"}`},
		{"PATCH", "/tickets/t-1", `{"status":"closed"}`},
		{"DELETE", "/schedules/s-1", ""},
	} {
		t.Run(tc.method, func(t *testing.T) {
			s := send(t, good, tc.method, tc.path, tc.body)
			if s.err != nil {
				t.Fatalf("refused: %v (Authorization %s)", s.err, s.auth)
			}
			if s.cred.Service != "execute-api" || s.cred.Region != "eu-central-1" || s.cred.AccessKeyID != "AKIASMOKE" || s.cred.SessionToken != "session-token" {
				t.Errorf("credential %+v, want AKIASMOKE for execute-api in eu-central-1 with the session token", s.cred)
			}
			if s.body != tc.body {
				t.Errorf("body %q arrived, sent %q", s.body, tc.body)
			}
			if bad := send(t, "another-secret", tc.method, tc.path, tc.body); bad.err == nil || !strings.Contains(bad.err.Error(), "SignatureDoesNotMatch") {
				t.Errorf("signed with another secret: %v, want SignatureDoesNotMatch", bad.err)
			}
		})
	}
	t.Run("bearer", func(t *testing.T) {
		s := send(t, good, "GET", "/tenants/a/inboxes/b/users/u/messages", "", "Authorization", "Bearer tok")
		if s.auth != "Bearer tok" {
			t.Errorf("Authorization %q, want the bearer token unchanged", s.auth)
		}
	})
}

// Run names each service's failed check: against a server that answers
// 404 to everything, each service fails its first step, and the report's
// summary lists them; without a Stak token, Stak's first check says so.
func TestRunReportsFailedChecks(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	rep := smoke.Run(t.Context(), smoke.Target{URLs: smoke.LocalURLs(srv.URL), Wait: time.Millisecond})
	var names []string
	for _, c := range rep.Failed() {
		names = append(names, c.Service+": "+c.Name)
	}
	want := []string{"itsm: create ticket", "rezagent: create message", "nucleus: create schedule", "stak: end-user token", "agenticpm: create project"}
	if strings.Join(names, "|") != strings.Join(want, "|") {
		t.Errorf("failed checks %q, want %q", names, want)
	}
	out := rep.String()
	if !strings.Contains(out, "smoke: 5 of 5 checks failed: itsm: create ticket; rezagent: create message") ||
		!strings.Contains(out, "FAIL itsm: create ticket: POST /tickets: status 404") {
		t.Errorf("report does not name the failures:\n%s", out)
	}
	if !strings.Contains(out, "no Stak end-user token") {
		t.Errorf("report does not say the Stak token is missing:\n%s", out)
	}
}
