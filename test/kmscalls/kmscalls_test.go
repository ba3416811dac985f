// Package kmscalls proves the KMS calls AgenticPM's credentials API (the
// agenticpm-credentials function) really makes are
// allowed where it is deployed: the KMS counterpart of test/iamcalls,
// which covers DynamoDB only.
//
// Per stage of the golden templates, the API is built from that stage's
// function environment (its credentials key alias, its stage) as Lambda
// builds it, and serves PUT /integrations/{name} for every integration
// it accepts. Its KMS client talks to Local KMS through a loopback proxy
// that decodes each request of KMS's JSON protocol (its target
// TrentService.<Operation>, awsloop.Target; body KeyId and
// EncryptionContext). Each
// recorded call is then evaluated (test/iameval) against the API role's
// identity policy and the key policy of the key the call names, both from
// the same template. A mutated call (the context without its stage key,
// another integration, ...) must be refused, so a change of the code's
// encryption context that the policies do not follow fails here.
package kmscalls

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/kmslocal"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm/credentialsapi"
	"github.com/dynastack/dynastack/test/iameval"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// deployEnv stands in for the account and region the templates deploy to
// (the other policy tests use the same).
var deployEnv = iameval.Env{Partition: "aws", Region: "eu-central-1", Account: "111122223333"}

// call is one KMS request as the proxy decoded it.
type call struct {
	// Operation is the request's target operation, e.g. Encrypt.
	Operation string
	KeyID     string
	// Context is the request's EncryptionContext; nil when it has none.
	Context map[string]string
}

func (c call) String() string {
	return fmt.Sprintf("kms:%s with %s under %v", c.Operation, c.KeyID, c.Context)
}

// recorder is a loopback proxy in front of Local KMS that records every
// request it forwards.
type recorder struct {
	URL   string
	mu    sync.Mutex
	calls []call
	bad   []string
}

func startRecorder(t *testing.T, upstream string) *recorder {
	t.Helper()
	u, err := url.Parse(upstream)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(u)
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		rec.add(r, body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	rec.URL = srv.URL
	return rec
}

// add decodes one request. What it cannot decode is kept as a problem,
// never dropped: a call the check cannot read is a call it cannot prove.
func (rec *recorder) add(r *http.Request, body []byte) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	prefix, op := awsloop.Target(r)
	if prefix != awsloop.KMSService.TargetPrefix || op == "" || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-amz-json-") {
		rec.bad = append(rec.bad, fmt.Sprintf("a KMS request the proxy cannot decode: target %q.%q, Content-Type %q (did the SDK change protocol?)", prefix, op, r.Header.Get("Content-Type")))
		return
	}
	var in struct {
		KeyId             string
		EncryptionContext map[string]string
	}
	if err := json.Unmarshal(body, &in); err != nil {
		rec.bad = append(rec.bad, fmt.Sprintf("kms:%s: body: %v", op, err))
		return
	}
	if len(in.EncryptionContext) == 0 {
		in.EncryptionContext = nil
	}
	rec.calls = append(rec.calls, call{Operation: op, KeyID: in.KeyId, Context: in.EncryptionContext})
}

func (rec *recorder) recorded() ([]call, []string) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.calls), slices.Clone(rec.bad)
}

