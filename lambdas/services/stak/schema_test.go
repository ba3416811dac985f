package stak_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/platform/bodyschema"
	"github.com/dynastack/dynastack/lambdas/services/stak"
)

// orderSchema requires an order id and positive quantities.
const orderSchema = `{"type":"object","required":["order"],"properties":{"order":{"type":"string"},"lines":{"type":"array","items":{"type":"object","required":["qty"],"properties":{"qty":{"type":"integer","minimum":1}}}}}}`

func TestInboxSchemaRefusals(t *testing.T) {
	s := newService(t)
	s.setup(t)
	before := s.Count(t)
	for _, tc := range []struct{ name, schema, field string }{
		{"unknown type", `{"default":{"type":"strin"}}`, "schema.default.type"},
		{"bad keyword value", `{"billing":{"properties":{"a":{"minimum":"x"}}}}`, "schema.billing.properties.a.minimum"},
		{"remote ref", `{"default":{"$ref":"https://example.com/s.json"}}`, "schema.default"},
		{"file ref", `{"default":{"$ref":"file:///etc/passwd"}}`, "schema.default"},
		{"bad pattern", `{"default":{"pattern":"(?<=a)"}}`, "schema.default.pattern"},
		{"not an object", `{"default":[1]}`, "schema.default"},
		{"null", `{"default":null}`, "schema.default"},
		{"count the validator would wrap", `{"default":{"maxLength":12345678901234567890}}`, "schema.default.maxLength"},
		{"category with #", `{"a#b":{}}`, "schema.a#b"},
		{"category *", `{"*":{}}`, "schema.*"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.Do(t, contract.PutInbox.Method, contract.PutInbox.URL("acme", "main"), `{"title":"Main","description":"","schema":`+tc.schema+`}`)
			require.Equal(t, 400, r.Status, "status: %s", r.Body)
			require.Contains(t, string(r.Body), `"field":"`+tc.field+`"`, "the error names the field")
		})
	}
	require.Equal(t, before, s.Count(t), "items: refused configs wrote")
	var ic stak.InboxConfig
	s.MustRoute(t, 200, contract.GetInbox, "", &ic, "acme", "main")
	require.Nil(t, ic.Schema, "schema after refusals")
}

func TestInboxSchemaOnPublish(t *testing.T) {
	s := newService(t)
	s.setup(t)
	// default for every category, billing its own; numbers kept as sent.
	put := `{"title":"Main","description":"","schema":{"default":{"type":"string","maxLength":100,"x-note":12345678901234567890},"billing":` + orderSchema + `}}`
	var ic stak.InboxConfig
	s.MustRoute(t, 200, contract.PutInbox, put, &ic, "acme", "main")
	s.MustRoute(t, 200, contract.GetInbox, "", &ic, "acme", "main")
	assert.Equal(t, `{"type":"string","maxLength":100,"x-note":12345678901234567890}`, string(ic.Schema["default"]), "stored default schema")
	assert.Equal(t, orderSchema, string(ic.Schema["billing"]), "stored billing schema")

	msg := func(category, body string) string {
		b := `{"sender":"a","audiences":{"kind":"users","uids":["u1"]},"taxonomy":{"category":"` + category + `"},"message":{"title":"x"`
		if body != "" {
			b += `,"body":` + body
		}
		return b + `}}`
	}
	before := s.Count(t)
	for _, tc := range []struct{ name, category, body, field string }{
		{"wrong item type", "billing", `{"order":"o1","lines":[{"qty":1},{"qty":"2"}]}`, "message.body.lines[1].qty"},
		{"below minimum", "billing", `{"order":"o1","lines":[{"qty":0}]}`, "message.body.lines[0].qty"},
		{"missing property", "billing", `{"lines":[]}`, "message.body"},
		{"no body", "billing", ``, "message.body"},
		{"default schema", "promo", `{"text":"sale"}`, "message.body"},
		{"default without category", "", `42`, "message.body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.Do(t, contract.Publish.Method, contract.Publish.URL("acme", "main"), msg(tc.category, tc.body))
			require.Equal(t, 400, r.Status, "status: %s", r.Body)
			require.Contains(t, string(r.Body), `"field":"`+tc.field+`"`, "the error names the field")
		})
	}
	require.Equal(t, before, s.Count(t), "items: refused publishes wrote")
	old := s.publish(t, msg("billing", `{"order":"o1","lines":[{"qty":2}]}`))
	s.publish(t, msg("promo", `"sale"`))

	// A schema change applies to new messages only: the stored message
	// that the new schema refuses is still served as it was.
	s.MustRoute(t, 200, contract.PutInbox, `{"title":"Main","description":"","schema":{"billing":{"type":"object","required":["invoice"]}}}`, nil, "acme", "main")
	r := s.Do(t, contract.Publish.Method, contract.Publish.URL("acme", "main"), msg("billing", `{"order":"o2"}`))
	require.Equal(t, 400, r.Status, "publish under the new schema: %s", r.Body)
	require.Contains(t, string(r.Body), "invoice", "publish under the new schema")
	s.publish(t, msg("billing", `{"invoice":"i1"}`))
	s.publish(t, msg("promo", `{"any":"thing"}`)) // no default any more
	pg := s.feed(t, "u1", "")
	require.Len(t, pg.Messages, 4, "feed %s", titles(pg.Messages))
	require.Equal(t, old.Header.ID, pg.Messages[3].Header.ID, "feed %s: the first published last", titles(pg.Messages))
	b, _ := json.Marshal(pg.Messages[3].Message.Body)
	assert.Equal(t, `{"lines":[{"qty":2}],"order":"o1"}`, string(b), "old body")

	// Removing the schemas turns validation off.
	s.MustRoute(t, 200, contract.PutInbox, `{"title":"Main","description":""}`, nil, "acme", "main")
	s.publish(t, msg("billing", `[]`))
}

