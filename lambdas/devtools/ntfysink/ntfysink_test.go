package ntfysink_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/ntfysink"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The sink keeps the newest ntfysink.Keep notifications: the local
// runner's sink lives as long as a developer's session.
func TestSinkKeepsNewest(t *testing.T) {
	s := ntfysink.New("", nil)
	n := ntfysink.Keep + 250
	for i := range n {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("POST", "/dev", strings.NewReader(fmt.Sprint("m", i))))
		require.Equal(t, http.StatusOK, w.Code, "publish %d: %s", i, w.Body)
	}
	got := s.Notifications()
	require.Len(t, got, ntfysink.Keep, "kept")
	assert.Equal(t, fmt.Sprint("m", 250), got[0].Message, "oldest kept")
	assert.Equal(t, fmt.Sprint("m", n-1), got[len(got)-1].Message, "newest kept")
	assert.Equal(t, n, s.Requests(), "requests")
	assert.Equal(t, n, s.Accepted(), "accepted")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest("POST", "/bad!topic", strings.NewReader("x")))
	assert.Equal(t, http.StatusBadRequest, w.Code, "a refused publish: status")
	assert.Equal(t, n+1, s.Requests(), "a refused publish: requests")
	assert.Equal(t, n, s.Accepted(), "a refused publish: accepted")
}
