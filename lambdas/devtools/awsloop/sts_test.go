package awsloop_test

import (
	"context"
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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func startSTS(t *testing.T) *awsloop.STS {
	t.Helper()
	fake := awsloop.NewSTS()
	require.NoError(t, fake.Start())
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
	require.NoError(t, err)
	assert.Equal(t, "arn:aws:sts::111122223333:assumed-role/nucleus-executor-target/nucleus-test", aws.ToString(out.AssumedRoleUser.Arn), "AssumedRoleUser.Arn")
	assert.WithinDuration(t, time.Now().Add(15*time.Minute), aws.ToTime(out.Credentials.Expiration), time.Minute, "Expiration is not 900 s away")
	calls := fake.CallsOf("AssumeRole")
	require.Len(t, calls, 1, "AssumeRole calls")
	c := calls[0]
	for k, want := range map[string]string{"RoleArn": role, "RoleSessionName": "nucleus-test", "ExternalId": "ext-1234", "DurationSeconds": "900"} {
		assert.Equal(t, want, c.Get(k), "AssumeRole parameter %s", k)
	}
	assert.Equal(t, "AKIDEXECUTOR", c.AccessKeyID, "signed by")
	assert.Equal(t, "sts", c.SigningName, "signing name")
	assert.Equal(t, awsloop.Region, c.Region, "signing region")
	assert.Empty(t, c.SessionToken, "session token")

	// The assumed credentials, through the SDK's own AssumeRole provider.
	cfg := awsloop.Config("AKIDEXECUTOR")
	cfg.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(stsClient(fake, "AKIDEXECUTOR"), role, func(o *stscreds.AssumeRoleOptions) {
		o.ExternalID = aws.String("ext-1234")
	}))
	id, err := sts.NewFromConfig(cfg, func(o *sts.Options) { o.BaseEndpoint = aws.String(fake.URL()) }).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	require.NoError(t, err)
	assert.Equal(t, "111122223333", aws.ToString(id.Account), "caller identity account")
	assert.True(t, strings.HasPrefix(aws.ToString(id.Arn), "arn:aws:sts::111122223333:assumed-role/nucleus-executor-target/"), "caller identity ARN %s", aws.ToString(id.Arn))
	last := fake.CallsOf("GetCallerIdentity")[0]
	ss, ok := fake.Session(last.AccessKeyID)
	assert.True(t, ok, "GetCallerIdentity signed with %q, not a session's key", last.AccessKeyID)
	assert.Equal(t, role, ss.RoleARN, "session role")
	assert.Equal(t, "AKIDEXECUTOR", ss.CallerAccessKeyID, "session caller")
	assert.Equal(t, ss.SessionToken, last.SessionToken, "GetCallerIdentity's session token")
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
			require.ErrorAs(t, err, &apiErr)
			require.Equal(t, tt.code, apiErr.ErrorCode(), "error code of %v", err)
			var re interface{ HTTPStatusCode() int }
			if assert.ErrorAs(t, err, &re) {
				assert.Equal(t, tt.status, re.HTTPStatusCode(), "status of %v", err)
			}
		})
	}
	assert.Empty(t, fake.Sessions(), "sessions issued by refused calls")
}

// Deny refuses a role even where TrustAll lets every other one be
// assumed: the local runner's target account whose trust policy no longer
// names the executor.
func TestDenyUnderTrustAll(t *testing.T) {
	fake := startSTS(t)
	fake.TrustAll()
	fake.Deny(role)
	client := stsClient(fake, "AKIDEXECUTOR")
	_, err := client.AssumeRole(context.Background(), &sts.AssumeRoleInput{RoleArn: aws.String(role), RoleSessionName: aws.String("s1")})
	var apiErr smithy.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "AccessDenied", apiErr.ErrorCode(), "denied role")
	_, err = client.AssumeRole(context.Background(), &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::111122223333:role/other"), RoleSessionName: aws.String("s1")})
	assert.NoError(t, err, "another role under TrustAll")
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
		require.NoError(t, err)
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
			require.Equal(t, tt.status, status, "status: %s", body)
			if tt.code == "" {
				assert.Contains(t, body, "<GetCallerIdentityResult><UserId>AKID</UserId>", "body")
				assert.Contains(t, body, "<ResponseMetadata><RequestId>", "body")
				return
			}
			assert.Contains(t, body, "<ErrorResponse", "body: want ErrorResponse with code %s", tt.code)
			assert.Contains(t, body, "<Code>"+tt.code+"</Code>", "body: want ErrorResponse with code %s", tt.code)
		})
	}
	assert.Len(t, fake.Calls(), len(tests), "calls recorded: want every one")
}
