package localtrace_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dynastack/dynastack/lambdas/devtools/localtrace"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
)

// A new header is one logx takes (its Root is an X-Ray trace id), and two
// are two traces.
func TestNew(t *testing.T) {
	a, b := localtrace.New(), localtrace.New()
	assert.True(t, logx.ValidTraceHeader(a), "header %q", a)
	assert.NotEqual(t, logx.TraceID(logx.WithTrace(context.Background(), a)), logx.TraceID(logx.WithTrace(context.Background(), b)), "two new traces")
	assert.Equal(t, a, localtrace.Or(a), "a set header is kept")
	assert.True(t, logx.ValidTraceHeader(localtrace.Or("")), "no header: a new one")
}
