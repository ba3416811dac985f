package services_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/lambdas/services"
)

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
		return map[string]string{"ITSM_TICKETS_TABLE": "t", "DYNAMODB_ENDPOINT": "http://127.0.0.1:1"}[k]
	})
	if err != nil || h == nil {
		t.Errorf("constructor: %v", err)
	}
}
