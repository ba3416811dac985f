package fn_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/stretchr/testify/assert"
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
	assert.Equal(t, "sweeper", b.Function.Name, "binding")
	// What the binding builds comes from the getenv it is given, as in
	// Lambda (os.Getenv) and locally (the template's environment).
	_, err := b.Build(t.Context(), func(string) string { return "" })
	assert.ErrorContains(t, err, "TABLE", "Build without TABLE")
	v, err := b.Build(t.Context(), func(k string) string { return map[string]string{"TABLE": "t"}[k] })
	assert.NoError(t, err, "Build")
	assert.Implements(t, (*fn.Job)(nil), v, "Build: want a fn.Job")
}

// A function bound as another kind than its contract says panics, naming
// both kinds.
func TestBindingKindFollowsTheContract(t *testing.T) {
	defer func() {
		assert.Contains(t, fmt.Sprint(recover()), `function api is of kind "http" in its contract, bound as "schedule"`, "panic")
	}()
	fn.Schedule(service.Function{Name: "api", Kind: service.HTTP}, func(context.Context, func(string) string, ...ddb.Option) (fn.Job, error) {
		return nil, nil
	})
}
