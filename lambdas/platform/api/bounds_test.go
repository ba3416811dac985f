package api_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/api"
)

type errBody struct {
	Error struct {
		Message string           `json:"message"`
		Fields  []api.FieldError `json:"fields"`
	} `json:"error"`
}

// No request makes an error large: names are cut at 64 characters, at
// most 10 fields are listed (the message counts the rest), and the body
// stays under MaxErrorBodyBytes whatever a service put in the error.
func TestErrorBodyIsBounded(t *testing.T) {
	long := strings.Repeat("k", 3000)
	many := func() error {
		var v api.Validator
		for i := range 1000 {
			v.Add(fmt.Sprintf("ttl.%s%d", long, i), "is not a valid type key: %s", long)
		}
		return v.Err()
	}
	for name, err := range map[string]error{
		"1000 huge fields":       many(),
		"hand-made huge error":   &api.Error{Status: 400, Code: api.CodeValidation, Message: strings.Repeat("m\x01", 100000), Fields: make([]api.FieldError, 5000)},
		"huge message":           api.BadRequest("%s", strings.Repeat("<", 1<<20)),
		"coded error, long text": fmt.Errorf("%w: %w", api.NewKind("x", http.StatusConflict, "conflict", func(string, error) string { return long + long }), errors.New("cause")),
	} {
		rec := httptest.NewRecorder()
		api.WriteError(rec, httptest.NewRequest("GET", "/", nil), err)
		if rec.Body.Len() > api.MaxErrorBodyBytes {
			t.Errorf("%s: a %d-byte error body", name, rec.Body.Len())
		}
		var b errBody
		if json.Unmarshal(rec.Body.Bytes(), &b) != nil {
			t.Errorf("%s: not JSON: %.200s", name, rec.Body)
		}
		if len(b.Error.Fields) > api.MaxFieldErrors {
			t.Errorf("%s: %d fields", name, len(b.Error.Fields))
		}
		for _, f := range b.Error.Fields {
			if n := len([]rune(f.Field)); n > api.MaxEchoChars+1 {
				t.Errorf("%s: a field name of %d characters", name, n)
			}
		}
	}
	rec := httptest.NewRecorder()
	api.WriteError(rec, httptest.NewRequest("GET", "/", nil), many())
	var b errBody
	_ = json.Unmarshal(rec.Body.Bytes(), &b)
	if len(b.Error.Fields) != api.MaxFieldErrors || !strings.HasSuffix(b.Error.Message, "and 990 more invalid fields") {
		t.Errorf("1000 invalid fields: %d listed, message %.100s…%s", len(b.Error.Fields), b.Error.Message, b.Error.Message[max(0, len(b.Error.Message)-40):])
	}
}

// More than MaxQueryParams query parameters is one 400 naming "query",
// before the query is parsed; as many as that are read as usual.
func TestQueryParamsAreCapped(t *testing.T) {
	route := service.Route{Method: "GET", Path: "/things", Query: []service.QueryParam{service.Limit}}
	r := api.NewRouter(service.Function{Name: "things", Kind: service.HTTP, Routes: []service.Route{route}})
	r.Handle(route, func(w http.ResponseWriter, r *http.Request) error { api.WriteJSON(w, 200, "ok"); return nil })
	h := r.Done()
	for _, tt := range []struct {
		n    int
		want string
	}{
		{api.MaxQueryParams, "x_0"}, // unknown parameters, each named (10 listed)
		{api.MaxQueryParams + 1, "query"},
		{10000, "query"},
	} {
		var q []string
		for i := range tt.n {
			q = append(q, fmt.Sprintf("x_%d=1", i))
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/things?"+strings.Join(q, "&"), nil))
		var b errBody
		_ = json.Unmarshal(rec.Body.Bytes(), &b)
		if rec.Code != 400 || len(b.Error.Fields) == 0 || b.Error.Fields[0].Field != tt.want || rec.Body.Len() > 2048 {
			t.Errorf("%d parameters: %d %.300s (%d bytes), want 400 naming %s", tt.n, rec.Code, rec.Body, rec.Body.Len(), tt.want)
		}
	}
}

func TestEpochSeconds(t *testing.T) {
	for n, ok := range map[int64]bool{0: true, api.MaxEpochSeconds: true, -1: false, api.MaxEpochSeconds + 1: false, 9_300_000_000_000_000: false} {
		var v api.Validator
		v.EpochSeconds("up_to_time", n)
		if (v.Err() == nil) != ok {
			t.Errorf("EpochSeconds(%d): %v", n, v.Err())
		}
	}
}
