package awsloop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A JSON-protocol server built on the core alone: the target, the body and
// the signing key are decoded; errors come back as __type + message with
// X-Amzn-ErrorType, as awsJson clients read them.
func TestJSONProtocol(t *testing.T) {
	srv := awsloop.NewServer(awsloop.Service{Name: "events", Protocol: awsloop.AWSJSON11, TargetPrefix: "AWSEvents"})
	srv.Handle("PutEvents", func(c *awsloop.Call) (any, error) {
		var in struct{ Entries []map[string]any }
		if err := c.Decode(&in); err != nil {
			return nil, err
		}
		if len(in.Entries) == 0 {
			return nil, awsloop.ClientError("ValidationException", "Entries must not be empty")
		}
		return map[string]any{"FailedEntryCount": 0, "Entries": []map[string]string{{"EventId": "e-1"}}}, nil
	})
	require.NoError(t, srv.Start())
	defer srv.Close()
	post := func(target, contentType, body string) (int, http.Header, map[string]any) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL(), strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("X-Amz-Target", target)
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDJSON/20260101/eu-west-1/events/aws4_request, SignedHeaders=host, Signature=00")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m), "body %s", b)
		return res.StatusCode, res.Header, m
	}
	const ct = "application/x-amz-json-1.1"
	status, _, m := post("AWSEvents.PutEvents", ct, `{"Entries":[{"Source":"app","DetailType":"x","Detail":"{}"}]}`)
	assert.Equal(t, 200, status, "PutEvents: %v", m)
	assert.Equal(t, float64(0), m["FailedEntryCount"], "PutEvents: %v", m)
	c := srv.Calls()[0]
	assert.Equal(t, "PutEvents", c.Action, "recorded action")
	assert.Equal(t, "AKIDJSON", c.AccessKeyID, "recorded key")
	assert.Equal(t, "eu-west-1", c.Region, "recorded region")
	assert.Contains(t, string(c.Body), `"Source":"app"`, "recorded body")
	for _, tt := range []struct{ target, contentType, body, code string }{
		{"AWSEvents.PutEvents", ct, `{"Entries":[]}`, "ValidationException"},
		{"AWSEvents.PutEvents", ct, `{"Entries":`, "SerializationException"},
		{"AWSEvents.PutEvents", "application/x-amz-json-1.0", `{}`, "UnsupportedMediaType"},
		{"Other.PutEvents", ct, `{}`, "UnknownOperationException"},
		{"AWSEvents.PutRule", ct, `{}`, "UnknownOperationException"},
	} {
		status, h, m := post(tt.target, tt.contentType, tt.body)
		assert.Equal(t, 400, status, "%s %s: status", tt.target, tt.body)
		assert.Equal(t, tt.code, m["__type"], "%s %s: __type", tt.target, tt.body)
		assert.Equal(t, tt.code, h.Get("X-Amzn-ErrorType"), "%s %s: X-Amzn-ErrorType", tt.target, tt.body)
		assert.NotEqual(t, "", m["message"], "%s %s: message", tt.target, tt.body)
	}
}

func TestList(t *testing.T) {
	srv := awsloop.NewServer(awsloop.Service{Name: "ec2", Protocol: awsloop.EC2Query})
	var got []string
	srv.Handle("StartInstances", func(c *awsloop.Call) (any, error) {
		got = c.List("InstanceId")
		return nil, nil
	})
	require.NoError(t, srv.Start())
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL(), strings.NewReader("Action=StartInstances&InstanceId.10=i-c&InstanceId.2=i-b&InstanceId.1=i-a&Version=x"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=K/20260101/us-east-1/ec2/aws4_request, SignedHeaders=host, Signature=00")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, []string{"i-a", "i-b", "i-c"}, got, "List")
}

func ExampleSTS() {
	fake := awsloop.NewSTS()
	fake.Trust("arn:aws:iam::111122223333:role/nucleus-executor-dev", "tenant-42")
	if err := fake.Start(); err != nil {
		panic(err)
	}
	defer fake.Close()

	client := sts.NewFromConfig(awsloop.Config("AKIDCALLER"), func(o *sts.Options) {
		o.BaseEndpoint = aws.String(fake.URL())
	})
	out, err := client.AssumeRole(context.Background(), &sts.AssumeRoleInput{
		RoleArn:         aws.String("arn:aws:iam::111122223333:role/nucleus-executor-dev"),
		RoleSessionName: aws.String("example"),
		ExternalId:      aws.String("tenant-42"),
	})
	if err != nil {
		panic(err)
	}
	ss, _ := fake.Session(aws.ToString(out.Credentials.AccessKeyId))
	fmt.Println(aws.ToString(out.AssumedRoleUser.Arn))
	fmt.Println(ss.CallerAccessKeyID, ss.ExternalID)
	// Output:
	// arn:aws:sts::111122223333:assumed-role/nucleus-executor-dev/example
	// AKIDCALLER tenant-42
}