// TestAPICredentialsCallsAllowed drives the API of every stage and checks
// each KMS call it made against that stage's policies.
func TestAPICredentialsCallsAllowed(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "snapshots", "*", contract.Name+".template.json"))
	require.NoError(t, err, "golden templates of %s", contract.Name)
	require.GreaterOrEqual(t, len(paths), 2, "golden templates of %s: %v", contract.Name, paths)
	for _, p := range paths {
		stage := filepath.Base(filepath.Dir(p))
		t.Run(stage, func(t *testing.T) {
			path := testenv.Template(t, stage, contract.Name)
			pol, err := loadPolicies(path, contract.Credentials.Name)
			require.NoError(t, err)
			calls := recordAPICalls(t, path)
			for _, c := range calls {
				d, err := pol.authorize(c)
				if !assert.NoError(t, err, "%s", c) {
					continue
				}
				// KMS allows it, and both layers do, as
				// GrantCredentialsEncrypt grants it: the role's policy and
				// a key policy statement naming the role. (KMS needs the
				// statement naming the role unless the key policy
				// delegates kms:Encrypt to IAM, which the credentials key
				// does not; asking for both keeps either from drifting
				// unnoticed.)
				assert.Equal(t, iameval.Allow, d.Outcome, "%s: KMS's evaluation in %s (constructs/agenticpm.CredentialsCondition, GrantCredentialsEncrypt)", c, stage)
				assert.Equal(t, iameval.Allow, d.Identity, "%s: the API's role policy in %s; both it and the key policy must allow it (constructs/agenticpm.CredentialsCondition, GrantCredentialsEncrypt)", c, stage)
				assert.Equal(t, iameval.Allow, d.Key, "%s: the key policy in %s; both it and the API's role policy must allow it (constructs/agenticpm.CredentialsCondition, GrantCredentialsEncrypt)", c, stage)
			}
			if !t.Failed() {
				t.Logf("%s: %d KMS calls of the API (the first: %s), each allowed by its role's policy and the key policy", stage, len(calls), calls[0])
			}

			// The proof can fail: each way the code's request could
			// drift from the policies is refused by both.
			base := calls[0]
			other := "prod"
			if stage == other {
				other = "dev"
			}
			for _, m := range []struct {
				name   string
				mutate func(*call)
			}{
				{"no stage key", func(c *call) { delete(c.Context, contract.ContextStage) }},
				{"no integration key", func(c *call) { delete(c.Context, contract.ContextIntegration) }},
				{"an integration the contract does not name", func(c *call) { c.Context[contract.ContextIntegration] = "trello" }},
				{"another stage's context", func(c *call) { c.Context[contract.ContextStage] = other }},
				{"an extra key", func(c *call) { c.Context["tenant"] = "acme" }},
				{"a key in another case", func(c *call) {
					c.Context["Stage"] = c.Context[contract.ContextStage]
					delete(c.Context, contract.ContextStage)
				}},
				{"no encryption context", func(c *call) { c.Context = nil }},
				{"Decrypt, which the API may not", func(c *call) { c.Operation = "Decrypt" }},
			} {
				c := base
				c.Context = maps.Clone(base.Context)
				m.mutate(&c)
				d, err := pol.authorize(c)
				if !assert.NoError(t, err, "%s (%s)", m.name, c) {
					continue
				}
				const why = "%s: %s is allowed by the %s; the check would not notice the code's encryption context changing"
				assert.NotEqual(t, iameval.Allow, d.Outcome, why, m.name, c, "AWS evaluation")
				assert.NotEqual(t, iameval.Allow, d.Identity, why, m.name, c, "role policy")
				assert.NotEqual(t, iameval.Allow, d.Key, why, m.name, c, "key policy")
			}
			// Another stage's key is no key of this template: the
			// mapping refuses it rather than guessing.
			c := base
			c.KeyID = contract.CredentialsKeyAlias(other)
			_, err = pol.authorize(c)
			assert.ErrorContains(t, err, "no AWS::KMS::Alias", "%s", c)
		})
	}
}

