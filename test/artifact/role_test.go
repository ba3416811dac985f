package artifact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddblocal"
)

// An AWS call a bundled function made, as IAM authorizes it: the action
// and the ARN of the resource.
type awsCall struct {
	Action, Resource string
}

func (c awsCall) String() string { return c.Action + " on " + c.Resource }

// Local account and region of the ARNs on both sides (cfntables.LocalARN).
const (
	localRegion = "us-east-1"
)

func tableARN(name, index string) string {
	arn := fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s", localRegion, cfntables.LocalAccount, name)
	if index != "" {
		arn += "/index/" + index
	}
	return arn
}

// ddbRecorder stands between one function and DynamoDB Local and records
// every request it sends, in IAM's terms: a transaction's items are
// authorized one by one (PutItem, UpdateItem, DeleteItem,
// ConditionCheckItem, GetItem), a Query or Scan on its index.
type ddbRecorder struct {
	srv   *httptest.Server
	mu    sync.Mutex
	calls []awsCall
}

func recordDynamoDB(t *testing.T, endpoint string) *ddbRecorder {
	t.Helper()
	target, err := url.Parse(endpoint)
	require.NoError(t, err)
	r := &ddbRecorder{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		_, op := awsloop.Target(req)
		r.record(op, body)
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// Env points a function at the recorder.
func (r *ddbRecorder) Env(env map[string]string) map[string]string {
	return clone(env, ddblocal.EnvEndpoint, r.srv.URL)
}

func (r *ddbRecorder) Calls() []awsCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// record takes one request of operation op (its target's, DynamoDB_20120810.<op>).
func (r *ddbRecorder) record(op string, body []byte) {
	var in struct {
		TableName, IndexName string
		TransactItems        []map[string]struct{ TableName string }
		RequestItems         map[string]json.RawMessage
	}
	_ = json.Unmarshal(body, &in)
	var calls []awsCall
	switch op {
	case "TransactWriteItems", "TransactGetItems":
		perItem := map[string]string{"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem", "ConditionCheck": "ConditionCheckItem", "Get": "GetItem"}
		for _, item := range in.TransactItems {
			for kind, v := range item {
				calls = append(calls, awsCall{"dynamodb:" + perItem[kind], tableARN(v.TableName, "")})
			}
		}
	case "BatchWriteItem", "BatchGetItem":
		for table := range in.RequestItems {
			calls = append(calls, awsCall{"dynamodb:" + op, tableARN(table, "")})
		}
	default:
		calls = append(calls, awsCall{"dynamodb:" + op, tableARN(in.TableName, in.IndexName)})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, calls...)
}

// loopCalls turns the calls a loopback server recorded, signed with the
// function's own key, into IAM terms. Calls signed with other keys (the
// credentials of an assumed role) are the target role's business.
func loopCalls(t *testing.T, key string, srv *awsloop.Server) []awsCall {
	t.Helper()
	var out []awsCall
	for _, c := range srv.Calls() {
		if c.AccessKeyID != key {
			continue
		}
		switch c.Service + ":" + c.Action {
		case "sns:Publish":
			out = append(out, awsCall{"sns:Publish", c.Params.Get("TopicArn")})
		case "sts:AssumeRole":
			out = append(out, awsCall{"sts:AssumeRole", c.Params.Get("RoleArn")})
		case "events:PutEvents":
			var in struct {
				Entries []struct{ EventBusName string }
			}
			require.NoError(t, json.Unmarshal(c.Body, &in), "PutEvents body")
			for _, e := range in.Entries {
				bus := e.EventBusName
				if !strings.HasPrefix(bus, "arn:") {
					bus = fmt.Sprintf("arn:aws:events:%s:%s:event-bus/%s", localRegion, cfntables.LocalAccount, bus)
				}
				out = append(out, awsCall{"events:PutEvents", bus})
			}
		default:
			out = append(out, awsCall{c.Service + ":" + c.Action, "?"})
		}
	}
	return out
}

// role is the Allow statements of a function's execution role, with
// every resource resolved to an ARN pattern as the function's template
// deploys it (locally: cfntables' account and region, tables by the
// names they were created with).
type role struct {
	statements []roleStatement
}

type roleStatement struct {
	deny               bool
	actions, resources []string
}

// roleOf reads fn's role from its template.
func roleOf(t *testing.T, s *Stage, fn *Function) role {
	t.Helper()
	raw, err := os.ReadFile(fn.Template)
	require.NoError(t, err)
	var tmpl struct {
		Resources map[string]struct {
			Type       string
			Properties json.RawMessage
		}
	}
	require.NoError(t, json.Unmarshal(raw, &tmpl))
	resolve := func(v any) (string, error) { return resolveARN(v, s, tmpl.Resources) }
	var fp struct {
		Role map[string][]string `json:"Role"`
	}
	require.NoError(t, json.Unmarshal(tmpl.Resources[fn.LogicalID].Properties, &fp), "function %s: role", fn.LogicalID)
	require.Len(t, fp.Role["Fn::GetAtt"], 2, "function %s: role %v", fn.LogicalID, fp.Role)
	roleID := fp.Role["Fn::GetAtt"][0]
	var out role
	for id, r := range tmpl.Resources {
		if r.Type != "AWS::IAM::Policy" {
			continue
		}
		var p struct {
			Roles          []map[string]string
			PolicyDocument struct {
				Statement []struct {
					Effect    string
					Action    any
					Resource  any
					Condition any
				}
			}
		}
		require.NoError(t, json.Unmarshal(r.Properties, &p), "policy %s", id)
		if !slices.ContainsFunc(p.Roles, func(m map[string]string) bool { return m["Ref"] == roleID }) {
			continue
		}
		for _, st := range p.PolicyDocument.Statement {
			// A statement this check can read: Allow or Deny, no condition.
			require.Contains(t, []string{"Allow", "Deny"}, st.Effect, "policy %s: statement effect", id)
			require.Nil(t, st.Condition, "policy %s: a statement this check cannot read (condition)", id)
			rs := roleStatement{deny: st.Effect == "Deny"}
			for _, a := range many(st.Action) {
				rs.actions = append(rs.actions, a.(string))
			}
			for _, res := range many(st.Resource) {
				arn, err := resolve(res)
				require.NoError(t, err, "policy %s", id)
				rs.resources = append(rs.resources, arn)
			}
			out.statements = append(out.statements, rs)
		}
	}
	return out
}

func many(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

// resolveARN resolves a policy resource: literal strings, Refs to pseudo
// parameters, topics and tables, GetAtt Arn of tables, queues, log groups
// and event buses, and Fn::Join of those.
func resolveARN(v any, s *Stage, resources map[string]struct {
	Type       string
	Properties json.RawMessage
}) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case map[string]any:
		if ref, ok := x["Ref"].(string); ok {
			switch ref {
			case "AWS::Partition":
				return "aws", nil
			case "AWS::Region":
				return localRegion, nil
			case "AWS::AccountId":
				return cfntables.LocalAccount, nil
			}
			switch resources[ref].Type {
			case cfntables.TypeTopic:
				return cfntables.LocalARN("sns", ref), nil
			}
			return "", fmt.Errorf("Ref %s (%s): not resolved here", ref, resources[ref].Type)
		}
		if att, ok := x["Fn::GetAtt"].([]any); ok && len(att) == 2 && att[1] == "Arn" {
			id := att[0].(string)
			r := resources[id]
			switch r.Type {
			case "AWS::DynamoDB::Table", "AWS::DynamoDB::GlobalTable":
				return tableARN(s.Tables[id], ""), nil
			case "AWS::Events::EventBus":
				var p struct{ Name string }
				_ = json.Unmarshal(r.Properties, &p)
				return fmt.Sprintf("arn:aws:events:%s:%s:event-bus/%s", localRegion, cfntables.LocalAccount, p.Name), nil
			default:
				// Queues, log groups, functions: resources a bundled
				// function does not call here; named by logical id.
				return "local:" + id, nil
			}
		}
		if j, ok := x["Fn::Join"].([]any); ok && len(j) == 2 {
			var b strings.Builder
			for _, part := range j[1].([]any) {
				p, err := resolveARN(part, s, resources)
				if err != nil {
					return "", err
				}
				b.WriteString(p)
			}
			return b.String(), nil
		}
	}
	return "", fmt.Errorf("resource %v: not resolved here", v)
}

// allows reports whether the role allows c: an action and a resource
// pattern of an Allow statement match (IAM's * and ?), and those of no
// Deny statement do (an explicit deny wins).
func (r role) allows(c awsCall) bool {
	allowed := false
	for _, st := range r.statements {
		if slices.ContainsFunc(st.actions, func(a string) bool { return glob(a, c.Action) }) &&
			slices.ContainsFunc(st.resources, func(p string) bool { return glob(p, c.Resource) }) {
			if st.deny {
				return false
			}
			allowed = true
		}
	}
	return allowed
}

// glob is IAM's wildcard match (case-sensitive, as for ARNs; actions are
// written in the case AWS documents them).
func glob(pattern, s string) bool {
	ok, err := path.Match(strings.ReplaceAll(pattern, "/", "\x00"), strings.ReplaceAll(s, "/", "\x00"))
	return err == nil && ok
}

// checkRole fails the test for every call fn's role does not allow, and
// for a function that made no call at all (the check would prove
// nothing).
func checkRole(t *testing.T, s *Stage, fn *Function, calls []awsCall) {
	t.Helper()
	if !assert.NotEmpty(t, calls, "%s: no AWS call recorded", fn.Service) {
		return
	}
	r := roleOf(t, s, fn)
	seen := map[awsCall]bool{}
	for _, c := range calls {
		if seen[c] {
			continue
		}
		seen[c] = true
		assert.True(t, r.allows(c), "%s: %s is not allowed by its role", fn.Service, c)
	}
	t.Logf("%s: %d distinct calls, each allowed by its role: %v", fn.Service, len(seen), slices.Sorted(func(yield func(string) bool) {
		for c := range seen {
			if !yield(c.String()) {
				return
			}
		}
	}))
}

// The role check can fail: the roles of the stage refuse what their
// functions must not do, and allow what they do.
func TestRoleCheck(t *testing.T) {
	s := requireStage(t)
	proc, sched := s.Functions["rezagent-processor"], s.Functions["rezagent-scheduler"]
	table := tableARN(proc.Env["REZ_AGENT_MESSAGES_TABLE"], "")
	topic := sched.Env["REZ_AGENT_TOPIC_ARN"]
	for _, tc := range []struct {
		fn   *Function
		call awsCall
		want bool
	}{
		{proc, awsCall{"dynamodb:UpdateItem", table}, true},
		{proc, awsCall{"dynamodb:DeleteItem", table}, false},
		{proc, awsCall{"dynamodb:GetItem", table}, false},
		{proc, awsCall{"dynamodb:UpdateItem", tableARN("other-table", "")}, false},
		{proc, awsCall{"sns:Publish", topic}, false},
		{sched, awsCall{"sns:Publish", topic}, true},
		{sched, awsCall{"sns:Publish", topic + "-other"}, false},
		{sched, awsCall{"dynamodb:Query", tableARN(proc.Env["REZ_AGENT_MESSAGES_TABLE"], "status-created_date-index")}, true},
		{sched, awsCall{"dynamodb:Query", tableARN(proc.Env["REZ_AGENT_MESSAGES_TABLE"], "stage-created_date-index")}, false},
		{s.Functions["nucleus-executor"], awsCall{"sts:AssumeRole", "arn:aws:iam::210987654321:role/nucleus-executor-dev"}, true},
		{s.Functions["nucleus-executor"], awsCall{"sts:AssumeRole", "arn:aws:iam::210987654321:role/admin"}, false},
		// Allowed by the name pattern, refused by the explicit deny of a
		// role under a path.
		{s.Functions["nucleus-executor"], awsCall{"sts:AssumeRole", "arn:aws:iam::210987654321:role/nucleus-executor-dev/x"}, false},
	} {
		assert.Equal(t, tc.want, roleOf(t, s, tc.fn).allows(tc.call), "%s: allows %s", tc.fn.Service, tc.call)

	}
}
