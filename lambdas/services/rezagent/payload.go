package rezagent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/rezagent/contract"

	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Payload is a message's content: a JSON object whose shape depends on the
// message type. Numbers are json.Number, not float64, so that a payload
// survives the round trip through DynamoDB digit for digit (float64 would
// round integers above 2^53, e.g. ids).
type Payload map[string]any

// ParsePayload decodes a JSON object, keeping numbers as json.Number.
func ParsePayload(b []byte) (Payload, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil, fmt.Errorf("%w: payload must be a JSON object", ErrInvalidInput)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any // not Payload, whose UnmarshalJSON would recurse
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: payload: %v", ErrInvalidInput, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: payload must be a single JSON object", ErrInvalidInput)
	}
	return Payload(m), nil
}

// UnmarshalJSON implements json.Unmarshaler with ParsePayload's rules.
func (p *Payload) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		*p = nil
		return nil
	}
	v, err := ParsePayload(b)
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// MarshalDynamoDBAttributeValue implements attributevalue.Marshaler: JSON
// objects become M, arrays L, numbers N with their exact digits.
// attributevalue.Marshal writes a json.Number as N digit for digit, which
// is what a parsed payload holds; only float64 would round.
func (p Payload) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	if p == nil {
		return &types.AttributeValueMemberNULL{Value: true}, nil
	}
	av, err := attributevalue.Marshal(map[string]any(p))
	if err != nil {
		return nil, fmt.Errorf("rezagent: payload: %w", err)
	}
	return av, nil
}

// UnmarshalDynamoDBAttributeValue implements attributevalue.Unmarshaler.
func (p *Payload) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	switch v := av.(type) {
	case *types.AttributeValueMemberNULL:
		*p = nil
		return nil
	case *types.AttributeValueMemberM:
		m, err := ddb.FromAttributeValue(v)
		if err != nil {
			return err
		}
		*p = m.(map[string]any)
		return nil
	}
	return fmt.Errorf("rezagent: payload is a %T, not a map", av)
}

// payloadProblem is one invalid spot of a payload, named by its path
// (payload.tags[2]).
type payloadProblem struct{ path, msg string }

// checkPayload reports what DynamoDB would reject with a 500-worthy
// ValidationException (nesting too deep, empty map keys, numbers outside its
// range) and, for the documented message types, the payload schema. At most
// max problems are returned.
func checkPayload(messageType string, p Payload, max int) []payloadProblem {
	var out []payloadProblem
	add := func(path, format string, args ...any) {
		if len(out) < max {
			out = append(out, payloadProblem{path, fmt.Sprintf(format, args...)})
		}
	}
	// depth counts containers (objects and arrays), as DynamoDB's nesting
	// limit does; the payload object itself is level 1.
	var walk func(path string, v any, depth int)
	walk = func(path string, v any, depth int) {
		switch v.(type) {
		case map[string]any, []any:
			if depth > MaxPayloadDepth {
				add(path, "nests deeper than %d levels of objects and arrays", MaxPayloadDepth)
				return
			}
		}
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if k == "" {
					add(path, "has an empty key")
					continue
				}
				walk(path+"."+k, e, depth+1)
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), e, depth+1)
			}
		case json.Number:
			if !ddb.ValidNumber(string(v)) {
				add(path, "number %s is outside DynamoDB's range (38 significant digits, magnitude 1e-130 to 1e126)", api.Truncate(string(v), 40))
			}
		}
	}
	walk("payload", map[string]any(p), 1)
	if schema, ok := notificationTypes[messageType]; ok {
		schema(p, add)
	}
	return out
}

// notificationTypes are the payload schemas of the design document. Other
// message types are accepted with any object: the document makes types
// extensible, and a new producer should not need a deploy of this API.
// Fields beyond the schema are kept, for the same reason.
var notificationTypes = map[string]func(Payload, func(path, format string, args ...any)){
	contract.TypeScheduledHello:     notificationSchema,
	contract.TypeManualNotification: notificationSchema,
}

// ntfyPriorities are ntfy.sh's priority names.
var ntfyPriorities = []string{"min", "low", "default", "high", "urgent"}

func notificationSchema(p Payload, add func(path, format string, args ...any)) {
	if s, ok := p["text"].(string); !ok || strings.TrimSpace(s) == "" {
		add("payload.text", "is required: a non-empty string")
	}
	if v, ok := p["title"]; ok {
		if _, ok := v.(string); !ok {
			add("payload.title", "must be a string")
		}
	}
	if v, ok := p["priority"]; ok {
		if s, _ := v.(string); !slices.Contains(ntfyPriorities, s) {
			add("payload.priority", "must be one of %s", strings.Join(ntfyPriorities, ", "))
		}
	}
	if v, ok := p["tags"]; ok {
		l, ok := v.([]any)
		for _, e := range l {
			if _, isStr := e.(string); !isStr {
				ok = false
			}
		}
		if !ok {
			add("payload.tags", "must be an array of strings")
		}
	}
	if v, ok := p["click_url"]; ok {
		s, _ := v.(string)
		if u, err := url.Parse(s); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			add("payload.click_url", "must be an http or https URL")
		}
	}
}
