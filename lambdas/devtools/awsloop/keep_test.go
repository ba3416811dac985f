package awsloop

import (
	"fmt"
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
		if len(s) >= 2*DefaultKeep {
			t.Fatalf("%d kept after %d appends", len(s), i+1)
		}
	}
	got := newest(s, 0)
	if len(got) != DefaultKeep || got[0] != 9*DefaultKeep || got[len(got)-1] != 10*DefaultKeep-1 {
		t.Errorf("newest: %d elements, %d … %d", len(got), got[0], got[len(got)-1])
	}
	if got := newest(keepNewest(nil, 1, 3), 3); fmt.Sprint(got) != "[1]" {
		t.Errorf("one element: %v", got)
	}
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
		if w.Code != 200 {
			t.Fatalf("publish %d: %d %s", i, w.Code, w.Body)
		}
	}
	calls := s.CallsOf("Publish")
	if len(calls) != 5 || calls[0].Get("Message") != "m7" || calls[4].Get("Message") != "m11" {
		t.Errorf("calls kept: %d %v", len(calls), calls)
	}
}
