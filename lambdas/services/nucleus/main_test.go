package nucleus_test

import (
	"encoding/json"
	"fmt"
	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// endpoint is the DynamoDB Local the tests use, for the Example (which has
// no testing.TB to ask testenv with).
var endpoint string

// service is a Nucleus API on fresh tables created from the dev golden
// template, configured from the environment variables as in AWS. Its
// requests are testUser's.
type service struct {
	servicetest.Service
	tables nucleus.Tables
}

type options struct {
	now        func() time.Time
	newEntryID func(time.Time) string
	cloud      *nucleus.Cloud
}

// tableNames creates both tables and returns them by role.
func tableNames(t testing.TB) nucleus.Tables {
	t.Helper()
	_, names := testenv.Tables(t, testenv.Template(t, "dev", "nucleus"))
	return byRole(t, names)
}

// byRole finds the tables among names (logical id → name) by role.
func byRole(t testing.TB, names map[string]string) nucleus.Tables {
	t.Helper()
	var tables nucleus.Tables
	for id, name := range names {
		switch {
		case strings.HasPrefix(id, "App"):
			tables.App = name
		case strings.HasPrefix(id, "Audit"):
			tables.Audit = name
		}
	}
	require.NotEmpty(t, tables.App, "template tables %v: want App… and Audit…", names)
	require.NotEmpty(t, tables.Audit, "template tables %v: want App… and Audit…", names)
	return tables
}

func newService(t testing.TB, opts options) *service {
	t.Helper()
	endpoint = testenv.Endpoint(t)
	s := servicetest.Start(t, "nucleus", nil)
	tables := byRole(t, s.Tables)
	cfg := servicetest.Config(t, nucleus.ConfigFromEnv, map[string]string{contract.EnvAppTable: tables.App, contract.EnvAuditTable: tables.Audit})
	cfg.Client, cfg.Logger = servicetest.FunctionClient(t, "nucleus"), servicetest.Logger()
	cfg.Now, cfg.NewEntryID, cfg.Cloud = opts.now, opts.newEntryID, opts.cloud
	s.H = nucleus.NewHandler(cfg)
	s.Headers = []string{nucleus.HeaderUserID, testUser}
	return &service{Service: s, tables: cfg.Tables}
}

// newClock starts at the real time: DynamoDB Local runs TTL deletion, so
// audit entries written "in the past" would vanish under the tests.
func newClock(step time.Duration) *apitest.Clock {
	return apitest.NewClock(time.Now().UTC(), step)
}

const testUser = "alice@example.com"

// doAs sends a request with X-User-Id user ("" for none).
func (s *service) doAs(t testing.TB, user, method, path, body string) apitest.Response {
	t.Helper()
	if user == "" {
		return apitest.Do(t, s.Checked(t), method, path, body)
	}
	return apitest.Do(t, s.Checked(t), method, path, body, nucleus.HeaderUserID, user)
}

// items returns every item of table, read consistently.
func (s *service) items(t *testing.T, table string) []map[string]any {
	t.Helper()
	var items []map[string]any
	require.NoError(t, attributevalue.UnmarshalListOfMaps(s.Items(t, table), &items))
	return items
}

// counts returns the number of items in the app and audit tables.
func (s *service) counts(t *testing.T) (app, audit int) {
	t.Helper()
	return len(s.items(t, s.tables.App)), len(s.items(t, s.tables.Audit))
}

// wantCounts checks that the tables hold app and audit items.
func (s *service) wantCounts(t *testing.T, app, audit int) {
	t.Helper()
	a, b := s.counts(t)
	assert.Equal(t, app, a, "app table items")
	assert.Equal(t, audit, b, "audit table items")
}

func roleARN(account string) string { return "arn:aws:iam::" + account + ":role/NucleusRole" }

func ec2ARN(account string, n int) string {
	return fmt.Sprintf("arn:aws:ec2:us-east-1:%s:instance/i-%017x", account, n)
}

func (s *service) createAccount(t testing.TB, id, name, status string) nucleus.Account {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"account_id": id, "account_name": name, "role_arn": roleARN(id), "status": status})
	var a nucleus.Account
	s.Must(t, http.StatusCreated, contract.CreateAccount.Method, contract.CreateAccount.URL(), string(b), &a)
	return a
}

func (s *service) createSchedule(t testing.TB, name string) nucleus.Schedule {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"schedule_name": name, "start_cron": "0 8 * * MON-FRI", "end_cron": "0 18 * * MON-FRI",
		"timezone": "Europe/Berlin", "enabled": true})
	var sc nucleus.Schedule
	s.Must(t, http.StatusCreated, contract.CreateSchedule.Method, contract.CreateSchedule.URL(), string(b), &sc)
	return sc
}

func resourceBody(account, arn string) string {
	b, _ := json.Marshal(map[string]string{"resource_arn": arn, "resource_type": "ec2", "region": "us-east-1", "account_id": account})
	return string(b)
}

type auditPage struct {
	Entries    []nucleus.AuditEntry `json:"entries"`
	NextCursor string               `json:"next_cursor"`
}

func (s *service) audit(t testing.TB, path string) auditPage {
	t.Helper()
	var p auditPage
	s.Must(t, http.StatusOK, "GET", path, "", &p)
	return p
}
