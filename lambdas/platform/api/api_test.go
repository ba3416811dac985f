package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/dynastack/dynastack/lambdas/platform/metrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type createReq struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

func TestDecodeJSON(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		wantStatus int
		wantCode   string
		wantInMsg  string
	}{
		{"ok", `{"name":"a","count":1}`, 0, "", ""},
		{"ok with spaces", " \n{\"name\":\"a\"}\n ", 0, "", ""},
		{"empty", ``, 400, api.CodeBadRequest, "empty"},
		{"blank", `   `, 400, api.CodeBadRequest, "empty"},
		{"null", `null`, 400, api.CodeBadRequest, "JSON object"},
		{"array", `[]`, 400, api.CodeBadRequest, "JSON object"},
		{"string", `"x"`, 400, api.CodeBadRequest, "JSON object"},
		{"syntax", `{"name":}`, 400, api.CodeBadRequest, "malformed"},
		{"truncated", `{"name":"a"`, 400, api.CodeBadRequest, "malformed"},
		{"wrong type", `{"name":5}`, 400, api.CodeValidation, "name: must be a string"},
		{"wrong type number", `{"count":"x"}`, 400, api.CodeValidation, "count: must be a number"},
		{"unknown field", `{"nmae":"a"}`, 400, api.CodeValidation, "nmae: unknown field"},
		{"trailing", `{"name":"a"}{}`, 400, api.CodeBadRequest, "single JSON object"},
		{"too large", `{"name":"` + strings.Repeat("x", 200) + `"}`, 413, api.CodeTooLarge, "exceeds 100 bytes"},
		{"invalid UTF-8", "{\"name\":\"a\xffb\"}", 400, api.CodeBadRequest, "UTF-8"},
		{"lone high surrogate", `{"name":"\ud800"}`, 400, api.CodeBadRequest, "surrogate"},
		{"high surrogate then letter", `{"name":"\ud800\u0041"}`, 400, api.CodeBadRequest, "surrogate"},
		{"lone low surrogate", `{"name":"\udc00x"}`, 400, api.CodeBadRequest, "surrogate"},
		{"surrogate pair", `{"name":"\ud83d\ude00"}`, 0, "", ""},
		{"escaped backslash before u", `{"name":"\\ud800"}`, 0, "", ""},
		{"duplicate key", `{"name":"a","name":"b"}`, 400, api.CodeValidation, "name: is given twice"},
		{"duplicate key escaped", `{"name":"a","n\u0061me":"b"}`, 400, api.CodeValidation, "name: is given twice"},
		{"duplicate reported before another case", `{"Name":"a","count":1,"count":2}`, 400, api.CodeValidation, "count: is given twice"},
		{"control character in a string", "{\"name\":\"a\tb\"}", 400, api.CodeBadRequest, "malformed"},
		{"field in another case", `{"Name":"a"}`, 400, api.CodeValidation, "Name: unknown field"},
		{"number too large", `{"count":1e400}`, 400, api.CodeValidation, "count: number 1e400 is outside"},
		{"39 digits", `{"count":123456789012345678901234567890123456789}`, 400, api.CodeValidation, "outside DynamoDB's range"},
		{"too deep", `{"name":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, 400, api.CodeValidation, "name: nests deeper than 31"},
		{"huge unknown name", `{"` + strings.Repeat("k", 90) + `":1}`, 400, api.CodeValidation, strings.Repeat("k", 64) + "…: unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", strings.NewReader(tt.body))
			w := httptest.NewRecorder()
			var dst createReq
			err := api.DecodeJSON(w, r, 100, &dst)
			if tt.wantStatus == 0 {
				require.NoError(t, err)
				return
			}
			var apiErr *api.Error
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tt.wantStatus, apiErr.Status, "status")
			assert.Equal(t, tt.wantCode, apiErr.Code, "code")
			assert.Contains(t, apiErr.Message, tt.wantInMsg, "message")
		})
	}
}

// TestDecodeJSONKeepsDigits: a free-form value keeps every digit of its
// numbers (json.Number), and exactly 31 levels below the body are allowed.
func TestDecodeJSONKeepsDigits(t *testing.T) {
	var dst struct {
		Doc any `json:"doc"`
	}
	body := `{"doc":{"big":12345678901234567890123,"deep":` + strings.Repeat("[", 30) + strings.Repeat("]", 30) + `}}`
	require.NoError(t, api.DecodeJSON(httptest.NewRecorder(), httptest.NewRequest("POST", "/", strings.NewReader(body)), 1<<10, &dst))
	require.IsType(t, map[string]any{}, dst.Doc)
	assert.Equal(t, json.Number("12345678901234567890123"), dst.Doc.(map[string]any)["big"], "big")
}

// TestDecodeJSONIntegers: a number an integer field cannot hold (a
// fraction, an exponent, one out of the field's range, a negative for an
// unsigned one) is a 400 that says the field takes an integer and in what
// range, not "must be a number, not a JSON number 1.5", which contradicts
// itself and names no fix.
func TestDecodeJSONIntegers(t *testing.T) {
	var dst struct {
		Count   int               `json:"count"`
		Small   uint8             `json:"small"`
		Version api.Optional[int] `json:"version"`
		Ratio   float64           `json:"ratio"`
	}
	for _, tt := range []struct{ body, want string }{
		{`{"count":1.5}`, "count: must be an integer from -9223372036854775808 to 9223372036854775807, not 1.5"},
		{`{"count":1e2}`, "count: must be an integer from -9223372036854775808 to 9223372036854775807, not 1e2"},
		{`{"count":9223372036854775808}`, "count: must be an integer from -9223372036854775808 to 9223372036854775807, not 9223372036854775808"},
		{`{"small":-1}`, "small: must be an integer from 0 to 255, not -1"},
		{`{"small":300}`, "small: must be an integer from 0 to 255, not 300"},
		{`{"version":2.5}`, "version: must be an integer from -9223372036854775808 to 9223372036854775807, not 2.5"},
		{`{"version":"3"}`, "version: must be a number (an integer from -9223372036854775808 to 9223372036854775807), not a JSON string"},
		{`{"count":"3"}`, "count: must be a number (an integer from -9223372036854775808 to 9223372036854775807), not a JSON string"},
		{`{"small":true}`, "small: must be a number (an integer from 0 to 255), not a JSON bool"},
		{`{"ratio":"x"}`, "ratio: must be a number, not a JSON string"},
	} {
		t.Run(tt.body, func(t *testing.T) {
			err := api.DecodeJSON(httptest.NewRecorder(), httptest.NewRequest("POST", "/", strings.NewReader(tt.body)), 0, &dst)
			var e *api.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, http.StatusBadRequest, e.Status, "status")
			assert.Equal(t, api.CodeValidation, e.Code, "code")
			assert.Equal(t, tt.want, e.Message, "message")
		})
	}
}

// TestDecodeJSONContentType: a body labelled as something other than JSON
// (text/plain, a form, multipart: what a browser page sends without a
// CORS preflight, and what the document refuses) is a 415 naming the
// label and the fix, as the local runner answers it; application/json
// with parameters and an unlabelled body are read as JSON.
func TestDecodeJSONContentType(t *testing.T) {
	for _, tt := range []struct {
		contentType string
		status      int
	}{
		{"", 0},
		{"application/json", 0},
		{"application/json; charset=utf-8", 0},
		{"Application/JSON", 0},
		{"text/plain", http.StatusUnsupportedMediaType},
		{"text/plain; charset=utf-8", http.StatusUnsupportedMediaType},
		{"application/x-www-form-urlencoded", http.StatusUnsupportedMediaType},
		{"multipart/form-data; boundary=x", http.StatusUnsupportedMediaType},
		{"application/merge-patch+json", http.StatusUnsupportedMediaType},
		{"application/json;;", http.StatusUnsupportedMediaType},
	} {
		t.Run(tt.contentType, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", strings.NewReader(`{"name":"a"}`))
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			}
			var dst createReq
			err := api.DecodeJSON(httptest.NewRecorder(), r, 0, &dst)
			if tt.status == 0 {
				require.NoError(t, err)
				assert.Equal(t, "a", dst.Name, "decoded")
				return
			}
			var e *api.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tt.status, e.Status, "status")
			assert.Equal(t, api.CodeUnsupportedMediaType, e.Code, "code")
			assert.Contains(t, e.Message, "Content-Type: application/json", "the fix")
			assert.Empty(t, dst.Name, "nothing decoded")
		})
	}
}

func TestWriteJSONKeepsHTML(t *testing.T) {
	w := httptest.NewRecorder()
	api.WriteJSON(w, 200, map[string]string{"t": "<b>&</b>"})
	assert.Equal(t, `{"t":"<b>&</b>"}`+"\n", w.Body.String(), "body")
}

func TestValidator(t *testing.T) {
	var v api.Validator
	v.Text("a", "", 1, 5)
	v.Text("b", "toolong", 1, 5)
	v.Text("c", "ok", 1, 5)
	v.Text("d", "bell\a", 1, 10)
	v.Identifier("e", "has space", 20)
	v.OneOf("f", "x", "open", "closed")
	err := v.Err()
	var apiErr *api.Error
	require.ErrorAs(t, err, &apiErr, "Err()")
	got := map[string]string{}
	for _, f := range apiErr.Fields {
		got[f.Field] = f.Message
	}
	want := map[string]string{
		"a": "is required",
		"b": "must be at most 5 characters (got 7)",
		"d": "must not contain control characters",
		"e": "must not contain whitespace",
		"f": "must be one of open, closed",
	}
	assert.Equal(t, want, got, "fields")
	var ok api.Validator
	ok.Text("x", "fine", 1, 10)
	assert.NoError(t, ok.Err(), "valid input")
}

func TestRouterAndMiddleware(t *testing.T) {
	things := service.Route{Method: "GET", Path: "/things/{id}"}
	rt := api.NewRouter(service.Function{Name: "things", Kind: service.HTTP, Routes: []service.Route{things}})
	rt.Handle(things, func(w http.ResponseWriter, r *http.Request) error {
		switch r.PathValue("id") {
		case "missing":
			return api.NotFound("no thing")
		case "boom":
			return errors.New("dynamodb: table secret-table-name exploded")
		case "panic":
			panic("kaboom")
		}
		api.WriteJSON(w, 200, map[string]string{"id": r.PathValue("id")})
		return nil
	})
	var logs bytes.Buffer
	h := api.Instrument(logx.New(&logs, slog.LevelInfo), rt)

	tests := []struct {
		method, path string
		reqID        string
		wantStatus   int
		wantCode     string
		wantAllow    string
	}{
		{"GET", "/things/1", "", 200, "", ""},
		{"GET", "/things/missing", "abc-123", 404, api.CodeNotFound, ""},
		{"GET", "/nowhere", "", 404, api.CodeNotFound, ""},
		{"DELETE", "/things/1", "", 405, api.CodeMethodNotAllowed, "GET, HEAD"},
		{"GET", "/things/boom", "", 500, api.CodeInternal, ""},
		{"GET", "/things/panic", "", 500, api.CodeInternal, ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+tt.path, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.path, nil)
			if tt.reqID != "" {
				r.Header.Set("X-Correlation-Id", tt.reqID)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			require.Equal(t, tt.wantStatus, w.Code, "status; body %s", w.Body)
			id := w.Header().Get("X-Request-Id")
			assert.NotEmpty(t, id, "X-Request-Id: want ours")
			assert.NotEqual(t, tt.reqID, id, "X-Request-Id: want ours, not the client's")
			assert.Equal(t, tt.wantAllow, w.Header().Get("Allow"), "Allow")
			if tt.wantCode == "" {
				return
			}
			body, _ := io.ReadAll(w.Body)
			var e struct {
				Error struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
				RequestID string `json:"request_id"`
			}
			require.NoError(t, json.Unmarshal(body, &e), "body %s", body)
			assert.Equal(t, tt.wantCode, e.Error.Code, "body's code")
			assert.Equal(t, id, e.RequestID, "body's request_id")
			assert.NotContains(t, string(body), "secret-table-name", "internal detail leaked")
			assert.NotContains(t, string(body), "kaboom", "internal detail leaked")
		})
	}
	assert.Contains(t, logs.String(), `"client_request_id":"abc-123"`, "the client's id was not logged as client_request_id")
	assert.Contains(t, logs.String(), `"client_correlation_id":"abc-123"`, "the client's correlation id was not logged as client_correlation_id")
	assert.NotContains(t, logs.String(), `"correlation_id":"abc-123"`, "the client's correlation id became ours")
	assert.Contains(t, logs.String(), "secret-table-name", "internal error was not logged")
	// One access line per request, with every field, as numbers where
	// they are numbers.
	var lines int
	for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), "log line %s", line)
		if rec["msg"] != "request" {
			continue
		}
		lines++
		assert.Equal(t, "INFO", rec["level"], "access line's level: %s", line)
		for _, k := range []string{"method", "path", "route", "request_id"} {
			assert.NotNil(t, rec[k], "access line lacks %s: %s", k, line)
		}
		for _, k := range []string{"status", "bytes", "duration_ms"} {
			assert.IsType(t, float64(0), rec[k], "access line's %s is not a number: %s", k, line)
		}
	}
	assert.Equal(t, len(tests), lines, "access lines, one per request:\n%s", logs.String())
}

func TestRoutedThroughInstrument(t *testing.T) {
	a, post := service.Route{Method: "GET", Path: "/a"}, service.Route{Method: "POST", Path: "/a/{id}"}
	r := api.NewRouter(service.Function{Name: "a", Kind: service.HTTP, Routes: []service.Route{a, post}})
	r.Handle(a, func(http.ResponseWriter, *http.Request) error { return nil })
	r.Handle(post, func(http.ResponseWriter, *http.Request) error { return nil })
	h := api.Instrument(slog.New(slog.DiscardHandler), r.Done())
	require.Implements(t, (*api.Routed)(nil), h, "Instrument hides the router's patterns")
	assert.Equal(t, []string{"GET /a", "POST /a/{id}"}, h.(api.Routed).Patterns(), "Patterns()")
	assert.NotImplements(t, (*api.Routed)(nil), api.Instrument(slog.New(slog.DiscardHandler), http.NotFoundHandler()), "a plain handler became Routed")
}

// TestRouterHoldsToTheContract: a handler for a route outside the contract,
// a route handled twice and a contract route without a handler all panic
// when the handler is built, naming the route.
func TestRouterHoldsToTheContract(t *testing.T) {
	get, put := service.Route{Method: "GET", Path: "/files/{path+}"}, service.Route{Method: "PUT", Path: "/files/{path+}"}
	fn := service.Function{Name: "files", Kind: service.HTTP, Routes: []service.Route{get, put}}
	nop := func(http.ResponseWriter, *http.Request) error { return nil }
	for _, tt := range []struct {
		name, want string
		build      func()
	}{
		{"outside", "DELETE /files/{path+} is not a route of files's contract", func() {
			api.NewRouter(fn).Handle(service.Route{Method: "DELETE", Path: "/files/{path+}"}, nop)
		}},
		{"twice", "GET /files/{path+} handled twice", func() {
			r := api.NewRouter(fn)
			r.Handle(get, nop)
			r.Handle(get, nop)
		}},
		{"missing", "files's contract routes without a handler: PUT /files/{path+}", func() {
			r := api.NewRouter(fn)
			r.Handle(get, nop)
			r.Done()
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				assert.Contains(t, fmt.Sprint(recover()), tt.want, "panic")
			}()
			tt.build()
		})
	}
	// A greedy path segment is served as the mux's {path...}.
	r := api.NewRouter(fn)
	r.Handle(get, func(w http.ResponseWriter, r *http.Request) error {
		api.WriteJSON(w, 200, map[string]string{"path": r.PathValue("path")})
		return nil
	})
	r.Handle(put, nop)
	rec := httptest.NewRecorder()
	r.Done().ServeHTTP(rec, httptest.NewRequest("GET", "/files/a/b/c", nil))
	assert.Equal(t, 200, rec.Code, "GET /files/a/b/c: status")
	assert.Contains(t, rec.Body.String(), `"a/b/c"`, "GET /files/a/b/c: body")
}

// A DynamoDB throttle, server error or deadline that outlasted the
// client's retries is 503 unavailable with Retry-After, not 500: the
// request was fine and may be sent again.
func TestUnavailableIs503(t *testing.T) {
	for _, err := range []error{
		ddb.Wrap("GetItem", &types.ProvisionedThroughputExceededException{Message: aws.String("slow down")}),
		fmt.Errorf("store: %w", &types.InternalServerError{}),
		api.About(ddb.Wrap("Query", context.DeadlineExceeded), "x"),
	} {
		rec := httptest.NewRecorder()
		var logs bytes.Buffer
		req := httptest.NewRequest("GET", "/", nil)
		req = req.WithContext(api.WithLogger(req.Context(), logx.New(&logs, slog.LevelInfo).With("service", "itsm")))
		api.WriteError(rec, req, err)
		// One Unavailable metric in the embedded metric format, by service.
		ms, perr := metrics.ParseLines(logs.Bytes())
		require.NoError(t, perr, "%v: EMF lines", err)
		got := metrics.Find(ms, service.MetricUnavailable, map[string]string{service.MetricDimension: "itsm"})
		require.Len(t, got, 1, "%v: one Unavailable measurement by service", err)
		assert.Equal(t, 1.0, metrics.Sum(got), "%v: counts one", err)
		assert.Equal(t, service.MetricNamespace, got[0].Namespace, "%v: namespace", err)
		assert.Equal(t, string(service.Count), got[0].Unit, "%v: unit", err)
		assert.Equal(t, http.StatusServiceUnavailable, rec.Code, "%v: status", err)
		assert.Equal(t, "2", rec.Header().Get("Retry-After"), "%v: Retry-After", err)
		assert.Contains(t, rec.Body.String(), `"code":"unavailable"`, "%v: body", err)
		assert.NotContains(t, rec.Body.String(), "slow down", "%v: body", err)
	}
}

// Each answer of an instrumented router is one RouteLatency measurement
// by the route's key (a greedy parameter as API Gateway writes it) and
// status class; a request no route matched is "other".
func TestRouteLatency(t *testing.T) {
	get, put := service.Route{Method: "GET", Path: "/files/{path+}"}, service.Route{Method: "PUT", Path: "/files/{path+}"}
	fn := service.Function{Name: "files", Kind: service.HTTP, Routes: []service.Route{get, put}}
	r := api.NewRouter(fn)
	r.Handle(get, func(w http.ResponseWriter, r *http.Request) error {
		switch r.PathValue("path") {
		case "bad":
			return api.BadRequest("no")
		case "busy":
			return ddb.Wrap("GetItem", &types.ProvisionedThroughputExceededException{Message: aws.String("slow down")})
		case "boom":
			return errors.New("boom")
		}
		api.WriteJSON(w, 200, map[string]string{})
		return nil
	})
	r.Handle(put, func(http.ResponseWriter, *http.Request) error { return nil })
	var logs bytes.Buffer
	h := api.Instrument(logx.New(&logs, slog.LevelInfo).With(service.MetricDimension, fn.Name), r.Done())
	for _, req := range []struct{ method, path string }{
		{"GET", "/files/a/b"}, {"GET", "/files/ok"}, {"GET", "/files/bad"}, {"GET", "/files/busy"}, {"GET", "/files/boom"},
		{"PUT", "/files/x"}, {"GET", "/nothing"},
	} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(req.method, req.path, nil))
	}
	ms, err := metrics.ParseLines(logs.Bytes())
	require.NoError(t, err, "EMF lines")
	count := func(dims map[string]string) int {
		dims[service.MetricDimension] = fn.Name
		n := 0
		for _, m := range metrics.Find(ms, service.MetricRouteLatency, dims) {
			n += len(m.Values)
		}
		return n
	}
	assert.Equal(t, 7, count(map[string]string{}), "every answer measured once")
	assert.Equal(t, 5, count(map[string]string{service.DimRoute: "GET /files/{path+}"}), "GET's answers")
	assert.Equal(t, 2, count(map[string]string{service.DimRoute: "GET /files/{path+}", service.DimStatus: service.StatusOK}), "GET's 2xx")
	for class, route := range map[string]string{service.StatusClientError: "GET /files/{path+}", service.StatusUnavailable: "GET /files/{path+}", service.StatusServerError: "GET /files/{path+}"} {
		assert.Equal(t, 1, count(map[string]string{service.DimRoute: route, service.DimStatus: class}), "GET's %s", class)
	}
	assert.Equal(t, 1, count(map[string]string{service.DimRoute: "PUT /files/{path+}", service.DimStatus: service.StatusOK}), "a PUT that wrote nothing answered 200")
	assert.Equal(t, 1, count(map[string]string{service.DimRoute: service.OtherValue, service.DimStatus: service.StatusClientError}), "the 404 of no route")
	for _, m := range metrics.Find(ms, service.MetricRouteLatency, map[string]string{service.MetricDimension: fn.Name}) {
		assert.Equal(t, string(service.Milliseconds), m.Unit, "unit")
		for _, v := range m.Values {
			assert.GreaterOrEqual(t, v, 0.0, "a time")
		}
	}
}
