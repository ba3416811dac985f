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
)

func TestRequestIDAttached(t *testing.T) {
	var buf bytes.Buffer
	log := logx.New(&buf, slog.LevelInfo).With("service", "itsm")
	ctx := logx.WithRequestID(context.Background(), "req-1")
	log.InfoContext(ctx, "hello", "n", 1)
	log.InfoContext(context.Background(), "no id")

	dec := json.NewDecoder(&buf)
	var first, second map[string]any
	if err := dec.Decode(&first); err != nil {
		t.Fatal(err)
	}
	if err := dec.Decode(&second); err != nil {
		t.Fatal(err)
	}
	if first["request_id"] != "req-1" || first["service"] != "itsm" || first["msg"] != "hello" {
		t.Errorf("first record = %v", first)
	}
	if _, ok := second["request_id"]; ok {
		t.Errorf("second record has request_id: %v", second)
	}
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
	if len(lines) != 2 {
		t.Fatalf("got %d lines: %s", len(lines), buf.Bytes())
	}
	if got := bytes.Count(lines[0], []byte(`"service":`)); got != 1 {
		t.Errorf("service key %d times: %s", got, lines[0])
	}
	if got := bytes.Count(lines[0], []byte(`"table":`)); got != 1 {
		t.Errorf("table key %d times: %s", got, lines[0])
	}
	var first map[string]any
	if err := json.Unmarshal(lines[0], &first); err != nil {
		t.Fatal(err)
	}
	if first["service"] != "stak-stream" || first["table"] != "t1" || first["n"] != float64(1) {
		t.Errorf("first line = %v", first)
	}
	var second map[string]any
	if err := json.Unmarshal(lines[1], &second); err != nil {
		t.Fatal(err)
	}
	if g, _ := second["g"].(map[string]any); second["service"] != "stak-stream" || g["service"] != "inner" {
		t.Errorf("grouped line = %v", second)
	}
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
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("%v: %s", err, buf.Bytes())
	}
	if rec["level"] != "ERROR" || rec["service"] != "itsm" || !strings.Contains(rec["msg"].(string), "boom") {
		t.Errorf("record = %v", rec)
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
			if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
				t.Fatal(err)
			}
			if rec["correlation_id"] != "corr-1" {
				t.Errorf("correlation_id = %v", rec["correlation_id"])
			}
			if got, _ := rec["trace_id"].(string); got != tc.trace {
				t.Errorf("trace_id = %q, want %q", got, tc.trace)
			}
		})
	}
}