// recordAPICalls builds the API of the template at path from its
// function's environment, with KMS behind the recorder, and PUTs the
// credentials of every integration the code accepts; it returns the KMS
// calls made, one Encrypt per integration.
func recordAPICalls(t *testing.T, path string) []call {
	t.Helper()
	tmpl, tables := testenv.Tables(t, path)
	env := testenv.ServiceEnv(t, tmpl, tables, contract.Credentials.Name)
	alias := env[contract.EnvCredentialsKey]
	require.NotEmpty(t, alias, "%s: the credentials API has no %s", path, contract.EnvCredentialsKey)
	endpoint, _ := testenv.KMSKey(t, alias)
	rec := startRecorder(t, endpoint)
	env[kmslocal.EnvEndpoint] = rec.URL
	getenv := testenv.Getenv(t, env)
	h, err := credentialsapi.New(t.Context(), getenv, ddbrecord.ClientOptions(getenv)...)
	require.NoError(t, err)
	for _, name := range agenticpm.Integrations {
		r := apitest.Do(t, h, contract.PutIntegration.Method, contract.PutIntegration.URL(string(name)), `{"config":{"apiToken":"t"},"status":"active"}`)
		require.Equal(t, http.StatusOK, r.Status, "PUT /integrations/%s: %s", name, r.Body)
	}
	// A name the code refuses makes no call.
	apitest.WantError(t, apitest.Do(t, h, contract.PutIntegration.Method, contract.PutIntegration.URL("trello"), `{"config":{"apiToken":"t"},"status":"active"}`), 400, "validation_failed", "name", "")
	calls, bad := rec.recorded()
	assert.Empty(t, bad, "malformed KMS calls")
	require.Len(t, calls, len(agenticpm.Integrations), "KMS calls recorded, one per integration")
	return calls
}

// policies are what a template says of the API's KMS calls.
type policies struct {
	resources map[string]any
	// role is the API role's ARN.
	role string
	// identity holds the role's policy documents, resolved.
	identity []any
}

// loadPolicies reads the template at path: the function whose
// DYNASTACK_SERVICE is fn, its role, and every policy attached to it.
func loadPolicies(path, fn string) (*policies, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var tmpl struct{ Resources map[string]any }
	if err := json.Unmarshal(raw, &tmpl); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p := &policies{resources: tmpl.Resources}
	roleID := ""
	for _, id := range slices.Sorted(maps.Keys(tmpl.Resources)) {
		typ, props := resource(tmpl.Resources[id])
		if typ != "AWS::Lambda::Function" {
			continue
		}
		vars, _ := props["Environment"].(map[string]any)["Variables"].(map[string]any)
		if vars["DYNASTACK_SERVICE"] != fn {
			continue
		}
		ref, _ := props["Role"].(map[string]any)["Fn::GetAtt"].([]any)
		if len(ref) != 2 || ref[1] != "Arn" {
			return nil, fmt.Errorf("%s: function %s's Role %v is not a role of the template", path, id, props["Role"])
		}
		roleID, _ = ref[0].(string)
		arn, err := iameval.Resolve(props["Role"], tmpl.Resources, deployEnv)
		if err != nil {
			return nil, err
		}
		p.role, _ = arn.(string)
	}
	if roleID == "" {
		return nil, fmt.Errorf("%s: no function with DYNASTACK_SERVICE=%s", path, fn)
	}
	// The role's inline policies and every policy naming it; a managed
	// policy ARN could grant what no document here shows.
	_, roleProps := resource(tmpl.Resources[roleID])
	if _, ok := roleProps["ManagedPolicyArns"]; ok {
		return nil, fmt.Errorf("%s: role %s has ManagedPolicyArns, which this check cannot read", path, roleID)
	}
	var docs []any
	inline, _ := roleProps["Policies"].([]any)
	for _, x := range inline {
		docs = append(docs, x.(map[string]any)["PolicyDocument"])
	}
	for _, id := range slices.Sorted(maps.Keys(tmpl.Resources)) {
		typ, props := resource(tmpl.Resources[id])
		if typ != "AWS::IAM::Policy" && typ != "AWS::IAM::ManagedPolicy" {
			continue
		}
		roles, _ := props["Roles"].([]any)
		if slices.ContainsFunc(roles, func(r any) bool { m, _ := r.(map[string]any); return m["Ref"] == roleID }) {
			docs = append(docs, props["PolicyDocument"])
		}
	}
	for _, d := range docs {
		r, err := iameval.Resolve(d, tmpl.Resources, deployEnv)
		if err != nil {
			return nil, fmt.Errorf("%s: policy of %s: %w", path, roleID, err)
		}
		p.identity = append(p.identity, r)
	}
	return p, nil
}

