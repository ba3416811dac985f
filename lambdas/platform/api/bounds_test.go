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
	"github.com/stretchr/testify/assert"
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
		assert.LessOrEqual(t, rec.Body.Len(), api.MaxErrorBodyBytes, "%s: error body bytes", name)
		var b errBody
		assert.NoError(t, json.Unmarshal(rec.Body.Bytes(), &b), "%s: not JSON: %.200s", name, rec.Body)
		assert.LessOrEqual(t, len(b.Error.Fields), api.MaxFieldErrors, "%s: fields", name)
		for _, f := range b.Error.Fields {
			assert.LessOrEqual(t, len([]rune(f.Field)), api.MaxEchoChars+1, "%s: characters of a field name", name)
		}
	}
	rec := httptest.NewRecorder()
	api.WriteError(rec, httptest.NewRequest("GET", "/", nil), many())
	var b errBody
	_ = json.Unmarshal(rec.Body.Bytes(), &b)
	assert.Len(t, b.Error.Fields, api.MaxFieldErrors, "1000 invalid fields: listed")
	assert.True(t, strings.HasSuffix(b.Error.Message, "and 990 more invalid fields"), "1000 invalid fields: message %.100s…%s", b.Error.Message, b.Error.Message[max(0, len(b.Error.Message)-40):])
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
		assert.Equal(t, 400, rec.Code, "%d parameters: status (body %.300s)", tt.n, rec.Body)
		assert.LessOrEqual(t, rec.Body.Len(), 2048, "%d parameters: body bytes", tt.n)
		if assert.NotEmpty(t, b.Error.Fields, "%d parameters: fields", tt.n) {
			assert.Equal(t, tt.want, b.Error.Fields[0].Field, "%d parameters: the field named", tt.n)
		}
	}
}

func TestEpochSeconds(t *testing.T) {
	for n, ok := range map[int64]bool{0: true, api.MaxEpochSeconds: true, -1: false, api.MaxEpochSeconds + 1: false, 9_300_000_000_000_000: false} {
		var v api.Validator
		v.EpochSeconds("up_to_time", n)
		if ok {
			assert.NoError(t, v.Err(), "EpochSeconds(%d)", n)
		} else {
			assert.Error(t, v.Err(), "EpochSeconds(%d)", n)
		}
	}
}
