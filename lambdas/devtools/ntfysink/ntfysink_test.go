package ntfysink_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/ntfysink"
)

// The sink keeps the newest ntfysink.Keep notifications: the local
// runner's sink lives as long as a developer's session.
func TestSinkKeepsNewest(t *testing.T) {
	s := ntfysink.New("", nil)
	n := ntfysink.Keep + 250
	for i := range n {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("POST", "/dev", strings.NewReader(fmt.Sprint("m", i))))
		if w.Code != http.StatusOK {
			t.Fatalf("publish %d: %d %s", i, w.Code, w.Body)
		}
	}
	got := s.Notifications()
	if len(got) != ntfysink.Keep || got[0].Message != fmt.Sprint("m", 250) || got[len(got)-1].Message != fmt.Sprint("m", n-1) {
		t.Errorf("%d kept, %q … %q", len(got), got[0].Message, got[len(got)-1].Message)
	}
	if s.Requests() != n || s.Accepted() != n {
		t.Errorf("requests %d, accepted %d, want %d", s.Requests(), s.Accepted(), n)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest("POST", "/bad!topic", strings.NewReader("x")))
	if w.Code != http.StatusBadRequest || s.Requests() != n+1 || s.Accepted() != n {
		t.Errorf("a refused publish: %d, requests %d, accepted %d", w.Code, s.Requests(), s.Accepted())
	}
}
