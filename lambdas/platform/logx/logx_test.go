package logx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
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
