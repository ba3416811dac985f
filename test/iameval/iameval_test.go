package iameval_test

import (
	"testing"

	"github.com/dynastack/dynastack/test/iameval"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		assert.Equal(t, tt.want, iameval.Glob(tt.pattern, tt.s), "Glob(%q, %q)", tt.pattern, tt.s)
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
		assert.Equal(t, tt.want, iameval.MatchARN(tt.pattern, tt.arn), "MatchARN(%q, %q)", tt.pattern, tt.arn)
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
		if assert.NoError(t, err, tt.name) {
			assert.Equal(t, tt.want, got, tt.name)
		}
	}
	// What the evaluator does not understand is an error, never a guess.
	for _, bad := range []map[string]any{
		{"Effect": "Allow", "Principal": "*", "Action": "sns:Publish", "Resource": "*", "Condition": map[string]any{"DateGreaterThan": map[string]any{"aws:CurrentTime": "2020-01-01"}}},
		{"Effect": "Allow", "Principal": "*", "Action": "sns:Publish", "Resource": map[string]any{"Ref": "Topic"}},
		{"Effect": "Allow", "Principal": "*", "Action": "sns:Publish", "Resource": "*", "Surprise": true},
	} {
		_, err := iameval.Evaluate(map[string]any{"Statement": []any{bad}}, req(cw, ok))
		assert.Error(t, err, "%v: evaluated without an error", bad)
	}
}

func TestResolve(t *testing.T) {
	res := map[string]any{"Topic": map[string]any{"Type": "AWS::SNS::Topic"}, "Key": map[string]any{"Type": "AWS::KMS::Key"},
		"Table": map[string]any{"Type": "AWS::DynamoDB::Table"}, "Bus": map[string]any{"Type": "AWS::Events::EventBus"}, "Logs": map[string]any{"Type": "AWS::Logs::LogGroup"}}
	env := iameval.Env{Partition: "aws", Region: "eu-west-1", Account: "111122223333"}
	got, err := iameval.Resolve([]any{
		map[string]any{"Ref": "Topic"},
		map[string]any{"Fn::GetAtt": []any{"Key", "Arn"}},
		map[string]any{"Fn::Join": []any{"", []any{"arn:", map[string]any{"Ref": "AWS::Partition"}, ":x:", map[string]any{"Ref": "AWS::AccountId"}}}},
		map[string]any{"Fn::GetAtt": []any{"Table", "Arn"}},
		map[string]any{"Fn::GetAtt": []any{"Bus", "Arn"}},
		map[string]any{"Fn::GetAtt": []any{"Logs", "Arn"}},
	}, res, env)
	want := []any{"arn:aws:sns:eu-west-1:111122223333:Topic", "arn:aws:kms:eu-west-1:111122223333:key/Key", "arn:aws:x:111122223333",
		"arn:aws:dynamodb:eu-west-1:111122223333:table/Table", "arn:aws:events:eu-west-1:111122223333:event-bus/Bus", "arn:aws:logs:eu-west-1:111122223333:log-group:Logs:*"}
	require.NoError(t, err)
	assert.Equal(t, want, got)
	_, err = iameval.Resolve(map[string]any{"Fn::ImportValue": "x"}, res, env)
	assert.Error(t, err, "Fn::ImportValue resolved")
}

