package agenticpm

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/constructs/service"
)

func TestConfigFromEnv(t *testing.T) {
	_, err := ConfigFromEnv(func(string) string { return "" })
	assert.Error(t, err, "missing table accepted")
	a, _ := ConfigFromEnv(func(k string) string { return map[string]string{contract.EnvTable: "AgenticPM-dev"}[k] })
	b, _ := ConfigFromEnv(func(k string) string {
		return map[string]string{contract.EnvTable: "AgenticPM-dev", service.EnvCursorKey: "secret"}[k]
	})
	assert.Equal(t, "AgenticPM-dev", a.Table, "table")
	assert.NotEmpty(t, a.CursorKey, "cursor key without %s", service.EnvCursorKey)
	assert.Equal(t, "secret", string(b.CursorKey), "cursor key from %s", service.EnvCursorKey)
}
