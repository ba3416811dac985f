package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
)

// DefaultMaxBodyBytes bounds a request body when a service does not choose.
const DefaultMaxBodyBytes = 64 << 10

// DecodeJSON decodes the body of r into dst, which must point to a struct.
// A body labelled other than application/json is a 415 (an unlabelled one
// is read as JSON).
//
// It is strict on purpose: an empty body, `null`, a non-object, unknown
// fields, wrongly typed fields and trailing data are all 400 errors naming
// the problem, and a body over maxBytes is a 413. So is anything that
// would be stored other than as sent: invalid UTF-8, unpaired surrogate
// escapes, duplicate keys, field names in another case, nesting deeper than
// MaxNesting and numbers DynamoDB cannot hold. Numbers decoded into any are
// json.Number, so they keep every digit. Without this, `null` or
// `{"caler_id":…}` would decode "successfully" into a zero struct.
func DecodeJSON(w http.ResponseWriter, r *http.Request, maxBytes int64, dst any) error {
	if err := checkContentType(r.Header.Get("Content-Type")); err != nil {
		return err
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBodyBytes
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return TooLarge("request body exceeds %d bytes", maxBytes)
		}
		return BadRequest("could not read request body")
	}
	return decodeBytes(body, dst)
}

// checkContentType refuses a body labelled as anything but JSON: the
// documents take application/json only, and text/plain, form and
// multipart bodies are what a browser page may send cross-origin without
// a CORS preflight. An unlabelled body is read as JSON (clients and tests
// that send none).
func checkContentType(ct string) error {
	if ct == "" {
		return nil
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil && mt == "application/json" {
		return nil
	}
	return &Error{Status: http.StatusUnsupportedMediaType, Code: CodeUnsupportedMediaType,
		Message: fmt.Sprintf("the body is labelled Content-Type %q; send JSON as Content-Type: application/json", Truncate(ct, 64))}
}

func decodeBytes(body []byte, dst any) error {
	trimmed := bytes.TrimSpace(body)
	switch {
	case len(trimmed) == 0:
		return BadRequest("request body is empty; expected a JSON object")
	case trimmed[0] != '{':
		return BadRequest("request body must be a JSON object")
	}
	if err := checkBody(trimmed, dst); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	// Free-form values (any, map[string]any) keep their digits:
	// attributevalue stores a json.Number as N exactly, a float64 rounded.
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return BadRequest("request body must contain a single JSON object")
	}
	return nil
}

func decodeError(err error) error {
	var (
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syntax):
		return BadRequest("malformed JSON at byte %d", syntax.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return BadRequest("malformed JSON: unexpected end of body")
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return BadRequest("request body must be a JSON object")
		}
		return Invalid(FieldError{Field: echo(field), Message: typeMessage(typ)})
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json has no typed error for unknown fields.
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return Invalid(FieldError{Field: echo(name), Message: "unknown field"})
	default:
		return BadRequest("invalid JSON body")
	}
}

// typeMessage says what a field takes when the body's value does not fit
// it. An integer field names its range, also for a number it cannot hold
// (a fraction, an exponent, out of range: encoding/json reports those as
// "number 1.5"), which would otherwise read "must be a number, not a JSON
// number 1.5".
func typeMessage(typ *json.UnmarshalTypeError) string {
	t := typ.Type
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var integer string
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		integer = fmt.Sprintf("an integer from %d to %d", int64(-1)<<(t.Bits()-1), int64(1)<<(t.Bits()-1)-1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		integer = fmt.Sprintf("an integer from 0 to %d", uint64(1)<<(t.Bits()-1)<<1-1)
	}
	switch number, isNumber := strings.CutPrefix(typ.Value, "number "); {
	case integer != "" && isNumber:
		return fmt.Sprintf("must be %s, not %s", integer, Truncate(number, 40))
	case integer != "":
		return fmt.Sprintf("must be a number (%s), not a JSON %s", integer, typ.Value)
	}
	return fmt.Sprintf("must be a %s, not a JSON %s", jsonKind(typ.Type.Kind().String()), typ.Value)
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "map", "struct":
		return "object"
	default:
		return "number"
	}
}
