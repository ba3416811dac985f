package ddb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Doc is a free-form JSON value stored as a DynamoDB document (M, L, S, N,
// BOOL, NULL), such as AgenticPM's artefact content, project config and
// event detail.
//
// It converts between JSON and attribute values itself instead of going
// through map[string]any, because that route turns every number into a
// float64: 12345678901234567890 would come back rounded. Numbers are kept
// as their decimal text both ways.
type Doc json.RawMessage

// MarshalJSON implements json.Marshaler; an empty Doc is null.
func (d Doc) MarshalJSON() ([]byte, error) {
	if len(d) == 0 {
		return []byte("null"), nil
	}
	return d, nil
}

// UnmarshalJSON implements json.Unmarshaler. JSON null is kept as "null"
// so that validation can tell it from an absent field.
func (d *Doc) UnmarshalJSON(b []byte) error {
	*d = append((*d)[:0], b...)
	return nil
}

// IsNull reports whether d is absent or JSON null.
func (d Doc) IsNull() bool {
	t := bytes.TrimSpace(d)
	return len(t) == 0 || string(t) == "null"
}

// Kind is the JSON kind of d: object, array, string, number, boolean or
// null.
func (d Doc) Kind() string {
	t := bytes.TrimSpace(d)
	if len(t) == 0 {
		return "null"
	}
	switch t[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// MarshalDynamoDBAttributeValue implements attributevalue.Marshaler.
func (d Doc) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return d.AttributeValue()
}

// UnmarshalDynamoDBAttributeValue implements attributevalue.Unmarshaler.
func (d *Doc) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	v, err := FromAttributeValue(av)
	if err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("jsondoc: document to JSON: %w", err)
	}
	*d = b
	return nil
}

// InvalidDocError is a document DynamoDB would refuse; its message completes
// "<field>: …", so a service can answer 400 naming the field instead of
// failing the write.
type InvalidDocError struct{ msg string }

func (e *InvalidDocError) Error() string { return e.msg }

// AttributeValue is d as DynamoDB stores it, numbers kept as their decimal
// text; an *InvalidError says why DynamoDB would refuse it.
func (d Doc) AttributeValue() (types.AttributeValue, error) {
	if d.IsNull() {
		return &types.AttributeValueMemberNULL{Value: true}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(d))
	dec.UseNumber()
	av, err := decodeAV(dec, 1)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &InvalidDocError{"must be a single JSON value"}
	}
	return av, nil
}

func decodeAV(dec *json.Decoder, depth int) (types.AttributeValue, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, &InvalidDocError{"is not valid JSON"}
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth > MaxDocDepth {
			return nil, &InvalidDocError{fmt.Sprintf("must not nest deeper than %d levels", MaxDocDepth)}
		}
		if t == '[' {
			l := []types.AttributeValue{}
			for dec.More() {
				v, err := decodeAV(dec, depth+1)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			_, _ = dec.Token()
			return &types.AttributeValueMemberL{Value: l}, nil
		}
		m := map[string]types.AttributeValue{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, &InvalidDocError{"is not valid JSON"}
			}
			k := kt.(string)
			if k == "" {
				// DynamoDB refuses empty map keys; saying so beats a 500.
				return nil, &InvalidDocError{"must not contain empty object keys"}
			}
			v, err := decodeAV(dec, depth+1)
			if err != nil {
				return nil, err
			}
			m[k] = v
		}
		_, _ = dec.Token()
		return &types.AttributeValueMemberM{Value: m}, nil
	case string:
		return &types.AttributeValueMemberS{Value: t}, nil
	case json.Number:
		if !ValidNumber(string(t)) {
			return nil, &InvalidDocError{fmt.Sprintf("number %s is outside DynamoDB's range (38 significant digits, magnitude 1e-130 to 1e126)", truncateNumber(string(t)))}
		}
		return &types.AttributeValueMemberN{Value: string(t)}, nil
	case bool:
		return &types.AttributeValueMemberBOOL{Value: t}, nil
	case nil:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	}
	return nil, &InvalidDocError{"is not valid JSON"}
}

// Size is the number of bytes d adds to an item (without its name).
func (d Doc) Size() (int, error) {
	av, err := d.AttributeValue()
	if err != nil {
		return 0, err
	}
	return ItemSize(map[string]types.AttributeValue{"": av}), nil
}

// ArrayOfObjects reports the length of the JSON array d and whether every
// element is an object.
func (d Doc) ArrayOfObjects() (int, bool) {
	var elems []json.RawMessage
	if err := json.Unmarshal(d, &elems); err != nil {
		return 0, false
	}
	for _, e := range elems {
		if Doc(e).Kind() != "object" {
			return len(elems), false
		}
	}
	return len(elems), true
}

// truncateNumber shortens a number's text for a message. The text is
// ASCII, so bytes are characters.
func truncateNumber(s string) string {
	if len(s) <= 40 {
		return s
	}
	return s[:40] + "…"
}
