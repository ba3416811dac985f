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
			if got.Status != tt.wantStatus || got.Code != tt.wantCode || got.Message != tt.wantMsg || len(got.Fields) != tt.wantFields {
				t.Errorf("ErrorFor = %d %s %q %v, want %d %s %q with %d fields", got.Status, got.Code, got.Message, got.Fields, tt.wantStatus, tt.wantCode, tt.wantMsg, tt.wantFields)
			}
			if !errors.Is(got, tt.err) && got != tt.err {
				t.Errorf("the answer lost its cause %v", tt.err)
			}
		})
	}
	if api.About(nil, "x") != nil || api.CursorHint(nil, "x") != nil {
		t.Error("a nil error became non-nil")
	}
	if !errors.Is(api.About(errGone, "t1"), errGone) || api.About(errGone, "t1").Error() != errGone.Error() {
		t.Error("About changed what errors.Is and logs see")
	}
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
			if got != tt.want || (v.Err() != nil) != tt.wantErr {
				t.Errorf("PageLimit = %d, %v; want %d, error %v", got, v.Err(), tt.want, tt.wantErr)
			}
			if tt.wantErr && v.Err().Error() != "400 validation_failed: limit: must be an integer from 1 to 100" {
				t.Errorf("wording: %v", v.Err())
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
			switch {
			case tt.wantErr == "" && (err != nil || id != tt.id):
				t.Errorf("PathUUID = %q, %v", id, err)
			case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
				t.Errorf("PathUUID error = %v, want %s", err, tt.wantErr)
			}
		})
	}
}

func TestOptional(t *testing.T) {
	var in struct {
		A, B, C api.Optional[int]
	}
	if err := json.Unmarshal([]byte(`{"A":5,"B":null}`), &in); err != nil {
		t.Fatal(err)
	}
	var v api.Validator
	if p := in.A.Ptr(&v, "A"); p == nil || *p != 5 {
		t.Errorf("A = %v", p)
	}
	if in.B.Present(&v, "B") || in.C.Present(&v, "C") {
		t.Error("null or absent field is present")
	}
	if got := fmt.Sprint(v.Err()); got != "400 validation_failed: B: must not be null; omit it instead" {
		t.Errorf("Err() = %s", got)
	}
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
	if err := api.Reply(w, http.StatusCreated, map[string]int{"n": 1}, api.About(nil, "x")); err != nil || w.Code != 201 || w.Body.String() != `{"n":1}`+"\n" {
		t.Errorf("Reply without error = %v, %d %s", err, w.Code, w.Body)
	}
	w = httptest.NewRecorder()
	if err := api.Reply(w, http.StatusOK, "unused", errGone); err != errGone || w.Body.Len() != 0 {
		t.Errorf("Reply with error = %v, wrote %q", err, w.Body)
	}
}

func TestStrings(t *testing.T) {
	type status string
	var v api.Validator
	v.OneOf("status", "gone", api.Strings([]status{"open", "closed"})...)
	if got := fmt.Sprint(v.Err()); got != "400 validation_failed: status: must be one of open, closed" {
		t.Errorf("Err() = %s", got)
	}
}
