package ddbcanned_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/ddbcanned"
)

// server answers every request with its target, counting them.
type server struct{ calls int }

func (s *server) Do(req *http.Request) (*http.Response, error) {
	s.calls++
	return &http.Response{StatusCode: 200, Header: http.Header{"X-Amz-Crc32": {"1"}}, Body: io.NopCloser(strings.NewReader(`{"from":"` + req.Header.Get("X-Amz-Target") + `"}`))}, nil
}

func request(target, body string) *http.Request {
	req, _ := http.NewRequest("POST", "http://dynamodb.local/", strings.NewReader(body))
	req.Header.Set("X-Amz-Target", target)
	return req
}

func read(t *testing.T, tr *ddbcanned.Transport, target string) string {
	t.Helper()
	resp, err := tr.Do(request(target, "{}"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func TestReplay(t *testing.T) {
	srv := &server{}
	tr := ddbcanned.New(srv)
	if err := tr.Replay(); err == nil {
		t.Error("Replay with nothing recorded succeeded")
	}
	tr = ddbcanned.New(srv)
	read(t, tr, "DynamoDB_20120810.GetItem")
	read(t, tr, "DynamoDB_20120810.PutItem")
	if err := tr.Replay(); err != nil {
		t.Fatal(err)
	}
	// Round and round, in order, without the server.
	for i, want := range []string{"GetItem", "PutItem", "GetItem", "PutItem"} {
		if got := read(t, tr, "DynamoDB_20120810."+want); !strings.Contains(got, want) {
			t.Errorf("replay %d = %s, want the recorded %s", i, got, want)
		}
	}
	if srv.calls != 2 || tr.Calls() != 2 {
		t.Errorf("server calls %d, tape %d; want 2 and 2", srv.calls, tr.Calls())
	}
	if sent, received := tr.Bytes(); sent != 8 || received == 0 {
		t.Errorf("bytes sent %d, received %d", sent, received)
	}
	// Another operation than the recorded one is an error, not a wrong answer.
	if _, err := tr.Do(request("DynamoDB_20120810.Query", "{}")); err == nil || !strings.Contains(err.Error(), "GetItem was recorded") {
		t.Errorf("mismatched operation: %v", err)
	}
}
