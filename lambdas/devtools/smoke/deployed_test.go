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

	itsmcontract "github.com/dynastack/dynastack/constructs/itsm/contract"
	nucleuscontract "github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/constructs/service"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/devtools/smoke"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Discover reads each service's ApiUrl output with DescribeStacks of
// <service>-<stage>, through the real SDK client against a CloudFormation
// fake that checks every signature; a stage with a missing stack or output
// is an error naming each.
func TestDiscover(t *testing.T) {
	fake := awsloop.NewCloudFormation()
	fake.VerifySignatures(awsloop.ConfigSecrets)
	require.NoError(t, fake.Start())
	t.Cleanup(func() { _ = fake.Close() })
	for _, svc := range smoke.Services {
		fake.AddStack(smoke.StackName(svc, "stage"), map[string]string{
			"ApiUrl": "https://" + svc + ".execute-api.us-east-1.amazonaws.com/", "Other": "x"})
	}
	fake.AddStack("itsm-prod", map[string]string{"ApiUrl": "https://itsm.example/"})
	fake.AddStack("stak-prod", map[string]string{"NotTheUrl": "x"})
	cfn := cloudformation.NewFromConfig(awsloop.Config("smoke"), func(o *cloudformation.Options) { o.BaseEndpoint = aws.String(fake.URL()) })

	urls, err := smoke.Discover(t.Context(), cfn, "stage")
	require.NoError(t, err)
	for _, svc := range smoke.Services {
		assert.Equal(t, "https://"+svc+".execute-api.us-east-1.amazonaws.com", urls[svc], "URL of %s", svc)
	}
	assert.Len(t, fake.CallsOf("DescribeStacks"), len(smoke.Services), "DescribeStacks calls")

	_, err = smoke.Discover(t.Context(), cfn, "prod")
	require.Error(t, err, "prod: no error with four stacks missing and one without ApiUrl")
	for _, want := range []string{"stack rezagent-prod", "stack nucleus-prod", "stack agenticpm-prod", "does not exist", "stack stak-prod has no ApiUrl output"} {
		assert.ErrorContains(t, err, want, "prod error")
	}
	assert.NotContains(t, err.Error(), "itsm-prod", "error names itsm-prod, which has its output")
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
		require.NoError(t, err)
		resp.Body.Close()
		return <-got
	}
	good := "secret-of-AKIASMOKE" // awsloop.ConfigSecrets' secret of the key
	// The signing transport's test: raw requests of each method (what the
	// generated clients send through it), paths from the contract.
	for _, tc := range []struct{ method, path, body string }{
		{itsmcontract.ListTickets.Method, itsmcontract.ListTickets.URLQuery(service.Values{itsmcontract.ParamCaller: "smoke-1"}), ""},
		{itsmcontract.CreateTicket.Method, itsmcontract.CreateTicket.URL(), `{"caller_id":"sess-smoke-1"}`},
		{itsmcontract.SetStatus.Method, itsmcontract.SetStatus.URL("t-1"), `{"status":"closed"}`},
		{nucleuscontract.DeleteSchedule.Method, nucleuscontract.DeleteSchedule.URL("s-1"), ""},
	} {
		t.Run(tc.method, func(t *testing.T) {
			s := send(t, good, tc.method, tc.path, tc.body)
			require.NoError(t, s.err, "refused (Authorization %s)", s.auth)
			assert.Equal(t, "execute-api", s.cred.Service, "credential service")
			assert.Equal(t, "eu-central-1", s.cred.Region, "credential region")
			assert.Equal(t, "AKIASMOKE", s.cred.AccessKeyID, "credential key")
			assert.Equal(t, "session-token", s.cred.SessionToken, "credential session token")
			assert.Equal(t, tc.body, s.body, "body arrived")
			bad := send(t, "another-secret", tc.method, tc.path, tc.body)
			assert.ErrorContains(t, bad.err, "SignatureDoesNotMatch", "signed with another secret")
		})
	}
	t.Run("bearer", func(t *testing.T) {
		s := send(t, good, stakcontract.Feed.Method, stakcontract.Feed.URL("a", "b", "u"), "", "Authorization", "Bearer tok")
		assert.Equal(t, "Bearer tok", s.auth, "Authorization: want the bearer token unchanged")
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
	assert.Equal(t, want, names, "failed checks")
	out := rep.String()
	assert.Contains(t, out, "smoke: 5 of 5 checks failed: itsm: create ticket; rezagent: create message", "report does not name the failures")
	assert.Contains(t, out, "FAIL itsm: create ticket: POST /tickets: status 404", "report does not name the failures")
	assert.Contains(t, out, "no Stak end-user token", "report does not say the Stak token is missing")
}
