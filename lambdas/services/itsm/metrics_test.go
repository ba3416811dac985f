package itsm_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"testing"

	"github.com/dynastack/dynastack/constructs/itsm/contract"
	svc "github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/dynastack/dynastack/lambdas/platform/metrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A ticket's life is counted in the API's log (EMF): opened, moved to
// each status, commented; a refused change counts nothing.
func TestTicketMetrics(t *testing.T) {
	var logs bytes.Buffer
	s := newService(t, options{now: timeNow, log: logx.New(&logs, slog.LevelInfo).With(svc.MetricDimension, contract.API.Name)})
	tk := s.create(t, "sess-user-1", "printer on fire")
	r := s.Do(t, contract.AddComment.Method, contract.AddComment.URL(tk.TicketID), `{"comment_text":"on it"}`)
	require.Equal(t, http.StatusCreated, r.Status, "comment: %s", r.Body)
	for _, to := range []string{contract.StatusInProgress, contract.StatusResolved, contract.StatusClosed} {
		r := s.Do(t, contract.SetStatus.Method, contract.SetStatus.URL(tk.TicketID), `{"status":"`+to+`"}`)
		require.Equal(t, http.StatusOK, r.Status, "to %s: %s", to, r.Body)
	}
	r = s.Do(t, contract.SetStatus.Method, contract.SetStatus.URL(tk.TicketID), `{"status":"`+contract.StatusInProgress+`"}`)
	require.NotEqual(t, http.StatusOK, r.Status, "closed to in_progress is refused")
	r = s.Do(t, contract.AddComment.Method, contract.AddComment.URL(tk.TicketID), `{"comment_text":"again"}`)
	require.NotEqual(t, http.StatusCreated, r.Status, "a closed ticket takes no comment")

	ms, err := metrics.ParseLines(logs.Bytes())
	require.NoError(t, err, "EMF lines")
	for _, to := range []string{contract.StatusOpen, contract.StatusInProgress, contract.StatusResolved, contract.StatusClosed} {
		got := metrics.Find(ms, contract.TicketStatusChanges.Name, map[string]string{svc.MetricDimension: contract.API.Name, contract.DimTo: to})
		assert.Equal(t, 1.0, metrics.Sum(got), "tickets moved to %s", to)
	}
	assert.Equal(t, 1.0, metrics.Sum(metrics.Find(ms, contract.TicketComments.Name, map[string]string{svc.MetricDimension: contract.API.Name})), "comments")
}