// A key policy as GrantCredentialsEncrypt writes it: the role named as
// Principal, the encryption context pinned by a single-valued operator
// per key and by ForAllValues: over the multivalued key of its keys.
func TestEncryptionContextConditions(t *testing.T) {
	role := "arn:aws:iam::111122223333:role/HandlerRole"
	key := "arn:aws:kms:eu-west-1:111122223333:key/Key"
	doc := map[string]any{"Statement": []any{
		map[string]any{"Effect": "Allow", "Principal": map[string]any{"AWS": "arn:aws:iam::111122223333:root"}, "Action": "kms:*", "Resource": "*"},
		map[string]any{"Effect": "Allow", "Principal": map[string]any{"AWS": role}, "Action": "kms:Encrypt", "Resource": "*",
			"Condition": map[string]any{
				"StringEquals":              map[string]any{"kms:EncryptionContext:integration": []any{"jira", "asana"}, "kms:EncryptionContext:stage": "dev"},
				"ForAllValues:StringEquals": map[string]any{"kms:EncryptionContextKeys": []any{"integration", "stage"}},
			}},
	}}
	req := func(principal string, ec map[string]string) iameval.Request {
		r := iameval.Request{Principal: principal, Action: "kms:Encrypt", Resource: key, Context: map[string]string{}, Sets: map[string][]string{"kms:EncryptionContextKeys": {}}}
		for k, v := range ec {
			r.Context["kms:EncryptionContext:"+k] = v
			r.Sets["kms:EncryptionContextKeys"] = append(r.Sets["kms:EncryptionContextKeys"], k)
		}
		return r
	}
	for _, tt := range []struct {
		name string
		req  iameval.Request
		want iameval.Decision
	}{
		{"the context granted", req(role, map[string]string{"integration": "jira", "stage": "dev"}), iameval.Allow},
		{"another integration", req(role, map[string]string{"integration": "trello", "stage": "dev"}), iameval.ImplicitDeny},
		{"another stage", req(role, map[string]string{"integration": "jira", "stage": "prod"}), iameval.ImplicitDeny},
		{"no stage", req(role, map[string]string{"integration": "jira"}), iameval.ImplicitDeny},
		{"an extra key", req(role, map[string]string{"integration": "jira", "stage": "dev", "tenant": "acme"}), iameval.ImplicitDeny},
		// kms:EncryptionContext:<key> names its key case-insensitively;
		// the key set's StringEquals is what keeps the case.
		{"a key in another case", req(role, map[string]string{"integration": "jira", "Stage": "dev"}), iameval.ImplicitDeny},
		{"no context", req(role, nil), iameval.ImplicitDeny},
		// The root statement delegates to IAM; it names no role.
		{"another role", req("arn:aws:iam::111122223333:role/Other", map[string]string{"integration": "jira", "stage": "dev"}), iameval.ImplicitDeny},
		{"the account itself", req("arn:aws:iam::111122223333:root", nil), iameval.Allow},
	} {
		got, err := iameval.Evaluate(doc, tt.req)
		if assert.NoError(t, err, tt.name) {
			assert.Equal(t, tt.want, got, tt.name)
		}
	}

	set := func(op string, vals ...any) map[string]any {
		return map[string]any{"Statement": []any{map[string]any{"Effect": "Allow", "Action": "kms:Encrypt", "Resource": "*",
			"Condition": map[string]any{op: map[string]any{"kms:EncryptionContextKeys": vals}}}}}
	}
	keys := func(ks ...string) iameval.Request {
		r := iameval.Request{Action: "kms:Encrypt", Resource: key}
		if ks != nil {
			r.Sets = map[string][]string{"kms:EncryptionContextKeys": ks}
		}
		return r
	}
	for _, tt := range []struct {
		name string
		doc  map[string]any
		req  iameval.Request
		want iameval.Decision
	}{
		{"ForAllValues: all listed", set("ForAllValues:StringEquals", "a", "b"), keys("b"), iameval.Allow},
		{"ForAllValues: one not listed", set("ForAllValues:StringEquals", "a", "b"), keys("a", "c"), iameval.ImplicitDeny},
		// IAM's trap: an absent multivalued key satisfies ForAllValues:.
		{"ForAllValues: key absent", set("ForAllValues:StringEquals", "a"), keys(), iameval.Allow},
		{"ForAnyValue: one listed", set("ForAnyValue:StringEquals", "a"), keys("c", "a"), iameval.Allow},
		{"ForAnyValue: none listed", set("ForAnyValue:StringEquals", "a"), keys("c"), iameval.ImplicitDeny},
		{"ForAnyValue: key absent", set("ForAnyValue:StringEquals", "a"), keys(), iameval.ImplicitDeny},
		{"ForAnyValue:…IfExists: key absent", set("ForAnyValue:StringEqualsIfExists", "a"), keys(), iameval.Allow},
		{"ForAllValues:StringLike", set("ForAllValues:StringLike", "a*"), keys("ab", "ac"), iameval.Allow},
	} {
		got, err := iameval.Evaluate(tt.doc, tt.req)
		if assert.NoError(t, err, tt.name) {
			assert.Equal(t, tt.want, got, tt.name)
		}
	}
	// A plain operator on a multivalued key, an unknown set operator and
	// a named principal without Request.Principal are errors.
	for name, tt := range map[string]struct {
		doc map[string]any
		req iameval.Request
	}{
		"plain operator on a set": {set("StringEquals", "a"), keys("a")},
		"unknown set operator":    {set("ForEachValue:StringEquals", "a"), keys("a")},
		"no principal": {map[string]any{"Statement": []any{map[string]any{"Effect": "Allow", "Principal": map[string]any{"AWS": role}, "Action": "kms:Encrypt", "Resource": "*"}}},
			iameval.Request{Action: "kms:Encrypt", Resource: key}},
	} {
		_, err := iameval.Evaluate(tt.doc, tt.req)
		assert.Error(t, err, "%s: evaluated without an error", name)
	}
}

