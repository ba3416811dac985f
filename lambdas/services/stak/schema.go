package stak

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/platform/api"
)

// BodySchemas is what the API needs of a JSON Schema implementation for
// inbox schemas. Its binding to platform/bodyschema is in package stakapi
// (services/stak/stakapi), not here: that library's package initialiser
// compiles the metaschemas of five drafts, about 4 ms of every start of a
// bootstrap that links it, and the stream consumer, which links this
// package, validates no schema (docs/functions.md, "Cold start").
type BodySchemas interface {
	// CheckSchema adds a field error to v when raw does not compile as a
	// JSON Schema: named field plus the path inside the schema where the
	// refusal knows it (schema.billing.properties.a.minimum), else field.
	CheckSchema(v *api.Validator, field string, raw []byte)
	// CheckBody validates body (as encoding/json decodes into an any)
	// against the schema whose text is schema, adding one field error per
	// violation named field plus the JSON path of the offending value.
	// Each schema text compiles once per execution environment; one that
	// does not compile is the error, and v is left alone.
	CheckBody(v *api.Validator, field, schema string, body any) error
}

// SchemaDefault is the key of the schema that applies to a message whose
// category has none of its own (or that has no category), as for TTLs.
const SchemaDefault = "default"

// Schemas maps "default" and taxonomy categories to JSON Schemas of a
// message's body. The API carries each as a JSON object; the item stores
// each as its compact JSON text (an S in a map), so a schema keeps its
// numbers digit for digit and its nesting does not count against
// DynamoDB's 32 levels.
type Schemas map[string]json.RawMessage

var (
	_ attributevalue.Marshaler   = Schemas(nil)
	_ attributevalue.Unmarshaler = (*Schemas)(nil)
)

// MarshalDynamoDBAttributeValue stores each schema as JSON text.
func (s Schemas) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	if len(s) == 0 {
		return &types.AttributeValueMemberNULL{Value: true}, nil
	}
	m := make(map[string]types.AttributeValue, len(s))
	for k, raw := range s {
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return nil, fmt.Errorf("stak: schema %q: %w", k, err)
		}
		m[k] = &types.AttributeValueMemberS{Value: b.String()}
	}
	return &types.AttributeValueMemberM{Value: m}, nil
}

// UnmarshalDynamoDBAttributeValue reads what MarshalDynamoDBAttributeValue
// stored.
func (s *Schemas) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	m, ok := av.(*types.AttributeValueMemberM)
	if !ok {
		*s = nil
		return nil
	}
	out := make(Schemas, len(m.Value))
	for k, v := range m.Value {
		text, ok := v.(*types.AttributeValueMemberS)
		if !ok || !json.Valid([]byte(text.Value)) {
			return fmt.Errorf("stak: schema %q is not stored as JSON text", k)
		}
		out[k] = json.RawMessage(text.Value)
	}
	*s = out
	return nil
}

// For returns the schema text that applies to a message of category: its
// own, else the default; "" when none does.
func (s Schemas) For(category string) string {
	if raw, ok := s[category]; ok && category != "" {
		return string(raw)
	}
	return string(s[SchemaDefault])
}

// checkSchemas refuses what could not be compiled, naming the category
// and the path inside its schema.
func checkSchemas(v *api.Validator, bs BodySchemas, s Schemas) {
	if len(s) > maxSchemas {
		v.Add("schema", "must have at most %d entries (default and one per category)", maxSchemas)
		return
	}
	for _, cat := range slices.Sorted(maps.Keys(s)) {
		field := "schema." + cat
		if msg := checkKey(cat); msg != "" || cat == "*" {
			v.Add(field, "is not a valid category key: %s", msg)
			continue
		}
		bs.CheckSchema(v, field, s[cat])
	}
}

// checkBody validates a message's body against the inbox schema for its
// category. A message without a body is validated as null. The schema is
// the one stored now: a change applies to messages published after it,
// and stored messages are never validated again.
func (s *Store) checkBody(ic *InboxConfig, category string, body any) error {
	raw := ic.Schema.For(category)
	if raw == "" {
		return nil
	}
	var v api.Validator
	if err := s.schemas.CheckBody(&v, "message.body", raw, body); err != nil {
		// Every stored schema compiled when it was put; one that no longer
		// does (edited by hand, or limits tightened since) must not let
		// bodies through unchecked. It is the inbox's state to fix, not a
		// fault to retry: a 500 would have the publisher retry in vain.
		key := SchemaDefault
		if _, ok := ic.Schema[category]; ok && category != "" {
			key = category
		}
		return api.Conflict("inbox %q: its stored schema %q is no longer accepted (%v); PUT the inbox config again with a schema within the current limits", ic.Inbox, key, err)
	}
	return v.Err()
}
