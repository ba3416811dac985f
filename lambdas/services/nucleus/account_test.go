package nucleus_test

import (
	"fmt"
	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	dynastack "github.com/dynastack/dynastack/constructs/service"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var tsPattern = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`)

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{"both", map[string]string{contract.EnvAppTable: "a", contract.EnvAuditTable: "b"}, ""},
		{"no app", map[string]string{contract.EnvAuditTable: "b"}, contract.EnvAppTable},
		{"no audit", map[string]string{contract.EnvAppTable: "a"}, contract.EnvAuditTable},
		{"none", nil, contract.EnvAppTable + " (NucleusAppTable-<stage>), " + contract.EnvAuditTable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := nucleus.ConfigFromEnv(func(k string) string { return tt.env[k] })
			if tt.wantErr == "" {
				require.NoError(t, err)
				require.Equal(t, nucleus.Tables{App: "a", Audit: "b"}, cfg.Tables, "tables")
				require.NotEmpty(t, cfg.CursorKey, "cursor key")
				return
			}
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
	key := func(env map[string]string) string {
		cfg, _ := nucleus.ConfigFromEnv(func(k string) string { return env[k] })
		return string(cfg.CursorKey)
	}
	base := map[string]string{contract.EnvAppTable: "a", contract.EnvAuditTable: "b"}
	assert.NotEqual(t, key(base), key(map[string]string{contract.EnvAppTable: "a2", contract.EnvAuditTable: "b"}),
		"derived cursor key does not depend on the table")
	assert.Equal(t, "secret", key(map[string]string{contract.EnvAppTable: "a", contract.EnvAuditTable: "b", dynastack.EnvCursorKey: "secret"}),
		"DYNASTACK_CURSOR_KEY ignored")
}

func TestCreateAccount(t *testing.T) {
	s := newService(t, options{})
	const id = "123456789012"
	valid := func(fields ...string) string {
		m := map[string]string{"account_id": id, "account_name": "Dev", "role_arn": roleARN(id)}
		for i := 0; i < len(fields); i += 2 {
			m[fields[i]] = fields[i+1]
		}
		parts := []string{}
		for k, v := range m {
			parts = append(parts, fmt.Sprintf("%q:%q", k, v))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	tests := []struct {
		name, user, body string
		status           int
		code, field      string
	}{
		{"valid", testUser, valid(), 201, "", ""},
		{"inactive", testUser, valid("account_id", "210987654321", "role_arn", roleARN("210987654321"), "status", "inactive"), 201, "", ""},
		{"gov partition", testUser, valid("account_id", "111111111111", "role_arn", "arn:aws-us-gov:iam::111111111111:role/Nucleus-Role_1"), 201, "", ""},
		// IAM's * spans '/': a role under a path would match the executor's
		// role pattern while naming another role.
		{"role with path", testUser, valid("account_id", "222222222222", "role_arn", "arn:aws:iam::222222222222:role/ops/team/Nucleus-Role_1"), 400, "validation_failed", "role_arn"},
		{"role under a pattern-matching path", testUser, valid("account_id", "222222222222", "role_arn", "arn:aws:iam::222222222222:role/nucleus-executor-x/OrgAdmin"), 400, "validation_failed", "role_arn"},
		{"caller-chosen external id", testUser, valid("account_id", "222222222222", "role_arn", roleARN("222222222222"), "external_id", "tenant-a"), 400, "validation_failed", "external_id"},
		{"empty external id", testUser, valid("account_id", "222222222222", "role_arn", roleARN("222222222222"), "external_id", ""), 400, "validation_failed", "external_id"},
		{"duplicate", testUser, valid("account_name", "Other"), 409, "conflict", ""},
		{"empty body", testUser, ``, 400, "bad_request", ""},
		{"null body", testUser, `null`, 400, "bad_request", ""},
		{"array body", testUser, `[]`, 400, "bad_request", ""},
		{"malformed", testUser, `{"account_id":`, 400, "bad_request", ""},
		{"unknown field", testUser, `{"account_id":"222222222222","account_name":"a","role_arn":"` + roleARN("222222222222") + `","owner":"x"}`, 400, "validation_failed", "owner"},
		{"client-chosen created_at", testUser, `{"account_id":"222222222222","account_name":"a","role_arn":"` + roleARN("222222222222") + `","created_at":"x"}`, 400, "validation_failed", "created_at"},
		{"numeric account id", testUser, `{"account_id":123456789012,"account_name":"a","role_arn":"x"}`, 400, "validation_failed", "account_id"},
		{"missing account id", testUser, `{"account_name":"a","role_arn":"` + roleARN("222222222222") + `"}`, 400, "validation_failed", "account_id"},
		{"short account id", testUser, valid("account_id", "12345"), 400, "validation_failed", "account_id"},
		{"account id with letters", testUser, valid("account_id", "12345678901a"), 400, "validation_failed", "account_id"},
		{"null name", testUser, `{"account_id":"222222222222","account_name":null,"role_arn":"` + roleARN("222222222222") + `"}`, 400, "validation_failed", "account_name"},
		{"blank name", testUser, valid("account_id", "222222222222", "role_arn", roleARN("222222222222"), "account_name", "   "), 400, "validation_failed", "account_name"},
		{"padded name", testUser, valid("account_id", "222222222222", "role_arn", roleARN("222222222222"), "account_name", " Dev"), 400, "validation_failed", "account_name"},
		{"name too long", testUser, valid("account_id", "222222222222", "role_arn", roleARN("222222222222"), "account_name", strings.Repeat("n", nucleus.MaxNameChars+1)), 400, "validation_failed", "account_name"},
		{"name of 4-byte characters", testUser, valid("account_id", "444444444444", "role_arn", roleARN("444444444444"), "account_name", strings.Repeat("😀", nucleus.MaxNameChars)), 201, "", ""},
		{"name with control char", testUser, `{"account_id":"222222222222","account_name":"a\u0007","role_arn":"` + roleARN("222222222222") + `"}`, 400, "validation_failed", "account_name"},
		{"missing role", testUser, `{"account_id":"222222222222","account_name":"a"}`, 400, "validation_failed", "role_arn"},
		{"user arn not role", testUser, valid("account_id", "222222222222", "role_arn", "arn:aws:iam::222222222222:user/bob"), 400, "validation_failed", "role_arn"},
		{"role with region", testUser, valid("account_id", "222222222222", "role_arn", "arn:aws:iam:us-east-1:222222222222:role/x"), 400, "validation_failed", "role_arn"},
		{"role name too long", testUser, valid("account_id", "222222222222", "role_arn", "arn:aws:iam::222222222222:role/"+strings.Repeat("r", 65)), 400, "validation_failed", "role_arn"},
		{"role of another account", testUser, valid("account_id", "222222222222", "role_arn", roleARN("333333333333")), 400, "validation_failed", "role_arn"},
		{"unknown status", testUser, valid("account_id", "222222222222", "role_arn", roleARN("222222222222"), "status", "ACTIVE"), 400, "validation_failed", "status"},
		{"no user", "", valid("account_id", "222222222222", "role_arn", roleARN("222222222222")), 400, "validation_failed", nucleus.HeaderUserID},
		{"user with space", "a b", valid("account_id", "222222222222", "role_arn", roleARN("222222222222")), 400, "validation_failed", nucleus.HeaderUserID},
		{"body too large", testUser, valid("account_id", "222222222222", "account_name", strings.Repeat("x", 70<<10)), 413, "too_large", ""},
	}
	created := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.doAs(t, tt.user, contract.CreateAccount.Method, contract.CreateAccount.URL(), tt.body)
			if tt.status != 201 {
				apitest.WantError(t, r, tt.status, tt.code, tt.field, "")
				return
			}
			created++
			require.Equal(t, 201, r.Status, "status: %s", r.Body)
			var a nucleus.Account
			r.JSON(t, &a)
			var shown struct {
				ExternalID string `json:"external_id"`
			}
			r.JSON(t, &shown)
			assert.Regexp(t, `^nucleus-[0-9a-f]{48}$`, shown.ExternalID, "external id: want a generated one, shown once")
			assert.True(t, a.ExternalIDSet, "external id set")
			assert.Equal(t, strings.TrimPrefix(contract.GetAccount.URL(a.AccountID), "/"), r.Header.Get("Location"), "Location")
			assert.Regexp(t, tsPattern, a.CreatedAt, "created_at")
			assert.Equal(t, a.CreatedAt, a.UpdatedAt, "updated_at of a new account")
			assert.Empty(t, a.LastTestRunAt, "last_test_run_at of a new account")
			if a.AccountID == id {
				assert.Equal(t, nucleus.AccountActive, a.Status, "default status")
			}
		})
	}
	// Every accepted account wrote one item and one audit entry; nothing
	// rejected wrote anything.
	s.wantCounts(t, created, created)
	p := s.audit(t, contract.EntityLog.URL("account", id))
	require.Len(t, p.Entries, 1, "audit of %s", id)
	e := p.Entries[0]
	assert.Equal(t, nucleus.ActionCreate, e.Action, "audit of %s: action", id)
	assert.Equal(t, testUser, e.UserID, "audit of %s: user", id)
	assert.Equal(t, nucleus.StatusSuccess, e.Status, "audit of %s: status", id)
	assert.Contains(t, string(e.Details), `"account_name":"Dev"`, "audit of %s: details", id)
}

func TestGetAccount(t *testing.T) {
	s := newService(t, options{})
	a := s.createAccount(t, "123456789012", "Dev", "active")
	tests := []struct {
		name, id string
		status   int
	}{
		{"existing", a.AccountID, 200},
		{"unknown", "999999999999", 404},
		{"malformed", "abc", 404},
		{"too long", strings.Repeat("1", 3000), 400}, // over the platform's key bound
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, contract.GetAccount.Method, contract.GetAccount.URL(tt.id), "")
			if tt.status == 400 {
				apitest.WantError(t, r, 400, "validation_failed", "id", "")
				return
			}
			if tt.status != 200 {
				apitest.WantError(t, r, tt.status, "not_found", "", "")
				return
			}
			var got nucleus.Account
			r.JSON(t, &got)
			assert.Equal(t, a, got)
		})
	}
	t.Run("wrong method", func(t *testing.T) {
		r := s.Do(t, "PUT", contract.GetAccount.URL(a.AccountID), "")
		apitest.WantError(t, r, 405, "method_not_allowed", "", "")
		assert.Contains(t, r.Header.Get("Allow"), "PATCH", "Allow")
	})
}

func TestUpdateAccount(t *testing.T) {
	c := newClock(time.Second)
	s := newService(t, options{now: c.Now})
	const id = "123456789012"
	a := s.createAccount(t, id, "Dev", "active")
	s.createAccount(t, "210987654321", "Beta", "active")

	var got nucleus.Account
	s.MustRoute(t, 200, contract.UpdateAccount, `{"account_name":"Alpha","status":"inactive"}`, &got, id)
	assert.Equal(t, "Alpha", got.AccountName, "updated name")
	assert.Equal(t, nucleus.AccountInactive, got.Status, "updated status")
	assert.Equal(t, a.RoleARN, got.RoleARN, "role after update")
	assert.Equal(t, a.CreatedAt, got.CreatedAt, "created_at after update")
	assert.Greater(t, got.UpdatedAt, a.UpdatedAt, "updated_at moves forward")
	var g2 nucleus.Account
	s.MustRoute(t, 200, contract.GetAccount, "", &g2, id)
	assert.Equal(t, got, g2, "GET after PATCH")
	// The rename moved the account in the alphabetical list.
	assert.Equal(t, []string{"Alpha", "Beta"}, accountNames(t, s, ""), "list")
	p := s.audit(t, contract.EntityLog.URL("account", id))
	if assert.Len(t, p.Entries, 2, "audit") {
		assert.Equal(t, nucleus.ActionUpdate, p.Entries[0].Action, "audit: action")
		assert.Equal(t, `{"changes":{"account_name":{"old":"Dev","new":"Alpha"},"status":{"old":"active","new":"inactive"}}}`,
			string(p.Entries[0].Details), "audit: details")
	}

	_, auditBefore := s.counts(t)
	s.MustRoute(t, 200, contract.UpdateAccount, `{"account_name":"Alpha"}`, &got, id)
	_, after := s.counts(t)
	assert.Equal(t, auditBefore, after, "a patch that changes nothing wrote an audit entry")

	tests := []struct {
		name, id, body string
		status         int
		code, field    string
	}{
		{"unknown account", "999999999999", `{"status":"active"}`, 404, "not_found", ""},
		{"malformed id", "x", `{"status":"active"}`, 404, "not_found", ""},
		{"empty patch", id, `{}`, 400, "bad_request", ""},
		{"null body", id, `null`, 400, "bad_request", ""},
		{"null name", id, `{"account_name":null}`, 400, "validation_failed", "account_name"},
		{"numeric name", id, `{"account_name":5}`, 400, "validation_failed", "account_name"},
		{"blank name", id, `{"account_name":""}`, 400, "validation_failed", "account_name"},
		{"role of another account", id, `{"role_arn":"` + roleARN("333333333333") + `"}`, 400, "validation_failed", "role_arn"},
		{"bad status", id, `{"status":"gone"}`, 400, "validation_failed", "status"},
		{"key field", id, `{"account_id":"999999999999"}`, 400, "validation_failed", "account_id"},
		{"last_test_run_at is not writable", id, `{"last_test_run_at":"2026-01-01T00:00:00.000000Z"}`, 400, "validation_failed", "last_test_run_at"},
		{"caller-chosen external id", id, `{"external_id":"mine"}`, 400, "validation_failed", "external_id"},
		{"external id removed", id, `{"external_id":""}`, 400, "validation_failed", "external_id"},
		{"rotate false", id, `{"rotate_external_id":false}`, 400, "validation_failed", "rotate_external_id"},
		{"role with path", id, `{"role_arn":"arn:aws:iam::` + id + `:role/nucleus-executor-x/OrgAdmin"}`, 400, "validation_failed", "role_arn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, contract.UpdateAccount.Method, contract.UpdateAccount.URL(tt.id), tt.body), tt.status, tt.code, tt.field, "")
		})
	}
	// A refused update creates no phantom account and no audit entry.
	s.wantCounts(t, 2, 3)
}

func accountNames(t *testing.T, s *service, query string) []string {
	t.Helper()
	var names []string
	for cur := ""; ; {
		var p nucleus.AccountPage
		s.Must(t, 200, contract.ListAccounts.Method, contract.ListAccounts.URL()+"?"+query+"&cursor="+cur, "", &p)
		for _, a := range p.Accounts {
			names = append(names, a.AccountName)
		}
		if p.Next == "" {
			return names
		}
		cur = p.Next
	}
}

func TestListAccounts(t *testing.T) {
	s := newService(t, options{})
	// 23 accounts; every third one is inactive. Names sort by bytes.
	var all, active []string
	for i := range 23 {
		id := fmt.Sprintf("1000000000%02d", i)
		name := fmt.Sprintf("acct-%02d", 22-i)
		status := "active"
		if i%3 == 0 {
			status = "inactive"
		} else {
			active = append([]string{name}, active...)
		}
		all = append([]string{name}, all...)
		s.createAccount(t, id, name, status)
	}

	type pageShape struct {
		query string
		sizes []int
		want  []string
	}
	for _, tt := range []pageShape{
		{"limit=10", []int{10, 10, 3}, all},
		{"limit=23", []int{23}, all},
		{"limit=5&status=active", []int{5, 5, 5}, active}, // 15 active: no empty 4th page
		{"limit=4&status=active", []int{4, 4, 4, 3}, active},
		{"status=inactive", []int{8}, nil},
		{"limit=100", []int{23}, all},
	} {
		t.Run(tt.query, func(t *testing.T) {
			var got []string
			cur := ""
			for i := 0; ; i++ {
				var p nucleus.AccountPage
				s.Must(t, 200, contract.ListAccounts.Method, contract.ListAccounts.URL()+"?"+tt.query+"&cursor="+cur, "", &p)
				require.Less(t, i, len(tt.sizes), "page %d: want sizes %v", i, tt.sizes)
				require.Len(t, p.Accounts, tt.sizes[i], "page %d: want sizes %v", i, tt.sizes)
				for _, a := range p.Accounts {
					got = append(got, a.AccountName)
					if strings.Contains(tt.query, "status=active") {
						assert.Equal(t, nucleus.AccountActive, a.Status, "filtered list returned %+v", a)
					}
				}
				if p.Next == "" {
					require.Equal(t, len(tt.sizes), i+1, "pages")
					break
				}
				cur = p.Next
			}
			if tt.want != nil {
				assert.Equal(t, tt.want, got, "order")
			}
		})
	}

	var p nucleus.AccountPage
	s.Must(t, 200, contract.ListAccounts.Method, contract.ListAccounts.URLQuery(dynastack.Values{dynastack.Limit: "2", contract.ParamStatus: "active"}), "", &p)
	filtered := p.Next
	s.Must(t, 200, contract.ListAccounts.Method, contract.ListAccounts.URLQuery(dynastack.Values{dynastack.Limit: "2"}), "", &p)
	unfiltered := p.Next
	var sp nucleus.SchedulePage
	sc := s.createSchedule(t, "a")
	s.createSchedule(t, "b")
	s.Must(t, 200, contract.ListSchedules.Method, contract.ListSchedules.URLQuery(dynastack.Values{dynastack.Limit: "1"}), "", &sp)
	_ = sc
	tampered := []byte(unfiltered)
	tampered[len(tampered)/2] ^= 0x01
	if c := tampered[len(tampered)/2]; c == '-' || c == '_' || c < '0' {
		tampered[len(tampered)/2] = 'A'
	}
	tests := []struct {
		name, query string
		code, field string
	}{
		{"filtered cursor without filter", "cursor=" + filtered, "bad_request", ""},
		{"unfiltered cursor with filter", "status=active&cursor=" + unfiltered, "bad_request", ""},
		{"inactive filter with active cursor", "status=inactive&cursor=" + filtered, "bad_request", ""},
		{"schedule cursor", "cursor=" + sp.Next, "bad_request", ""},
		{"tampered cursor", "cursor=" + string(tampered), "bad_request", ""},
		{"garbage cursor", "cursor=bm90IGEgY3Vyc29y", "bad_request", ""},
		{"huge cursor", "cursor=" + strings.Repeat("A", 5000), "bad_request", ""},
		{"unknown status", "status=gone", "validation_failed", "status"},
		{"empty status", "status=", "validation_failed", "status"},
		{"misspelt parameter", "stauts=active", "validation_failed", "stauts"},
		{"repeated parameter", "status=active&status=inactive", "validation_failed", "status"},
		{"limit zero", "limit=0", "validation_failed", "limit"},
		{"limit too big", "limit=101", "validation_failed", "limit"},
		{"limit not a number", "limit=ten", "validation_failed", "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, contract.ListAccounts.Method, contract.ListAccounts.URL()+"?"+tt.query, ""), 400, tt.code, tt.field, "")
		})
	}
	if p := (nucleus.AccountPage{}); true {
		s.Must(t, 200, contract.ListAccounts.Method, contract.ListAccounts.URL()+"?cursor="+unfiltered+"&limit=50", "", &p)
		assert.Len(t, p.Accounts, 21, "cursor with another limit: accounts")
		assert.Empty(t, p.Next, "cursor with another limit: next")
	}
}

func TestEmptyLists(t *testing.T) {
	s := newService(t, options{})
	for _, path := range []string{contract.ListAccounts.URL(), contract.ListAccounts.URLQuery(dynastack.Values{contract.ParamStatus: "active"}), contract.ListSchedules.URL(), contract.Timeline.URL(), contract.GlobalLog.URL()} {
		r := s.Do(t, "GET", path, "")
		assert.Equal(t, 200, r.Status, "GET %s: %s", path, r.Body)
		assert.Regexp(t, `^\{"\w+":\[\]\}\n$`, string(r.Body), "GET %s", path)
	}
	_ = http.StatusOK
}

// A filter that matches nothing for a long stretch: one request reads a
// bounded number of rounds, then answers a short page whose cursor goes on
// from where it stopped (more items remain to be examined), never a cursor
// to nothing.
func TestListAccountsBoundedScan(t *testing.T) {
	s := newService(t, options{})
	for i := range 40 {
		s.createAccount(t, fmt.Sprintf("1000000000%02d", i), fmt.Sprintf("a-%02d", i), "inactive")
	}
	s.createAccount(t, "200000000000", "z-last", "active")
	var pages, empty int
	var got []string
	for cur := ""; ; pages++ {
		var p nucleus.AccountPage
		s.Must(t, 200, contract.ListAccounts.Method, contract.ListAccounts.URL()+"?status=active&limit=1&cursor="+cur, "", &p)
		for _, a := range p.Accounts {
			got = append(got, a.AccountName)
		}
		if len(p.Accounts) == 0 {
			empty++
		}
		if p.Next == "" {
			break
		}
		cur = p.Next
	}
	assert.Equal(t, []string{"z-last"}, got, "accounts")
	assert.NotZero(t, empty, "empty pages in %d pages", pages+1)
	assert.LessOrEqual(t, pages+1, 4, "pages")
}

// With the role pattern infra configures, an account naming a role IAM
// would not let Nucleus assume is refused before anything is stored.
func TestRolePattern(t *testing.T) {
	tables := tableNames(t)
	env := map[string]string{contract.EnvAppTable: tables.App, contract.EnvAuditTable: tables.Audit, contract.EnvRolePattern: "nucleus-executor-*"}
	cfg, err := nucleus.ConfigFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	cfg.Client = testenv.ServiceClient(t, "nucleus")
	h := nucleus.NewHandler(cfg)
	post := func(role string) apitest.Response {
		return apitest.Do(t, h, contract.CreateAccount.Method, contract.CreateAccount.URL(), `{"account_id":"123456789012","account_name":"A","role_arn":"`+role+`"}`, nucleus.HeaderUserID, testUser)
	}
	for _, role := range []string{"arn:aws:iam::123456789012:role/NucleusRole", "arn:aws:iam::123456789012:role/nucleus-executor"} {
		apitest.WantError(t, post(role), 400, "validation_failed", "role_arn", "nucleus-executor-*")
	}
	// A path is refused whatever the pattern: nucleus-executor-* matches
	// nucleus-executor-x/OrgAdmin in IAM.
	for _, role := range []string{"arn:aws:iam::123456789012:role/ops/nucleus-executor-a", "arn:aws:iam::123456789012:role/nucleus-executor-x/OrgAdmin"} {
		apitest.WantError(t, post(role), 400, "validation_failed", "role_arn", "without a path")
	}
	r := post("arn:aws:iam::123456789012:role/nucleus-executor-dev.ops")
	assert.Equal(t, 201, r.Status, "matching role: %s", r.Body)
	r = apitest.Do(t, h, contract.UpdateAccount.Method, contract.UpdateAccount.URL("123456789012"), `{"role_arn":"arn:aws:iam::123456789012:role/Other"}`, nucleus.HeaderUserID, testUser)
	apitest.WantError(t, r, 400, "validation_failed", "role_arn", "")
}