// KMS's evaluation of a key policy with the caller's identity policies:
// a statement naming the caller suffices; the account's statement
// delegates to IAM, so the identity policies must allow too; an explicit
// deny anywhere wins.
func TestEvaluateKMS(t *testing.T) {
	role := "arn:aws:iam::111122223333:role/Agent"
	key := "arn:aws:kms:eu-west-1:111122223333:key/Key"
	rootPrincipal := map[string]any{"AWS": "arn:aws:iam::111122223333:root"}
	jira := map[string]any{"StringEquals": map[string]any{"kms:EncryptionContext:integration": "jira"}}
	keyPolicy := map[string]any{"Statement": []any{
		map[string]any{"Effect": "Allow", "Principal": rootPrincipal, "Action": []any{"kms:Describe*", "kms:Put*"}, "Resource": "*"},
		map[string]any{"Effect": "Allow", "Principal": rootPrincipal, "Action": "kms:Decrypt", "Resource": "*", "Condition": jira},
		map[string]any{"Effect": "Allow", "Principal": map[string]any{"AWS": "arn:aws:iam::111122223333:role/Named"}, "Action": "kms:Encrypt", "Resource": "*"},
		map[string]any{"Effect": "Deny", "Principal": "*", "Action": "kms:CreateGrant", "Resource": "*"},
	}}
	allow := func(action string) any {
		return map[string]any{"Statement": []any{map[string]any{"Effect": "Allow", "Action": action, "Resource": "*"}}}
	}
	deny := map[string]any{"Statement": []any{map[string]any{"Effect": "Deny", "Action": "kms:Decrypt", "Resource": "*"}}}
	req := func(principal, action string, ec map[string]string) iameval.Request {
		return iameval.WithEncryptionContext(iameval.Request{Principal: principal, Action: action, Resource: key}, ec)
	}
	ec := map[string]string{"integration": "jira"}
	for _, tt := range []struct {
		name     string
		identity []any
		req      iameval.Request
		want     iameval.KMSDecision
	}{
		{"delegated, and the role's policy allows", []any{allow("kms:Decrypt")}, req(role, "kms:Decrypt", ec),
			iameval.KMSDecision{Identity: iameval.Allow, Account: iameval.Allow, Outcome: iameval.Allow}},
		{"delegated, the role's policy silent", []any{allow("kms:Encrypt")}, req(role, "kms:Decrypt", ec),
			iameval.KMSDecision{Account: iameval.Allow}},
		{"delegated, the role has no policy", nil, req(role, "kms:Decrypt", ec),
			iameval.KMSDecision{Account: iameval.Allow}},
		{"not delegated: another context", []any{allow("kms:*")}, req(role, "kms:Decrypt", map[string]string{"integration": "outlook"}),
			iameval.KMSDecision{Identity: iameval.Allow}},
		{"not delegated: no context", []any{allow("kms:*")}, req(role, "kms:Decrypt", nil),
			iameval.KMSDecision{Identity: iameval.Allow}},
		{"a deny in the role's policies", []any{allow("kms:Decrypt"), deny}, req(role, "kms:Decrypt", ec),
			iameval.KMSDecision{Identity: iameval.ExplicitDeny, Account: iameval.Allow, Outcome: iameval.ExplicitDeny}},
		{"named in the key policy, no identity policy", nil, req("arn:aws:iam::111122223333:role/Named", "kms:Encrypt", nil),
			iameval.KMSDecision{Key: iameval.Allow, Outcome: iameval.Allow}},
		{"administration delegated", []any{allow("kms:*")}, req(role, "kms:PutKeyPolicy", nil),
			iameval.KMSDecision{Identity: iameval.Allow, Account: iameval.Allow, Outcome: iameval.Allow}},
		{"the key policy denies", []any{allow("kms:*")}, req(role, "kms:CreateGrant", nil),
			iameval.KMSDecision{Identity: iameval.Allow, Key: iameval.ExplicitDeny, Account: iameval.ExplicitDeny, Outcome: iameval.ExplicitDeny}},
	} {
		got, err := iameval.EvaluateKMS(keyPolicy, tt.identity, tt.req)
		if assert.NoError(t, err, tt.name) {
			assert.Equal(t, tt.want, got, tt.name)
		}
	}
	_, err := iameval.EvaluateKMS(keyPolicy, nil, iameval.Request{Action: "kms:Decrypt", Resource: key})
	assert.ErrorContains(t, err, "no IAM principal", "a request without a principal")
}

// The condition keys of an encryption context, and none without one.
func TestWithEncryptionContext(t *testing.T) {
	base := iameval.Request{Action: "kms:Decrypt", Context: map[string]string{"aws:PrincipalAccount": "111122223333"},
		Sets: map[string][]string{iameval.EncryptionContextKeys: {"stale"}}}
	got := iameval.WithEncryptionContext(base, map[string]string{"stage": "dev", "integration": "jira"})
	assert.Equal(t, map[string]string{"aws:PrincipalAccount": "111122223333", "kms:EncryptionContext:integration": "jira", "kms:EncryptionContext:stage": "dev"}, got.Context, "context keys")
	assert.Equal(t, map[string][]string{iameval.EncryptionContextKeys: {"integration", "stage"}}, got.Sets, "multivalued keys")
	assert.Equal(t, []string{"stale"}, base.Sets[iameval.EncryptionContextKeys], "the request passed in changed")
	none := iameval.WithEncryptionContext(base, nil)
	assert.Equal(t, map[string]string{"aws:PrincipalAccount": "111122223333"}, none.Context, "no context: context keys")
	assert.NotContains(t, none.Sets, iameval.EncryptionContextKeys, "no context: multivalued keys")
}
