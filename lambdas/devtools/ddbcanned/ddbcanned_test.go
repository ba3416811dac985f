package ddbcanned_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/ddbcanned"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func TestReplay(t *testing.T) {
	srv := &server{}
	tr := ddbcanned.New(srv)
	assert.Error(t, tr.Replay(), "Replay with nothing recorded succeeded")
	tr = ddbcanned.New(srv)
	read(t, tr, "DynamoDB_20120810.GetItem")
	read(t, tr, "DynamoDB_20120810.PutItem")
	require.NoError(t, tr.Replay())
	// Round and round, in order, without the server.
	for i, want := range []string{"GetItem", "PutItem", "GetItem", "PutItem"} {
		assert.Contains(t, read(t, tr, "DynamoDB_20120810."+want), want, "replay %d: want the recorded answer", i)
	}
	assert.Equal(t, 2, srv.calls, "server calls")
	assert.Equal(t, 2, tr.Calls(), "tape calls")
	sent, received := tr.Bytes()
	assert.Equal(t, int64(8), sent, "bytes sent")
	assert.NotZero(t, received, "bytes received")
	// Another operation than the recorded one is an error, not a wrong answer.
	_, err := tr.Do(request("DynamoDB_20120810.Query", "{}"))
	assert.ErrorContains(t, err, "GetItem was recorded", "mismatched operation")
}
