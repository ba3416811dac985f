package ntfy_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/dynastack/dynastack/lambdas/devtools/ntfysink"
	"github.com/dynastack/dynastack/lambdas/services/rezagent/ntfy"
)

func TestPublish(t *testing.T) {
	sink := ntfysink.New("tk_secret", nil)
	srv := httptest.NewServer(sink)
	defer srv.Close()
	c := &ntfy.Client{Server: srv.URL + "/", Token: "tk_secret"}
	p, err := c.Publish(context.Background(), ntfy.Notification{Topic: "alerts", Message: "Disk <90%> full ✓", Title: "Ops", Priority: 5, Tags: []string{"warning"}, Click: "https://example.com"})
	if err != nil {
		t.Fatal(err)
	}
	got := sink.Notifications()
	if len(got) != 1 || got[0].ID != p.ID || got[0].Message != "Disk <90%> full ✓" || got[0].Title != "Ops" || got[0].Priority != 5 ||
		got[0].Tags[0] != "warning" || got[0].Click != "https://example.com" || got[0].Authorization != "Bearer tk_secret" {
		t.Fatalf("published %+v, sink %+v", p, got)
	}
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
			var se *ntfy.StatusError
			if err == nil || ntfy.IsRetryable(err) != tc.retryable || (tc.status != 0) != errors.As(err, &se) || (se != nil && se.Code != tc.status) {
				t.Fatalf("err %v (retryable %v), want status %d retryable %v", err, ntfy.IsRetryable(err), tc.status, tc.retryable)
			}
			if len(sink.Notifications()) != 0 {
				t.Fatal("a failed publish was accepted")
			}
		})
	}
	// A 2xx without an id is not ntfy: not retried.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<html>ok</html>") }))
	defer srv.Close()
	if _, err := (&ntfy.Client{Server: srv.URL}).Publish(context.Background(), ntfy.Notification{Topic: "t", Message: "m"}); !errors.Is(err, ntfy.ErrNoID) || ntfy.IsRetryable(err) {
		t.Fatalf("err %v", err)
	}
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
