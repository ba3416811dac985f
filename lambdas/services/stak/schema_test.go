package stak_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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
			r := s.Do(t, "PUT", "/tenants/acme/inboxes/main", `{"title":"Main","description":"","schema":`+tc.schema+`}`)
			if r.Status != 400 || !strings.Contains(string(r.Body), `"field":"`+tc.field+`"`) {
				t.Fatalf("%d %s, want 400 naming %s", r.Status, r.Body, tc.field)
			}
		})
	}
	if n := s.Count(t); n != before {
		t.Fatalf("refused configs wrote %d items", n-before)
	}
	var ic stak.InboxConfig
	s.Must(t, 200, "GET", "/tenants/acme/inboxes/main", "", &ic)
	if ic.Schema != nil {
		t.Fatalf("schema = %s after refusals", ic.Schema)
	}
}

func TestInboxSchemaOnPublish(t *testing.T) {
	s := newService(t)
	s.setup(t)
	// default for every category, billing its own; numbers kept as sent.
	put := `{"title":"Main","description":"","schema":{"default":{"type":"string","maxLength":100,"x-note":12345678901234567890},"billing":` + orderSchema + `}}`
	var ic stak.InboxConfig
	s.Must(t, 200, "PUT", "/tenants/acme/inboxes/main", put, &ic)
	s.Must(t, 200, "GET", "/tenants/acme/inboxes/main", "", &ic)
	if got := string(ic.Schema["default"]); got != `{"type":"string","maxLength":100,"x-note":12345678901234567890}` {
		t.Errorf("stored default schema = %s", got)
	}
	if got := string(ic.Schema["billing"]); got != orderSchema {
		t.Errorf("stored billing schema = %s", got)
	}

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
			r := s.Do(t, "POST", "/tenants/acme/inboxes/main/messages", msg(tc.category, tc.body))
			if r.Status != 400 || !strings.Contains(string(r.Body), `"field":"`+tc.field+`"`) {
				t.Fatalf("%d %s, want 400 naming %s", r.Status, r.Body, tc.field)
			}
		})
	}
	if n := s.Count(t); n != before {
		t.Fatalf("refused publishes wrote %d items", n-before)
	}
	old := s.publish(t, msg("billing", `{"order":"o1","lines":[{"qty":2}]}`))
	s.publish(t, msg("promo", `"sale"`))

	// A schema change applies to new messages only: the stored message
	// that the new schema refuses is still served as it was.
	s.Must(t, 200, "PUT", "/tenants/acme/inboxes/main", `{"title":"Main","description":"","schema":{"billing":{"type":"object","required":["invoice"]}}}`, nil)
	if r := s.Do(t, "POST", "/tenants/acme/inboxes/main/messages", msg("billing", `{"order":"o2"}`)); r.Status != 400 || !strings.Contains(string(r.Body), "invoice") {
		t.Fatalf("publish under the new schema: %d %s", r.Status, r.Body)
	}
	s.publish(t, msg("billing", `{"invoice":"i1"}`))
	s.publish(t, msg("promo", `{"any":"thing"}`)) // no default any more
	pg := s.feed(t, "u1", "")
	if len(pg.Messages) != 4 || pg.Messages[3].Header.ID != old.Header.ID {
		t.Fatalf("feed = %s, want 4 messages, the first published last", titles(pg.Messages))
	}
	if b, _ := json.Marshal(pg.Messages[3].Message.Body); string(b) != `{"lines":[{"qty":2}],"order":"o1"}` {
		t.Errorf("old body = %s", b)
	}

	// Removing the schemas turns validation off.
	s.Must(t, 200, "PUT", "/tenants/acme/inboxes/main", `{"title":"Main","description":""}`, nil)
	s.publish(t, msg("billing", `[]`))
}

// A schema edited by hand into one that no longer compiles refuses
// publishes (500) instead of letting bodies through unchecked.
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
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Do(t, "POST", "/tenants/acme/inboxes/main/messages", `{"sender":"a","audiences":{"kind":"everyone"},"message":{"title":"x","body":"b"}}`); r.Status != 500 {
		t.Fatalf("%d %s, want 500", r.Status, r.Body)
	}
}
