package services_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/constructs/catalog"
	"github.com/dynastack/dynastack/lambdas/services"
)

// TestEveryContractFunctionIsBound: each function of every contract has
// exactly one binding, of its kind, and a main (cmd/<name>) that starts
// that binding; no binding or main is outside a contract.
func TestEveryContractFunctionIsBound(t *testing.T) {
	bound := map[string]int{}
	for _, b := range services.Functions() {
		bound[b.Function.Name]++
		if want, ok := catalog.Function(b.Function.Name); !ok {
			t.Errorf("binding %s is in no contract", b.Function.Name)
		} else if want.Kind != b.Function.Kind {
			t.Errorf("binding %s is of kind %s; its contract says %s", b.Function.Name, b.Function.Kind, want.Kind)
		}
	}
	for _, f := range catalog.Functions() {
		if bound[f.Name] != 1 {
			t.Errorf("function %s has %d bindings, want 1", f.Name, bound[f.Name])
		}
		main, err := os.ReadFile(filepath.Join("..", f.Package(), "main.go"))
		if err != nil {
			t.Errorf("function %s: %v", f.Name, err)
			continue
		}
		if !strings.Contains(string(main), "fn.Main(") {
			t.Errorf("%s/main.go does not start its binding with fn.Main", f.Package())
		}
	}
	mains, _ := filepath.Glob("../cmd/*/main.go")
	for _, m := range mains {
		name := filepath.Base(filepath.Dir(m))
		src, _ := os.ReadFile(m)
		if _, ok := catalog.Function(name); !ok && strings.Contains(string(src), "fn.Main(") {
			t.Errorf("cmd/%s starts a function that no contract declares", name)
		}
	}
}

func TestRegistry(t *testing.T) {
	if got := strings.Join(services.Names(), ","); got != "agenticpm,itsm,nucleus,rezagent,stak" {
		t.Errorf("Names = %s", got)
	}
	if _, ok := services.Lookup("stak-stream"); ok {
		t.Error("the stak stream consumer is registered as an HTTP service")
	}
	if _, ok := services.LookupConsumer("stak-stream"); !ok {
		t.Error("the stak stream consumer is not registered")
	}
	ctor, ok := services.Lookup("itsm")
	if !ok {
		t.Fatal("itsm not registered")
	}
	// Configuration errors surface at construction and name the variable.
	_, err := ctor(context.Background(), func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "ITSM_TICKETS_TABLE") {
		t.Errorf("constructor without env: %v", err)
	}
	h, err := ctor(context.Background(), func(k string) string {
		return map[string]string{"ITSM_TICKETS_TABLE": "t", "AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:1"}[k]
	})
	if err != nil || h == nil {
		t.Errorf("constructor: %v", err)
	}
}

func TestJobs(t *testing.T) {
	ctor, ok := services.LookupJob("nucleus-executor")
	if !ok {
		t.Fatal("nucleus-executor not registered")
	}
	if _, ok := services.LookupJob("nucleus"); ok {
		t.Error("the nucleus API is registered as a job")
	}
	_, err := ctor(context.Background(), func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "NUCLEUS_APP_TABLE") {
		t.Errorf("constructor without env: %v", err)
	}
	env := map[string]string{"NUCLEUS_APP_TABLE": "a", "NUCLEUS_AUDIT_TABLE": "b", "AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:1",
		"AWS_ENDPOINT_URL_STS": "http://127.0.0.1:2", "NUCLEUS_EXECUTOR_LOOKBACK": "soon"}
	if _, err := ctor(context.Background(), func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "NUCLEUS_EXECUTOR_LOOKBACK") {
		t.Errorf("bad look-back: %v", err)
	}
	env["NUCLEUS_EXECUTOR_LOOKBACK"] = "30m"
	if job, err := ctor(context.Background(), func(k string) string { return env[k] }); err != nil || job == nil {
		t.Errorf("constructor: %v", err)
	}
}
