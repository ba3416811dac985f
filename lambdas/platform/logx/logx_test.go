package logx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log"
	"log/slog"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRequestIDAttached(t *testing.T) {
	var buf bytes.Buffer
	log := logx.New(&buf, slog.LevelInfo).With("service", "itsm")
	ctx := logx.WithRequestID(context.Background(), "req-1")
	log.InfoContext(ctx, "hello", "n", 1)
	log.InfoContext(context.Background(), "no id")

	dec := json.NewDecoder(&buf)
	var first, second map[string]any
	require.NoError(t, dec.Decode(&first))
	require.NoError(t, dec.Decode(&second))
	assert.Equal(t, "req-1", first["request_id"], "first record's request_id")
	assert.Equal(t, "itsm", first["service"], "first record's service")
	assert.Equal(t, "hello", first["msg"], "first record's msg")
	assert.NotContains(t, second, "request_id", "second record has request_id")
}

// A Lambda main names the service on the default logger and a service's
// constructor derives its logger from the default with the same key: the
// line carries the key once, with the main's value.
func TestOneKeyPerLine(t *testing.T) {
	var buf bytes.Buffer
	base := logx.New(&buf, slog.LevelInfo).With("service", "stak-stream")
	base.With("service", "stak", "table", "t1").With("table", "t2", "n", 1).Info("expired")
	base.WithGroup("g").With("service", "inner").Info("grouped")

	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	require.Len(t, lines, 2, "lines: %s", buf.Bytes())
	assert.Equal(t, 1, bytes.Count(lines[0], []byte(`"service":`)), "service keys: %s", lines[0])
	assert.Equal(t, 1, bytes.Count(lines[0], []byte(`"table":`)), "table keys: %s", lines[0])
	var first map[string]any
	require.NoError(t, json.Unmarshal(lines[0], &first))
	assert.Equal(t, "stak-stream", first["service"], "first line's service")
	assert.Equal(t, "t1", first["table"], "first line's table")
	assert.Equal(t, float64(1), first["n"], "first line's n")
	var second map[string]any
	require.NoError(t, json.Unmarshal(lines[1], &second))
	g, _ := second["g"].(map[string]any)
	assert.Equal(t, "stak-stream", second["service"], "grouped line's service")
	assert.Equal(t, "inner", g["service"], "grouped line's g.service")
}

// What aws-lambda-go writes through the log package (a failed invocation)
// is logged at ERROR once SetDefault installed the logger.
func TestSetDefaultLogPackageAtError(t *testing.T) {
	prev := slog.Default()
	t.Cleanup(func() {
		slog.SetDefault(prev)
		slog.SetLogLoggerLevel(slog.LevelInfo)
	})
	var buf bytes.Buffer
	logx.SetDefault(logx.New(&buf, slog.LevelInfo).With("service", "itsm"))
	log.Printf("%s", `{"errorMessage":"boom","errorType":"errorString"}`)

	var rec map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &rec), "%s", buf.Bytes())
	assert.Equal(t, "ERROR", rec["level"], "record's level")
	assert.Equal(t, "itsm", rec["service"], "record's service")
	if assert.IsType(t, "", rec["msg"], "record's msg") {
		assert.Contains(t, rec["msg"].(string), "boom", "record's msg")
	}
}

// The correlation id of the context and the X-Ray trace id of the
// invocation (aws-lambda-go's context value, else _X_AMZN_TRACE_ID) are on
// every record logged with that context.
func TestCorrelationAndTraceIDs(t *testing.T) {
	const header = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	//lint:ignore SA1029 the key is aws-lambda-go's, a plain string
	invocation := context.WithValue(context.Background(), "x-amzn-trace-id", header)
	for _, tc := range []struct {
		name       string
		ctx        context.Context
		env, trace string
	}{
		{"lambda context", invocation, "", "1-5759e988-bd862e3fe1be46a994272793"},
		{"environment", context.Background(), "Sampled=0;Root=1-00000001-000000000000000000000001", "1-00000001-000000000000000000000001"},
		{"context first", invocation, "Root=1-00000001-000000000000000000000001", "1-5759e988-bd862e3fe1be46a994272793"},
		{"none", context.Background(), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(logx.EnvTraceID, tc.env)
			var buf bytes.Buffer
			log := logx.New(&buf, slog.LevelInfo)
			log.InfoContext(logx.WithCorrelationID(tc.ctx, "corr-1"), "hello")
			var rec map[string]any
			require.NoError(t, json.Unmarshal(buf.Bytes(), &rec))
			assert.Equal(t, "corr-1", rec["correlation_id"], "correlation_id")
			got, _ := rec["trace_id"].(string)
			assert.Equal(t, tc.trace, got, "trace_id")
		})
	}
}

// A queue record's trace (WithTrace) is the trace of its lines, over the
// invocation's; where they differ, the invocation's is beside it. Only a
// well-formed header is taken.
func TestRecordTrace(t *testing.T) {
	const (
		message    = "Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad8;Sampled=1"
		invocation = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad9;Sampled=1"
	)
	t.Setenv(logx.EnvTraceID, "")
	inv := logx.WithInvocationTrace(context.Background(), invocation)
	for _, tc := range []struct {
		name            string
		ctx             context.Context
		header          string
		trace, invTrace string
	}{
		{"record in its invocation's trace", logx.WithTrace(inv, invocation), invocation, "1-5759e988-bd862e3fe1be46a994272793", ""},
		{"record of another trace", logx.WithTrace(inv, message), message, "1-67891233-abcdef012345678912345678", "1-5759e988-bd862e3fe1be46a994272793"},
		{"record outside an invocation", logx.WithTrace(context.Background(), message), message, "1-67891233-abcdef012345678912345678", ""},
		{"malformed record header", logx.WithTrace(inv, "Root=1-xyz;Sampled=1"), invocation, "1-5759e988-bd862e3fe1be46a994272793", ""},
		{"header with a space", logx.WithTrace(inv, "Root=1-67891233-abcdef012345678912345678; Sampled=1"), invocation, "1-5759e988-bd862e3fe1be46a994272793", ""},
		{"malformed invocation header", logx.WithInvocationTrace(context.Background(), "Root=1-5759e988-BD862E3FE1BE46A994272793"), "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.header, logx.TraceHeader(tc.ctx), "TraceHeader")
			var buf bytes.Buffer
			logx.New(&buf, slog.LevelInfo).InfoContext(tc.ctx, "hello")
			var rec map[string]any
			require.NoError(t, json.Unmarshal(buf.Bytes(), &rec))
			got, _ := rec["trace_id"].(string)
			assert.Equal(t, tc.trace, got, "trace_id")
			got, _ = rec["invocation_trace_id"].(string)
			assert.Equal(t, tc.invTrace, got, "invocation_trace_id")
		})
	}
	assert.False(t, logx.ValidTraceHeader(strings.Repeat("a", 250)+";Root=1-67891233-abcdef012345678912345678"), "a header over 256 bytes")
}
