package awsloop

import (
	"fmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// A fake keeps the newest DefaultKeep calls and events, so a long local
// session does not grow without bound (each rez_agent message is a
// Publish).
func TestKeepNewest(t *testing.T) {
	var s []int
	for i := range 10 * DefaultKeep {
		s = keepNewest(s, i, 0)
		require.Less(t, len(s), 2*DefaultKeep, "kept after %d appends", i+1)
	}
	got := newest(s, 0)
	require.Len(t, got, DefaultKeep, "newest")
	assert.Equal(t, 9*DefaultKeep, got[0], "newest: oldest kept")
	assert.Equal(t, 10*DefaultKeep-1, got[len(got)-1], "newest: newest kept")
	assert.Equal(t, "[1]", fmt.Sprint(newest(keepNewest(nil, 1, 3), 3)), "one element")
}

func TestServerKeepsNewestCalls(t *testing.T) {
	s := NewSNS()
	s.SetKeep(5)
	topic := "arn:aws:sns:us-east-1:111122223333:t"
	s.AddTopic(topic, func(Publication) {})
	for i := range 12 {
		body := url.Values{"Action": {"Publish"}, "Version": {"2010-03-31"}, "TopicArn": {topic}, "Message": {fmt.Sprint("m", i)}}.Encode()
		r := httptest.NewRequest("POST", "/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/sns/aws4_request, SignedHeaders=host, Signature=00")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		require.Equal(t, 200, w.Code, "publish %d: %s", i, w.Body)
	}
	calls := s.CallsOf("Publish")
	require.Len(t, calls, 5, "calls kept")
	assert.Equal(t, "m7", calls[0].Get("Message"), "oldest call kept")
	assert.Equal(t, "m11", calls[4].Get("Message"), "newest call kept")
}
