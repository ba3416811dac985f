package agenticpm

import (
	"testing"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/constructs/service"
)

func TestConfigFromEnv(t *testing.T) {
	if _, err := ConfigFromEnv(func(string) string { return "" }); err == nil {
		t.Error("missing table accepted")
	}
	a, _ := ConfigFromEnv(func(k string) string { return map[string]string{contract.EnvTable: "AgenticPM-dev"}[k] })
	b, _ := ConfigFromEnv(func(k string) string {
		return map[string]string{contract.EnvTable: "AgenticPM-dev", service.EnvCursorKey: "secret"}[k]
	})
	if a.Table != "AgenticPM-dev" || len(a.CursorKey) == 0 || string(b.CursorKey) != "secret" {
		t.Errorf("configs %+v %+v", a, b)
	}
}
