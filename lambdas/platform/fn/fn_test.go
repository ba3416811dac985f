package fn_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
)

type job struct{}

func (job) Run(context.Context, fn.ScheduleEvent) error { return nil }

func TestBinding(t *testing.T) {
	sweeper := service.Function{Name: "sweeper", Kind: service.Schedule}
	b := fn.Schedule(sweeper, func(_ context.Context, getenv func(string) string, opts ...ddb.Option) (fn.Job, error) {
		if getenv("TABLE") == "" {
			return nil, fmt.Errorf("sweeper: TABLE is not set")
		}
		return job{}, nil
	})
	if b.Function.Name != "sweeper" {
		t.Errorf("binding of %q", b.Function.Name)
	}
	// What the binding builds comes from the getenv it is given, as in
	// Lambda (os.Getenv) and locally (the template's environment).
	if _, err := b.Build(t.Context(), func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "TABLE") {
		t.Errorf("Build without TABLE: %v", err)
	}
	v, err := b.Build(t.Context(), func(k string) string { return map[string]string{"TABLE": "t"}[k] })
	if _, ok := v.(fn.Job); err != nil || !ok {
		t.Errorf("Build = %T, %v; want a fn.Job", v, err)
	}
}

// A function bound as another kind than its contract says panics, naming
// both kinds.
func TestBindingKindFollowsTheContract(t *testing.T) {
	defer func() {
		if p := fmt.Sprint(recover()); !strings.Contains(p, `function api is of kind "http" in its contract, bound as "schedule"`) {
			t.Errorf("panic %q", p)
		}
	}()
	fn.Schedule(service.Function{Name: "api", Kind: service.HTTP}, func(context.Context, func(string) string, ...ddb.Option) (fn.Job, error) {
		return nil, nil
	})
}
