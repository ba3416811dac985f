package api_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	errGone = api.NewKind("svc: thing not found", http.StatusNotFound, api.CodeNotFound,
		func(id string, _ error) string { return fmt.Sprintf("thing %q not found", id) })
	errCostly = api.NewKind("svc: too costly", http.StatusRequestEntityTooLarge, api.CodeTooLarge,
		func(_ string, err error) string { return "too costly: " + api.Detail(err, "svc: too costly") })
	errSame = api.InvalidKind("svc: a equals b", api.FieldError{Field: "b", Message: "must differ from a"})
)

func TestErrorFor(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantCode   string
		wantMsg    string
		wantFields int
	}{
		{"api error as is", api.Conflict("busy"), 409, api.CodeConflict, "busy", 0},
		{"kind", errGone, 404, api.CodeNotFound, `thing "" not found`, 0},
		{"kind about an id", api.About(errGone, "t1"), 404, api.CodeNotFound, `thing "t1" not found`, 0},
		{"wrapped kind about an id", api.About(fmt.Errorf("get: %w", errGone), "t1"), 404, api.CodeNotFound, `thing "t1" not found`, 0},
		{"kind with detail", fmt.Errorf("%w: 7 units", errCostly), 413, api.CodeTooLarge, "too costly: 7 units", 0},
		{"invalid kind", errSame, 400, api.CodeValidation, "b: must differ from a", 1},
		{"cursor with hint", api.CursorHint(ddb.ErrInvalidCursor, "pass it unchanged"), 400, api.CodeBadRequest, "invalid cursor; pass it unchanged", 0},
		{"cursor with hint and id", api.About(api.CursorHint(ddb.ErrInvalidCursor, "pass it unchanged"), "t1"), 400, api.CodeBadRequest, "invalid cursor; pass it unchanged", 0},
		{"cursor without hint", ddb.ErrInvalidCursor, 500, api.CodeInternal, "internal error", 0},
		{"item too large", fmt.Errorf("put: %w", ddb.ErrItemTooLarge), 413, api.CodeTooLarge, "the item would exceed DynamoDB's 400 KB item size limit", 0},
		{"kind before item too large", fmt.Errorf("%w: %w", errCostly, ddb.ErrItemTooLarge), 413, api.CodeTooLarge, "too costly: ddb: item too large", 0},
		{"unknown", errors.New("dynamodb: table x exploded"), 500, api.CodeInternal, "internal error", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := api.ErrorFor(tt.err)
			assert.Equal(t, tt.wantStatus, got.Status, "ErrorFor: status")
			assert.Equal(t, tt.wantCode, got.Code, "ErrorFor: code")
			assert.Equal(t, tt.wantMsg, got.Message, "ErrorFor: message")
			assert.Len(t, got.Fields, tt.wantFields, "ErrorFor: fields")
			assert.ErrorIs(t, got, tt.err, "the answer lost its cause")
		})
	}
	assert.NoError(t, api.About(nil, "x"), "a nil error became non-nil: About")
	assert.NoError(t, api.CursorHint(nil, "x"), "a nil error became non-nil: CursorHint")
	assert.ErrorIs(t, api.About(errGone, "t1"), errGone, "About changed what errors.Is sees")
	assert.EqualError(t, api.About(errGone, "t1"), errGone.Error(), "About changed what logs see")
}

func TestPageLimit(t *testing.T) {
	tests := []struct {
		query   string
		want    int
		wantErr bool
	}{
		{"", 20, false},
		{"limit=1", 1, false},
		{"limit=100", 100, false},
		{"limit=", 20, true},
		{"limit=0", 20, true},
		{"limit=101", 20, true},
		{"limit=ten", 20, true},
		{"limit=-1", 20, true},
		{"limit=1e2", 20, true},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			q := api.QueryOf(httptest.NewRequest("GET", "/?"+tt.query, nil))
			var v api.Validator
			got := api.PageLimit(&v, q, 20, 100)
			assert.Equal(t, tt.want, got, "PageLimit")
			if tt.wantErr {
				assert.EqualError(t, v.Err(), "400 validation_failed: limit: must be an integer from 1 to 100", "PageLimit: the error's wording")
			} else {
				assert.NoError(t, v.Err(), "PageLimit")
			}
		})
	}
}

