package ntfy_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/dynastack/dynastack/lambdas/devtools/ntfysink"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/dynastack/dynastack/lambdas/services/rezagent/ntfy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPublish(t *testing.T) {
	sink := ntfysink.New("tk_secret", nil)
	srv := httptest.NewServer(sink)
	defer srv.Close()
	c := &ntfy.Client{Server: srv.URL + "/", Token: "tk_secret"}
	p, err := c.Publish(context.Background(), ntfy.Notification{Topic: "alerts", Message: "Disk <90%> full ✓", Title: "Ops", Priority: 5, Tags: []string{"warning"}, Click: "https://example.com"})
	require.NoError(t, err)
	got := sink.Notifications()
	require.Len(t, got, 1, "notifications the sink received")
	n := got[0]
	assert.Equal(t, p.ID, n.ID, "id")
	assert.Equal(t, "Disk <90%> full ✓", n.Message, "message")
	assert.Equal(t, "Ops", n.Title, "title")
	assert.Equal(t, 5, n.Priority, "priority")
	if assert.NotEmpty(t, n.Tags, "tags") {
		assert.Equal(t, "warning", n.Tags[0], "tags")
	}
	assert.Equal(t, "https://example.com", n.Click, "click")
	assert.Equal(t, "Bearer tk_secret", n.Authorization, "authorization")
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fault     ntfysink.Fault
		token     string
		retryable bool
		status    int
	}{
		{"5xx", ntfysink.Fault{Status: 502}, "tk", true, 502},
		{"429", ntfysink.Fault{Status: 429}, "tk", true, 429},
		{"408", ntfysink.Fault{Status: 408}, "tk", true, 408},
		{"timeout", ntfysink.Fault{Delay: time.Second}, "tk", true, 0},
		{"400", ntfysink.Fault{Status: 400}, "tk", false, 400},
		{"wrong token", ntfysink.Fault{}, "tk_wrong", false, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := ntfysink.New("tk", nil)
			sink.FailNext(tc.fault)
			srv := httptest.NewServer(sink)
			defer srv.Close()
			c := &ntfy.Client{Server: srv.URL, Token: tc.token, Timeout: 100 * time.Millisecond}
			_, err := c.Publish(context.Background(), ntfy.Notification{Topic: "t", Message: "m"})
			require.Error(t, err)
			require.Equal(t, tc.retryable, ntfy.IsRetryable(err), "retryable: %v", err)
			var se *ntfy.StatusError
			if tc.status != 0 {
				require.ErrorAs(t, err, &se)
				require.Equal(t, tc.status, se.Code, "status of %v", err)
			} else {
				require.NotErrorAs(t, err, &se)
			}
			require.Empty(t, sink.Notifications(), "a failed publish was accepted")
		})
	}
	// A 2xx without an id is not ntfy: not retried.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<html>ok</html>") }))
	defer srv.Close()
	_, err := (&ntfy.Client{Server: srv.URL}).Publish(context.Background(), ntfy.Notification{Topic: "t", Message: "m"})
	require.ErrorIs(t, err, ntfy.ErrNoID)
	require.False(t, ntfy.IsRetryable(err), "retryable: %v", err)
}

func ExampleClient_Publish() {
	srv := httptest.NewServer(ntfysink.New("", nil)) // stands in for https://ntfy.sh
	defer srv.Close()
	c := &ntfy.Client{Server: srv.URL}
	p, err := c.Publish(context.Background(), ntfy.Notification{Topic: "rez-agent-dev", Message: "hello world", Priority: ntfy.Priorities["default"], Tags: []string{"scheduled"}})
	if err != nil {
		fmt.Println(err, ntfy.IsRetryable(err))
		return
	}
	fmt.Println(p.Topic, p.Event, len(p.ID))
	// Output: rez-agent-dev message 12
}

// The message's trace header goes to ntfy as X-Amzn-Trace-Id (a load
// balancer in front of ntfy logs it); without one, no header.
func TestPublishSendsTheTraceHeader(t *testing.T) {
	const header = "Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad8;Sampled=1"
	t.Setenv(logx.EnvTraceID, "")
	sink := ntfysink.New("", nil)
	srv := httptest.NewServer(sink)
	defer srv.Close()
	c := &ntfy.Client{Server: srv.URL}
	for _, ctx := range []context.Context{logx.WithTrace(context.Background(), header), context.Background()} {
		_, err := c.Publish(ctx, ntfy.Notification{Topic: "alerts", Message: "m"})
		require.NoError(t, err)
	}
	got := sink.Notifications()
	require.Len(t, got, 2, "notifications the sink received")
	assert.Equal(t, header, got[0].TraceHeader, "traced publish: X-Amzn-Trace-Id")
	assert.Empty(t, got[1].TraceHeader, "untraced publish: X-Amzn-Trace-Id")
}