// A schema edited by hand into one that no longer compiles (or stored
// before a limit was tightened) refuses publishes instead of letting
// bodies through unchecked: 409, naming the inbox and the fix, since
// retrying cannot help; nothing is written.
func TestInboxSchemaBrokenInTable(t *testing.T) {
	s := newService(t)
	s.setup(t)
	_, err := s.Client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName:        aws.String(s.Table),
		Key:              map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "t#acme"}, "sk": &types.AttributeValueMemberS{Value: "si#main"}},
		UpdateExpression: aws.String("SET #s = :s"), ExpressionAttributeNames: map[string]string{"#s": "schema"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"default": &types.AttributeValueMemberS{Value: `{"type":"strin"}`}}}},
	})
	require.NoError(t, err, "break the schema")
	before := s.Digest(t)
	r := s.Do(t, contract.Publish.Method, contract.Publish.URL("acme", "main"), `{"sender":"a","audiences":{"kind":"everyone"},"message":{"title":"x","body":"b"}}`)
	require.Equal(t, 409, r.Status, "publish: %s", r.Body)
	assert.Contains(t, string(r.Body), `inbox \"main\": its stored schema \"default\" is no longer accepted (type: is not a valid JSON Schema`, "names the inbox, the schema and the reason")
	assert.Contains(t, string(r.Body), "PUT the inbox config again", "says the fix")
	assert.Equal(t, before, s.Digest(t), "nothing written")
}

// A tenant's schema cannot make a publish costly: an inbox schema that
// applies 2^6 $ref evaluations to each item of an array is accepted (it
// is within bodyschema.MaxExpandedSchemas), and a publish whose body has
// too many items for it is a 400 that names the step limit, before any
// validation runs and without writing; a small body publishes as before.
func TestCostlyPublishIsRefused(t *testing.T) {
	s := newService(t)
	s.setup(t)
	defs := map[string]any{"d6": map[string]any{"type": "string"}}
	for i := range 6 {
		next := fmt.Sprintf("#/$defs/d%d", i+1)
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"allOf": []any{map[string]any{"$ref": next}, map[string]any{"$ref": next}}}
	}
	schema, err := json.Marshal(map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/d0"}, "$defs": defs})
	require.NoError(t, err)
	s.MustRoute(t, 200, contract.PutInbox, `{"title":"Main","description":"","schema":{"default":`+string(schema)+`}}`, nil, "acme", "main")
	msg := func(items int) string {
		body, err := json.Marshal(slices.Repeat([]string{"a"}, items))
		require.NoError(t, err)
		return `{"sender":"a","audiences":{"kind":"users","uids":["u1"]},"message":{"title":"x","body":` + string(body) + `}}`
	}
	before := s.Count(t)
	r := s.Do(t, contract.Publish.Method, contract.Publish.URL("acme", "main"), msg(2000))
	require.Equal(t, 400, r.Status, "costly publish: %s", r.Body)
	assert.Contains(t, string(r.Body), `"field":"message.body"`, "the error names the body")
	assert.Contains(t, string(r.Body), fmt.Sprintf("%d-step limit", bodyschema.MaxSteps), "the error names the limit")
	assert.Equal(t, before, s.Count(t), "items: the refused publish wrote")
	s.publish(t, msg(10))
}
