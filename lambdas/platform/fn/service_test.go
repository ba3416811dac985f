package fn_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
)

func TestRequired(t *testing.T) {
	vars := []fn.Var{{Name: "A_TABLE", Names: "the a table"}, {Name: "B_TABLE", Names: "the b table"}}
	tests := []struct {
		name    string
		env     map[string]string
		want    []string
		wantErr string
	}{
		{"all set", map[string]string{"A_TABLE": "a", "B_TABLE": "b"}, []string{"a", "b"}, ""},
		{"one unset", map[string]string{"A_TABLE": "a"}, nil, "svc: not set: B_TABLE (the b table)"},
		{"every unset is named", nil, nil, "svc: not set: A_TABLE (the a table), B_TABLE (the b table)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := fn.Required("svc", func(k string) string { return tt.env[k] }, vars...)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("got %q, %v", got, err)
			}
		})
	}
}

type config struct {
	table  string
	client ddb.API
}

func TestNew(t *testing.T) {
	fromEnv := func(getenv func(string) string) (config, error) {
		if getenv("T") == "" {
			return config{}, errors.New("T unset")
		}
		return config{table: getenv("T")}, nil
	}
	set := func(c *config, a ddb.API) { c.client = a }
	build := func(c config) config { return c }
	if _, err := fn.New(context.Background(), func(string) string { return "" }, fromEnv, set, build); err == nil {
		t.Fatal("configuration error not returned")
	}
	getenv := func(k string) string {
		return map[string]string{"T": "t1", "AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:1"}[k]
	}
	got, err := fn.New(context.Background(), getenv, fromEnv, set, build)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := got.client.(*dynamodb.Client)
	if got.table != "t1" || !ok || *c.Options().BaseEndpoint != "http://127.0.0.1:1" {
		t.Errorf("built %+v", got)
	}
}

func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	own := slog.New(slog.NewTextHandler(&buf, nil))
	if fn.Logger("svc", &dynamodb.Client{}, own) != own {
		t.Error("the given logger was replaced")
	}
	if fn.Logger("svc", &dynamodb.Client{}, nil) == nil {
		t.Error("no default logger")
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "svc: Config.Client is nil") {
			t.Errorf("nil client: recovered %v", r)
		}
	}()
	fn.Logger("svc", nil, nil)
}
