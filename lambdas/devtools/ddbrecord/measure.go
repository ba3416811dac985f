package ddbrecord

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/repo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Case is one API operation whose cost a test measures.
type Case struct {
	// Operation names the row: the route, plus the case when a route has
	// several ("GET /tickets?caller= (a second page)").
	Operation string
	Method    string
	// Path is called when the case runs, after the fixtures of earlier
	// cases exist.
	Path   func() string
	Body   string
	Header []string // name, value pairs
	Status int
	// Min is the least the access pattern needs: one request per item
	// read or written unless a batch or transaction is the pattern, and
	// capacity by DynamoDB's rounding (reads per 4 KB, halved when
	// eventually consistent; writes per 1 KB, once more per index holding
	// a copy; transactions double).
	Min Cost
	// Note states the access pattern, and why the cost is above Min when
	// it is.
	Note string
}

// Measure sends each case to h once, in order, and returns what rec
// recorded for it. The handler must use a client rec instruments.
// A wrong status, or a cost above Min without a Note, fails t.
func Measure(t testing.TB, h http.Handler, rec *Recorder, cases []Case) []Row {
	t.Helper()
	var rows []Row
	for _, c := range cases {
		rec.Reset()
		r := apitest.Do(t, h, c.Method, c.Path(), c.Body, c.Header...)
		require.Equal(t, c.Status, r.Status, "%s: status; body %s", c.Operation, r.Body)
		row := Row{Operation: c.Operation, Cost: rec.Total(), Min: c.Min, Note: c.Note}
		if row.Above() {
			assert.NotEmpty(t, c.Note, "%s costs %v, above the minimum %v: fix it, or say why in its Note", c.Operation, row.Cost, c.Min)
		}
		rows = append(rows, row)
	}
	return rows
}

// CheckServiceDoc compares the Cost table of docs/schemas/<service>.md with
// rows (UPDATE_COST=1 rewrites it) and logs the table.
func CheckServiceDoc(t testing.TB, service string, rows []Row) {
	t.Helper()
	table := Table(rows)
	t.Logf("%s cost per operation (DynamoDB Local, ReturnConsumedCapacity=TOTAL):\n%s", service, table)
	root, err := repo.Root("")
	require.NoError(t, err)
	assert.NoError(t, CheckDoc(filepath.Join(root, "docs", "schemas", service+".md"), table))
}
