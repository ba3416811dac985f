package iameval_test

import (
	"testing"

	"github.com/dynastack/dynastack/test/iameval"
)

func TestGlob(t *testing.T) {
	for _, tt := range []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"a*", "a/b/c", true}, // * spans '/'
		{"a/*/c", "a/b/x/c", true},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"a*b", "acbd", false},
		{"tenants/acme/*", "tenants/acme2/x", false},
		{"tenants/acme*", "tenants/acme2/x", true},
	} {
		if got := iameval.Glob(tt.pattern, tt.s); got != tt.want {
			t.Errorf("Glob(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestMatchARN(t *testing.T) {
	for _, tt := range []struct {
		pattern, arn string
		want         bool
	}{
		{"arn:aws:iam::*:role/nucleus-executor-*", "arn:aws:iam::111122223333:role/nucleus-executor-x/OrgAdmin", true},
		{"arn:aws:iam::*:role/*/*", "arn:aws:iam::111122223333:role/nucleus-executor-x", false},
		{"arn:aws:execute-api:eu-west-1:1:api/*/*/tenants/acme/*", "arn:aws:execute-api:eu-west-1:1:api/$default/POST/admin/tenants/acme/inboxes/i/recount", true},
		{"arn:aws:cloudwatch:eu-west-1:1:alarm:*", "arn:aws:cloudwatch:eu-west-1:1:alarm:x:y", true},
		{"arn:aws:cloudwatch:eu-west-1:1:alarm:*", "arn:aws:cloudwatch:eu-west-1:2:alarm:x", false},
		{"*", "anything", true},
	} {
		if got := iameval.MatchARN(tt.pattern, tt.arn); got != tt.want {
			t.Errorf("MatchARN(%q, %q) = %v, want %v", tt.pattern, tt.arn, got, tt.want)
		}
	}
}

func TestEvaluate(t *testing.T) {
	topic := "arn:aws:sns:eu-west-1:111122223333:Alarms"
	tlsDeny := map[string]any{"Effect": "Deny", "Principal": "*", "Action": "sns:Publish", "Resource": topic,
		"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}}}
	allowCW := map[string]any{"Effect": "Allow", "Principal": map[string]any{"Service": "cloudwatch.amazonaws.com"}, "Action": "sns:Publish", "Resource": topic,
		"Condition": map[string]any{
			"StringEquals": map[string]any{"aws:SourceAccount": "111122223333"},
			"ArnLike":      map[string]any{"aws:SourceArn": "arn:aws:cloudwatch:eu-west-1:111122223333:alarm:*"},
		}}
	ok := map[string]string{"aws:SecureTransport": "true", "aws:SourceAccount": "111122223333", "aws:SourceArn": "arn:aws:cloudwatch:eu-west-1:111122223333:alarm:A"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range ok {
			m[a] = b
		}
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	req := func(svc string, ctx map[string]string) iameval.Request {
		return iameval.Request{Service: svc, Action: "SNS:Publish", Resource: topic, Context: ctx}
	}
	cw := "cloudwatch.amazonaws.com"
	for _, tt := range []struct {
		name string
		doc  []any
		req  iameval.Request
		want iameval.Decision
	}{
		{"deny only: nothing allowed", []any{tlsDeny}, req(cw, ok), iameval.ImplicitDeny},
		{"allowed", []any{tlsDeny, allowCW}, req(cw, ok), iameval.Allow},
		{"without TLS", []any{tlsDeny, allowCW}, req(cw, with("aws:SecureTransport", "false")), iameval.ExplicitDeny},
		{"another account's alarm", []any{tlsDeny, allowCW}, req(cw, with("aws:SourceAccount", "444455556666")), iameval.ImplicitDeny},
		{"no source arn", []any{tlsDeny, allowCW}, req(cw, with("aws:SourceArn", "")), iameval.ImplicitDeny},
		{"another service", []any{tlsDeny, allowCW}, req("events.amazonaws.com", ok), iameval.ImplicitDeny},
		{"IfExists on a missing key", []any{map[string]any{"Effect": "Allow", "Principal": map[string]any{"AWS": "*"}, "Action": "sns:*", "Resource": "*",
			"Condition": map[string]any{"BoolIfExists": map[string]any{"aws:PrincipalIsAWSService": "true"}}}}, req(cw, ok), iameval.Allow},
		{"NotResource", []any{map[string]any{"Effect": "Allow", "Action": "sns:Publish", "NotResource": "arn:aws:sns:*:*:Other"}}, req("", ok), iameval.Allow},
	} {
		got, err := iameval.Evaluate(map[string]any{"Statement": tt.doc}, tt.req)
		if err != nil || got != tt.want {
			t.Errorf("%s: %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	// What the evaluator does not understand is an error, never a guess.
	for _, bad := range []map[string]any{
		{"Effect": "Allow", "Principal": "*", "Action": "sns:Publish", "Resource": "*", "Condition": map[string]any{"DateGreaterThan": map[string]any{"aws:CurrentTime": "2020-01-01"}}},
		{"Effect": "Allow", "Principal": "*", "Action": "sns:Publish", "Resource": map[string]any{"Ref": "Topic"}},
		{"Effect": "Allow", "Principal": "*", "Action": "sns:Publish", "Resource": "*", "Surprise": true},
	} {
		if _, err := iameval.Evaluate(map[string]any{"Statement": []any{bad}}, req(cw, ok)); err == nil {
			t.Errorf("%v: evaluated without an error", bad)
		}
	}
}

func TestResolve(t *testing.T) {
	res := map[string]any{"Topic": map[string]any{"Type": "AWS::SNS::Topic"}, "Key": map[string]any{"Type": "AWS::KMS::Key"}}
	env := iameval.Env{Partition: "aws", Region: "eu-west-1", Account: "111122223333"}
	got, err := iameval.Resolve([]any{
		map[string]any{"Ref": "Topic"},
		map[string]any{"Fn::GetAtt": []any{"Key", "Arn"}},
		map[string]any{"Fn::Join": []any{"", []any{"arn:", map[string]any{"Ref": "AWS::Partition"}, ":x:", map[string]any{"Ref": "AWS::AccountId"}}}},
	}, res, env)
	want := []any{"arn:aws:sns:eu-west-1:111122223333:Topic", "arn:aws:kms:eu-west-1:111122223333:key/Key", "arn:aws:x:111122223333"}
	if err != nil || len(got.([]any)) != 3 {
		t.Fatal(got, err)
	}
	for i, w := range want {
		if got.([]any)[i] != w {
			t.Errorf("%d: %v, want %v", i, got.([]any)[i], w)
		}
	}
	if _, err := iameval.Resolve(map[string]any{"Fn::ImportValue": "x"}, res, env); err == nil {
		t.Error("Fn::ImportValue resolved")
	}
}
