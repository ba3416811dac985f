package fn_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
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
	_, err := fn.New(context.Background(), func(string) string { return "" }, fromEnv, set, build)
	require.Error(t, err, "configuration error not returned")
	getenv := func(k string) string {
		return map[string]string{"T": "t1", "AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:1"}[k]
	}
	got, err := fn.New(context.Background(), getenv, fromEnv, set, build)
	require.NoError(t, err)
	assert.Equal(t, "t1", got.table, "built table")
	if assert.IsType(t, &dynamodb.Client{}, got.client, "built client") {
		c := got.client.(*dynamodb.Client)
		if assert.NotNil(t, c.Options().BaseEndpoint, "built client's endpoint") {
			assert.Equal(t, "http://127.0.0.1:1", *c.Options().BaseEndpoint, "built client's endpoint")
		}
	}
}

func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	own := slog.New(slog.NewTextHandler(&buf, nil))
	assert.Same(t, own, fn.Logger("svc", &dynamodb.Client{}, own), "the given logger was replaced")
	assert.NotNil(t, fn.Logger("svc", &dynamodb.Client{}, nil), "no default logger")
	defer func() {
		r := recover()
		if assert.IsType(t, "", r, "nil client: recovered") {
			assert.Contains(t, r.(string), "svc: Config.Client is nil", "nil client: recovered")
		}
	}()
	fn.Logger("svc", nil, nil)
}
