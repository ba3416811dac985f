package awsloop_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
)

func startSTS(t *testing.T) *awsloop.STS {
	t.Helper()
	fake := awsloop.NewSTS()
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fake.Close() })
	return fake
}

func stsClient(fake *awsloop.STS, accessKeyID string) *sts.Client {
	return sts.NewFromConfig(awsloop.Config(accessKeyID), func(o *sts.Options) { o.BaseEndpoint = aws.String(fake.URL()) })
}

const role = "arn:aws:iam::111122223333:role/nucleus-executor-target"

// AssumeRole as the API reference documents it: the form the SDK posts is
// decoded (Action, Version, RoleArn, RoleSessionName, ExternalId,
// DurationSeconds), and the credentials it returns are the ones that sign
// the next call.
func TestAssumeRoleThenCallWithSessionCredentials(t *testing.T) {
	fake := startSTS(t)
	fake.Trust(role, "ext-1234")
	ctx := context.Background()
	out, err := stsClient(fake, "AKIDEXECUTOR").AssumeRole(ctx, &sts.AssumeRoleInput{
		RoleArn: aws.String(role), RoleSessionName: aws.String("nucleus-test"), ExternalId: aws.String("ext-1234"), DurationSeconds: aws.Int32(900),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(out.AssumedRoleUser.Arn); got != "arn:aws:sts::111122223333:assumed-role/nucleus-executor-target/nucleus-test" {
		t.Errorf("AssumedRoleUser.Arn = %s", got)
	}
	if exp := aws.ToTime(out.Credentials.Expiration); exp.Before(time.Now().Add(14*time.Minute)) || exp.After(time.Now().Add(16*time.Minute)) {
		t.Errorf("Expiration %v is not 900 s away", exp)
	}
	calls := fake.CallsOf("AssumeRole")
	if len(calls) != 1 {
		t.Fatalf("%d AssumeRole calls", len(calls))
	}
	c := calls[0]
	for k, want := range map[string]string{"RoleArn": role, "RoleSessionName": "nucleus-test", "ExternalId": "ext-1234", "DurationSeconds": "900"} {
		if c.Get(k) != want {
			t.Errorf("%s = %q, want %q", k, c.Get(k), want)
		}
	}
	if c.AccessKeyID != "AKIDEXECUTOR" || c.SigningName != "sts" || c.Region != awsloop.Region || c.SessionToken != "" {
		t.Errorf("signed by %q for %s/%s, token %q", c.AccessKeyID, c.SigningName, c.Region, c.SessionToken)
	}

	// The assumed credentials, through the SDK's own AssumeRole provider.
	cfg := awsloop.Config("AKIDEXECUTOR")
	cfg.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(stsClient(fake, "AKIDEXECUTOR"), role, func(o *stscreds.AssumeRoleOptions) {
		o.ExternalID = aws.String("ext-1234")
	}))
	id, err := sts.NewFromConfig(cfg, func(o *sts.Options) { o.BaseEndpoint = aws.String(fake.URL()) }).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(id.Account) != "111122223333" || !strings.HasPrefix(aws.ToString(id.Arn), "arn:aws:sts::111122223333:assumed-role/nucleus-executor-target/") {
		t.Errorf("caller identity %s %s", aws.ToString(id.Account), aws.ToString(id.Arn))
	}
	last := fake.CallsOf("GetCallerIdentity")[0]
	ss, ok := fake.Session(last.AccessKeyID)
	if !ok || ss.RoleARN != role || ss.CallerAccessKeyID != "AKIDEXECUTOR" || last.SessionToken != ss.SessionToken {
		t.Errorf("GetCallerIdentity signed with %q (session %+v, found %v), token %q", last.AccessKeyID, ss, ok, last.SessionToken)
	}
}

func TestAssumeRoleRefusals(t *testing.T) {
	fake := startSTS(t)
	fake.Trust(role, "ext-1234")
	fake.Trust("arn:aws:iam::111122223333:role/open", "")
	tests := []struct {
		name   string
		in     sts.AssumeRoleInput
		code   string
		status int
	}{
		{"wrong external id", sts.AssumeRoleInput{RoleArn: aws.String(role), RoleSessionName: aws.String("s1"), ExternalId: aws.String("other")}, "AccessDenied", 403},
		{"missing external id", sts.AssumeRoleInput{RoleArn: aws.String(role), RoleSessionName: aws.String("s1")}, "AccessDenied", 403},
		{"external id where none is expected", sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::111122223333:role/open"), RoleSessionName: aws.String("s1"), ExternalId: aws.String("x1")}, "AccessDenied", 403},
		{"untrusted role", sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::111122223333:role/other"), RoleSessionName: aws.String("s1")}, "AccessDenied", 403},
		{"short session name", sts.AssumeRoleInput{RoleArn: aws.String(role), RoleSessionName: aws.String("s")}, "ValidationError", 400},
		{"session name with space", sts.AssumeRoleInput{RoleArn: aws.String(role), RoleSessionName: aws.String("a b")}, "ValidationError", 400},
		{"duration too short", sts.AssumeRoleInput{RoleArn: aws.String(role), RoleSessionName: aws.String("s1"), ExternalId: aws.String("ext-1234"), DurationSeconds: aws.Int32(899)}, "ValidationError", 400},
		{"short role arn", sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::1:r"), RoleSessionName: aws.String("s1")}, "ValidationError", 400},
	}
	client := stsClient(fake, "AKIDEXECUTOR")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client.AssumeRole(context.Background(), &tt.in)
			var apiErr smithy.APIError
			if !errors.As(err, &apiErr) || apiErr.ErrorCode() != tt.code {
				t.Fatalf("err = %v, want %s", err, tt.code)
			}
			var re interface{ HTTPStatusCode() int }
			if !errors.As(err, &re) || re.HTTPStatusCode() != tt.status {
				t.Errorf("status of %v, want %d", err, tt.status)
			}
		})
	}
	if n := len(fake.Sessions()); n != 0 {
		t.Errorf("%d sessions issued by refused calls", n)
	}
}

// Requests that are not the protocol are refused in its error shape.
func TestProtocolRefusals(t *testing.T) {
	fake := startSTS(t)
	post := func(contentType, auth, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, fake.URL(), strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	const form = "application/x-www-form-urlencoded; charset=utf-8"
	const signed = "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/sts/aws4_request, SignedHeaders=host, Signature=00"
	tests := []struct {
		name, contentType, auth, body string
		status                        int
		code                          string
	}{
		{"unsigned", form, "", "Action=GetCallerIdentity&Version=2011-06-15", 403, "MissingAuthenticationToken"},
		{"signed for another service", form, strings.Replace(signed, "/sts/", "/ec2/", 1), "Action=GetCallerIdentity&Version=2011-06-15", 403, "SignatureDoesNotMatch"},
		{"json body", "application/x-amz-json-1.1", signed, "{}", 400, "UnsupportedMediaType"},
		{"no action", form, signed, "Version=2011-06-15", 400, "MissingAction"},
		{"wrong version", form, signed, "Action=GetCallerIdentity&Version=2010-01-01", 400, "InvalidParameterValue"},
		{"unknown action", form, signed, "Action=GetFederationToken&Version=2011-06-15", 400, "InvalidAction"},
		{"ok", form, signed, "Action=GetCallerIdentity&Version=2011-06-15", 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := post(tt.contentType, tt.auth, tt.body)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %s", status, tt.status, body)
			}
			if tt.code == "" {
				if !strings.Contains(body, "<GetCallerIdentityResult><UserId>AKID</UserId>") || !strings.Contains(body, "<ResponseMetadata><RequestId>") {
					t.Errorf("body %s", body)
				}
				return
			}
			if !strings.Contains(body, "<ErrorResponse") || !strings.Contains(body, "<Code>"+tt.code+"</Code>") {
				t.Errorf("body %s, want ErrorResponse with code %s", body, tt.code)
			}
		})
	}
	if n := len(fake.Calls()); n != len(tests) {
		t.Errorf("%d calls recorded, want every one of %d", n, len(tests))
	}
}
