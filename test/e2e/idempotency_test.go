package e2e

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"

	"github.com/dynastack/dynastack/constructs/catalog"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/services"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every route a contract marks Idempotent honours Idempotency-Key in its
// service: a request with a key stores the route's record, with its
// table's TTL. Only a success is kept (platform/api): the same request
// with the same key is then answered again, byte for byte, without
// running twice, and the key with another body is refused (422); a
// refused first request releases its key, so the same request runs again
// (no replay) and another body is a new request. The body here ({}) is
// refused by every such route today; the replays of successes are
// platform/api's tests (one middleware for every route) and each
// service's (TestLostAnswers, the idempotency tests).
func TestIdempotentRoutesHonourTheKey(t *testing.T) {
	routes := 0
	for _, fn := range catalog.Functions() {
		for _, route := range fn.Routes {
			if !route.Idempotent {
				continue
			}
			routes++
			t.Run(route.Key(), func(t *testing.T) {
				svc, _ := catalog.ServiceOf(fn.Name)
				path := testenv.Template(t, "dev", svc.Name)
				tmpl, tables := testenv.Tables(t, path)
				getenv := testenv.Getenv(t, testenv.ServiceEnv(t, tmpl, tables, fn.Name))
				build, _ := services.Lookup(fn.Name)
				h, err := build(t.Context(), getenv, ddbrecord.ClientOptions(getenv)...)
				require.NoError(t, err)
				do := func(body string) *httptest.ResponseRecorder {
					req := httptest.NewRequest(route.Method, target(route), bytes.NewReader([]byte(body)))
					req.Header.Set(api.IdempotencyHeader, "key-1")
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					return rec
				}
				first, again := do(`{}`), do(`{}`)
				assert.Less(t, first.Code, 500, "first: %s", first.Body)
				assert.Equal(t, first.Code, again.Code, "again: %s", again.Body)
				other := do(`{"other":true}`)
				if first.Code < 400 {
					assert.Equal(t, first.Body.String(), again.Body.String(), "again")
					assert.Equal(t, "true", again.Header().Get("Idempotent-Replayed"), "again: replayed")
					assert.Equal(t, 422, other.Code, "the key with another body: %s", other.Body)
				} else {
					assert.Equal(t, withoutRequestID(t, first.Body.Bytes()), withoutRequestID(t, again.Body.Bytes()), "again: the same refusal, run again")
					assert.Empty(t, again.Header().Get("Idempotent-Replayed"), "again: a refusal is not replayed")
					assert.NotEqual(t, 422, other.Code, "the key with another body after a refusal is a new request: %s", other.Body)
					assert.Less(t, other.Code, 500, "the key with another body: %s", other.Body)
				}
				recordsExpire(t, tmpl, tables)
			})
		}
	}
	require.NotZero(t, routes, "no contract route is Idempotent")
}

// recordsExpire: every idempotency record the route stored carries its
// table's TTL attribute, set to the end of the key's window, so DynamoDB
// deletes it (a table without TTL kept them forever).
func recordsExpire(t *testing.T, tmpl *cfntables.Template, names map[string]string) {
	t.Helper()
	specs, err := tmpl.Tables()
	require.NoError(t, err)
	found := 0
	for _, spec := range specs {
		out, err := testenv.Client(t).Scan(t.Context(), &dynamodb.ScanInput{TableName: aws.String(names[spec.LogicalID])})
		require.NoError(t, err)
		for _, item := range out.Items {
			if !isRecord(item, spec.Input.KeySchema) {
				continue
			}
			found++
			if !assert.NotNil(t, spec.TTL, "table %s holds idempotency records but has no TTL", spec.LogicalID) {
				continue
			}
			n, _ := item[aws.ToString(spec.TTL.AttributeName)].(*types.AttributeValueMemberN)
			at := int64(-1)
			if n != nil {
				at, _ = strconv.ParseInt(n.Value, 10, 64)
			}
			left := time.Until(time.Unix(at, 0))
			assert.GreaterOrEqual(t, left, api.IdempotencyWindow-time.Hour, "record in %s: %s = %v, want the end of the %s window", spec.LogicalID, aws.ToString(spec.TTL.AttributeName), item[aws.ToString(spec.TTL.AttributeName)], api.IdempotencyWindow)
			assert.LessOrEqual(t, left, api.IdempotencyWindow+time.Minute, "record in %s: %s = %v, want the end of the %s window", spec.LogicalID, aws.ToString(spec.TTL.AttributeName), item[aws.ToString(spec.TTL.AttributeName)], api.IdempotencyWindow)
		}
	}
	assert.NotZero(t, found, "no idempotency record stored")
}

func isRecord(item map[string]types.AttributeValue, keys []types.KeySchemaElement) bool {
	for _, k := range keys {
		if k.KeyType != types.KeyTypeHash {
			continue
		}
		s, _ := item[aws.ToString(k.AttributeName)].(*types.AttributeValueMemberS)
		return s != nil && strings.HasPrefix(s.Value, "idempotency#")
	}
	return false
}

// withoutRequestID is an error answer without its request_id, which
// differs from one request to the next.
func withoutRequestID(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal(body, &v), "%s", body)
	delete(v, "request_id")
	return v
}