func TestPathUUID(t *testing.T) {
	tests := []struct {
		id, wantErr string
	}{
		{"0b6e5f3a-1c2d-4e5f-8a9b-0c1d2e3f4a5b", ""},
		{"0B6E5F3A-1C2D-4E5F-8A9B-0C1D2E3F4A5B", `404 not_found: ticket "0B6E5F3A-1C2D-4E5F-8A9B-0C1D2E3F4A5B" not found`},
		{"{0b6e5f3a-1c2d-4e5f-8a9b-0c1d2e3f4a5b}", `404 not_found: ticket "{0b6e5f3a-1c2d-4e5f-8a9b-0c1d2e3f4a5b}" not found`},
		{"0b6e5f3a1c2d4e5f8a9b0c1d2e3f4a5b", `404 not_found: ticket "0b6e5f3a1c2d4e5f8a9b0c1d2e3f4a5b" not found`},
		{"nope", `404 not_found: ticket "nope" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.SetPathValue("id", tt.id)
			id, err := api.PathUUID(r, "id", "ticket")
			if tt.wantErr == "" {
				assert.NoError(t, err, "PathUUID")
				assert.Equal(t, tt.id, id, "PathUUID")
			} else {
				assert.EqualError(t, err, tt.wantErr, "PathUUID")
			}
		})
	}
}

func TestOptional(t *testing.T) {
	var in struct {
		A, B, C api.Optional[int]
	}
	require.NoError(t, json.Unmarshal([]byte(`{"A":5,"B":null}`), &in))
	var v api.Validator
	if p := in.A.Ptr(&v, "A"); assert.NotNil(t, p, "A") {
		assert.Equal(t, 5, *p, "A")
	}
	assert.False(t, in.B.Present(&v, "B"), "a null field is present")
	assert.False(t, in.C.Present(&v, "C"), "an absent field is present")
	assert.Equal(t, "400 validation_failed: B: must not be null; omit it instead", fmt.Sprint(v.Err()), "Err()")
}

// A domain package declares how each of its failures is answered; handlers
// return the error, naming the resource when the message quotes it.
func ExampleNewKind() {
	errNotFound := api.NewKind("tickets: ticket not found", http.StatusNotFound, api.CodeNotFound,
		func(id string, _ error) string { return fmt.Sprintf("ticket %q not found", id) })

	err := api.About(fmt.Errorf("get: %w", errNotFound), "t-42")
	e := api.ErrorFor(err)
	fmt.Println(e.Status, e.Code, e.Message)
	fmt.Println(errors.Is(err, errNotFound), err)
	// Output:
	// 404 not_found ticket "t-42" not found
	// true get: tickets: ticket not found
}

func TestReply(t *testing.T) {
	w := httptest.NewRecorder()
	assert.NoError(t, api.Reply(w, http.StatusCreated, map[string]int{"n": 1}, api.About(nil, "x")), "Reply without error")
	assert.Equal(t, 201, w.Code, "Reply without error: status")
	assert.Equal(t, `{"n":1}`+"\n", w.Body.String(), "Reply without error: body")
	w = httptest.NewRecorder()
	err := api.Reply(w, http.StatusOK, "unused", errGone)
	assert.True(t, err == errGone, "Reply with error = %v, want errGone itself", err)
	assert.Zero(t, w.Body.Len(), "Reply with error wrote %q", w.Body)
}

func TestStrings(t *testing.T) {
	type status string
	var v api.Validator
	v.OneOf("status", "gone", api.Strings([]status{"open", "closed"})...)
	assert.Equal(t, "400 validation_failed: status: must be one of open, closed", fmt.Sprint(v.Err()), "Err()")
}
