package stak_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/services/stak"
)

// The workers' DynamoDB cost, as docs/schemas/stak.md states it against
// the minimum of each access pattern: requests and capacity units per run
// and per message handled, as DynamoDB Local reports capacity.

// readAllUsers is how many users one setup publishes to (the publish
// limit), each with perUser user messages besides the inbox's public ones.
const (
	readAllUsers = stak.MaxRecipients
	perUser      = 10
	publicMsgs   = 10
)

func BenchmarkReadAll(b *testing.B) {
	var m ddbrecord.Recorder
	s := newService(b, &m)
	s.setup(b)
	cats := []string{"a", "b", ""}
	for i := range publicMsgs {
		s.toEveryone(b, fmt.Sprint("p", i), cats[i%3])
	}
	var (
		users []string
		batch int
	)
	m.Reset()
	marked := 0
	for b.Loop() {
		if len(users) == 0 {
			b.StopTimer()
			batch++
			for i := range readAllUsers {
				users = append(users, fmt.Sprintf("b%d-u%d", batch, i))
			}
			for i := range perUser {
				s.toUsers(b, fmt.Sprint("m", i), cats[i%3], users...)
			}
			m.Reset()
			b.StartTimer()
		}
		uid := users[0]
		users = users[1:]
		r := s.readAll(b, uid, `{}`)
		// Timed: the assertions only on the failure path.
		if r.Marked != perUser+publicMsgs || r.Next != "" {
			require.Equal(b, perUser+publicMsgs, r.Marked, "read-all of %s: marked", uid)
			require.Empty(b, r.Next, "read-all of %s: cursor", uid)
		}
		marked += r.Marked
	}
	report(b, &m, marked)
}

func BenchmarkRecount(b *testing.B) {
	var m ddbrecord.Recorder
	s := newService(b, &m)
	s.setup(b)
	cats := []string{"a", "b", ""}
	for i := range 50 {
		s.toUsers(b, fmt.Sprint("m", i), cats[i%3], "u1")
		s.toEveryone(b, fmt.Sprint("p", i), cats[i%3])
	}
	s.readAll(b, "u1", `{"limit":25}`)
	m.Reset()
	examined := 0
	for b.Loop() {
		// The break goes through the unmetered client.
		s.breakCounter(b, u1PK, "c#*", 1, 1)
		r := s.recount(b, `{"uid":"u1"}`)
		// Timed: the assertion only on the failure path.
		if len(r.Changes) != 1 {
			require.Len(b, r.Changes, 1, "recount of u1 after one broken counter: changes (%+v)", r)
		}
		examined += r.Examined
	}
	report(b, &m, examined)
}

// report adds the meter's figures per run and per item to the benchmark.
func report(b *testing.B, m *ddbrecord.Recorder, items int) {
	b.Helper()
	n := float64(b.N)
	b.ReportMetric(float64(m.Requests())/n, "requests/run")
	b.ReportMetric(m.Capacity()/n, "capacity/run")
	if items > 0 {
		b.ReportMetric(m.Capacity()/float64(items), "capacity/item")
	}
	b.Logf("%d runs, %d items: %s", b.N, items, strings.TrimSpace(m.String()))
}