func resource(v any) (string, map[string]any) {
	m, _ := v.(map[string]any)
	typ, _ := m["Type"].(string)
	props, _ := m["Properties"].(map[string]any)
	return typ, props
}

// key maps the KeyId of a call to the template's key: the code calls KMS
// with the alias its environment names (AGENTICPM_CREDENTIALS_KEY), as it
// does in AWS, where KMS authorizes the request on the key the alias
// targets. So the alias (name or ARN) is looked up among the template's
// AWS::KMS::Alias resources, and its TargetKeyId (Fn::GetAtt Key.Arn or
// Ref Key) names the AWS::KMS::Key: the resource is that key's ARN as
// iameval resolves Fn::GetAtt Key.Arn, the key policy its KeyPolicy.
// Local KMS's own key ARN plays no part. A key id or key ARN is not
// mapped: the check says so rather than guess.
func (p *policies) key(keyID string) (arn string, policy any, err error) {
	name := keyID
	if i := strings.Index(keyID, ":alias/"); strings.HasPrefix(keyID, "arn:") && i >= 0 {
		name = keyID[i+1:]
	}
	if !strings.HasPrefix(name, "alias/") {
		return "", nil, fmt.Errorf("KeyId %q is no alias: map it to the template's key here (the API is given its key's alias)", keyID)
	}
	for _, id := range slices.Sorted(maps.Keys(p.resources)) {
		typ, props := resource(p.resources[id])
		if typ != "AWS::KMS::Alias" || props["AliasName"] != name {
			continue
		}
		target, _ := props["TargetKeyId"].(map[string]any)
		keyRes := ""
		if ref, ok := target["Fn::GetAtt"].([]any); ok && len(ref) == 2 && ref[1] == "Arn" {
			keyRes, _ = ref[0].(string)
		} else if ref, ok := target["Ref"].(string); ok {
			keyRes = ref
		}
		typ, keyProps := resource(p.resources[keyRes])
		if typ != "AWS::KMS::Key" {
			return "", nil, fmt.Errorf("alias %s targets %v, no AWS::KMS::Key of the template", name, props["TargetKeyId"])
		}
		a, err := iameval.Resolve(map[string]any{"Fn::GetAtt": []any{keyRes, "Arn"}}, p.resources, deployEnv)
		if err != nil {
			return "", nil, err
		}
		policy, err := iameval.Resolve(keyProps["KeyPolicy"], p.resources, deployEnv)
		if err != nil {
			return "", nil, fmt.Errorf("key policy of %s: %w", keyRes, err)
		}
		return a.(string), policy, nil
	}
	return "", nil, fmt.Errorf("KeyId %q: no AWS::KMS::Alias of the template is named %s", keyID, name)
}

// authorize evaluates c as the API's role makes it, as KMS does
// (iameval.EvaluateKMS): KMS allows a request when neither policy denies
// it and the key policy allows it, by a statement naming the principal,
// or by delegating to IAM (allowing the account's root) when the identity
// policy allows it.
func (p *policies) authorize(c call) (iameval.KMSDecision, error) {
	arn, keyPolicy, err := p.key(c.KeyID)
	if err != nil {
		return iameval.KMSDecision{}, err
	}
	req := iameval.Request{Principal: p.role, Action: "kms:" + c.Operation, Resource: arn,
		Context: map[string]string{"kms:CallerAccount": deployEnv.Account, "aws:PrincipalArn": p.role, "aws:PrincipalAccount": deployEnv.Account}}
	if strings.Contains(c.KeyID, "alias/") {
		req.Context["kms:RequestAlias"] = c.KeyID
	}
	return iameval.EvaluateKMS(keyPolicy, p.identity, iameval.WithEncryptionContext(req, c.Context))
}
