package nucleus_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	svc "github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAttachResource(t *testing.T) {
	s := newService(t, options{})
	const acct, other = "123456789012", "210987654321"
	s.createAccount(t, acct, "Dev", "active")
	sc := s.createSchedule(t, "Nightly")
	path := contract.AttachResource.URL(sc.ScheduleID)
	body := func(typ, arn, region, account string) string {
		b, _ := json.Marshal(map[string]string{"resource_arn": arn, "resource_type": typ, "region": region, "account_id": account})
		return string(b)
	}
	ec2 := ec2ARN(acct, 1)
	ecs := "arn:aws:ecs:eu-west-1:" + acct + ":service/prod-cluster/web_api-1"
	rds := "arn:aws:rds:eu-west-1:" + acct + ":db:orders-db-1"
	tests := []struct {
		name, path, body string
		status           int
		code, field      string
	}{
		{"ec2", path, body("ec2", ec2, "us-east-1", acct), 201, "", ""},
		{"ec2 again is a no-op", path, body("ec2", ec2, "us-east-1", acct), 200, "", ""},
		{"ecs", path, body("ecs", ecs, "eu-west-1", acct), 201, "", ""},
		{"ecs old arn format", path, body("ecs", "arn:aws:ecs:eu-west-1:"+acct+":service/web", "eu-west-1", acct), 201, "", ""},
		{"rds", path, body("rds", rds, "eu-west-1", acct), 201, "", ""},
		{"rds cluster", path, body("rds", "arn:aws:rds:eu-west-1:"+acct+":cluster:aurora-1", "eu-west-1", acct), 201, "", ""},
		{"ec2 short instance id", path, body("ec2", "arn:aws:ec2:us-east-1:"+acct+":instance/i-0123abcd", "us-east-1", acct), 201, "", ""},
		{"unknown schedule", contract.AttachResource.URL("3f1d7e3a-1111-4000-8000-000000000000"), body("ec2", ec2ARN(acct, 2), "us-east-1", acct), 404, "not_found", ""},
		{"malformed schedule id", contract.AttachResource.URL("x"), body("ec2", ec2ARN(acct, 2), "us-east-1", acct), 404, "not_found", ""},
		{"unknown account", path, body("ec2", ec2ARN(other, 2), "us-east-1", other), 409, "conflict", ""},
		{"type mismatch", path, body("rds", ec2ARN(acct, 3), "us-east-1", acct), 400, "validation_failed", "resource_arn"},
		{"region mismatch", path, body("ec2", ec2ARN(acct, 3), "eu-west-1", acct), 400, "validation_failed", "resource_arn"},
		{"account mismatch", path, body("ec2", ec2ARN(acct, 3), "us-east-1", other), 400, "validation_failed", "resource_arn"},
		{"ec2 not an instance", path, body("ec2", "arn:aws:ec2:us-east-1:"+acct+":volume/vol-0123abcd", "us-east-1", acct), 400, "validation_failed", "resource_arn"},
		{"rds upper case id", path, body("rds", "arn:aws:rds:eu-west-1:"+acct+":db:Orders", "eu-west-1", acct), 400, "validation_failed", "resource_arn"},
		{"not an arn", path, body("ec2", "i-0123456789abcdef0", "us-east-1", acct), 400, "validation_failed", "resource_arn"},
		{"arn too long", path, body("ecs", "arn:aws:ecs:eu-west-1:"+acct+":service/"+strings.Repeat("c", 255)+"/"+strings.Repeat("s", 800), "eu-west-1", acct), 400, "validation_failed", "resource_arn"},
		{"unknown type", path, body("lambda", ec2ARN(acct, 3), "us-east-1", acct), 400, "validation_failed", "resource_type"},
		{"bad region", path, body("ec2", ec2ARN(acct, 3), "mars", acct), 400, "validation_failed", "region"},
		{"bad account", path, body("ec2", ec2ARN(acct, 3), "us-east-1", "12"), 400, "validation_failed", "account_id"},
		{"missing arn", path, `{"resource_type":"ec2","region":"us-east-1","account_id":"` + acct + `"}`, 400, "validation_failed", "resource_arn"},
		{"unknown field", path, `{"resource_arn":"` + ec2ARN(acct, 3) + `","resource_type":"ec2","region":"us-east-1","account_id":"` + acct + `","tags":{}}`, 400, "validation_failed", "tags"},
		{"null body", path, `null`, 400, "bad_request", ""},
	}
	app, audit := s.counts(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, "PUT", tt.path, tt.body)
			if tt.status >= 400 {
				apitest.WantError(t, r, tt.status, tt.code, tt.field, "")
				s.wantCounts(t, app, audit) // neither resource nor audit entry
				return
			}
			require.Equal(t, tt.status, r.Status, "status: %s", r.Body)
			if tt.status == 201 {
				app++
				audit++
			}
			s.wantCounts(t, app, audit)
			var res nucleus.Resource
			r.JSON(t, &res)
			var in map[string]string
			_ = json.Unmarshal([]byte(tt.body), &in)
			assert.Equal(t, in["resource_arn"], res.ResourceARN, "resource_arn")
			assert.Equal(t, sc.ScheduleID, res.ScheduleID, "schedule_id")
			assert.Equal(t, in["resource_type"], string(res.ResourceType), "resource_type")
		})
	}
	t.Run("unknown account names account_id", func(t *testing.T) {
		apitest.WantError(t, s.Do(t, contract.AttachResource.Method, path, body("ec2", ec2ARN(other, 2), "us-east-1", other)), 409, "conflict", "", "account_id")
	})
	t.Run("missing user", func(t *testing.T) {
		apitest.WantError(t, s.doAs(t, "", "PUT", path, body("ec2", ec2ARN(acct, 7), "us-east-1", acct)), 400, "validation_failed", nucleus.HeaderUserID, "")
	})
	// The attach is in the schedule's audit log, with what was attached.
	p := s.audit(t, contract.EntityLog.URL("schedule", sc.ScheduleID))
	require.Len(t, p.Entries, 7, "audit")
	assert.Equal(t, nucleus.ActionCreate, p.Entries[0].Action, "audit: latest entry")
	assert.Contains(t, string(p.Entries[len(p.Entries)-2].Details), ec2, "audit: the first attach")
}

func TestDetachResource(t *testing.T) {
	s := newService(t, options{})
	const acct = "123456789012"
	s.createAccount(t, acct, "Dev", "active")
	sc := s.createSchedule(t, "Nightly")
	ecs := "arn:aws:ecs:us-east-1:" + acct + ":service/cluster/web"
	for _, arn := range []string{ec2ARN(acct, 1), ec2ARN(acct, 2)} {
		s.MustRoute(t, 201, contract.AttachResource, resourceBody(acct, arn), nil, sc.ScheduleID)
	}
	s.MustRoute(t, 201, contract.AttachResource, `{"resource_arn":"`+ecs+`","resource_type":"ecs","region":"us-east-1","account_id":"`+acct+`"}`, nil, sc.ScheduleID)
	// The ARN is appended as each case spells it (escaped, escaped twice,
	// raw): the route's path with an empty ARN is the prefix.
	base := contract.DetachResource.URL(sc.ScheduleID, "")

	tests := []struct {
		name, path string
		status     int
		inMessage  string
	}{
		{"escaped", base + url.PathEscape(ec2ARN(acct, 1)), 204, ""},
		{"escaped again", base + url.PathEscape(ec2ARN(acct, 1)), 404, "not attached"},
		{"fully escaped slashes", base + strings.ReplaceAll(url.QueryEscape(ecs), "+", "%20"), 204, ""},
		{"raw slashes", base + ec2ARN(acct, 2), 204, ""},
		{"never attached", base + url.PathEscape(ec2ARN(acct, 9)), 404, "not attached"},
		{"not an arn", base + "i-123", 404, "not attached"},
		{"unknown schedule", contract.DetachResource.URL("3f1d7e3a-1111-4000-8000-000000000000", "") + url.PathEscape(ec2ARN(acct, 9)), 404, "schedule"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, "DELETE", tt.path, "")
			if tt.status == 204 {
				require.Equal(t, 204, r.Status, "status: %s", r.Body)
				require.Empty(t, r.Body, "body of a 204")
				return
			}
			apitest.WantError(t, r, tt.status, "not_found", "", tt.inMessage)
		})
	}
	var d nucleus.ScheduleDetail
	s.MustRoute(t, 200, contract.GetSchedule, "", &d, sc.ScheduleID)
	assert.Empty(t, d.Resources, "resources left")
	p := s.audit(t, contract.EntityLog.URL("schedule", sc.ScheduleID))
	require.Len(t, p.Entries, 7, "audit entries: want 1 create + 3 attach + 3 detach")
	var detail struct {
		Resource map[string]string `json:"resource"`
	}
	_ = json.Unmarshal(p.Entries[0].Details, &detail)
	assert.Equal(t, nucleus.ActionDelete, p.Entries[0].Action, "latest entry: action")
	assert.Equal(t, ec2ARN(acct, 2), detail.Resource["resource_arn"], "latest entry: resource_arn")
	assert.Equal(t, acct, detail.Resource["account_id"], "latest entry: account_id")
	assert.Equal(t, "ec2", detail.Resource["resource_type"], "latest entry: resource_type")
	apitest.WantError(t, s.doAs(t, "", "DELETE", base+url.PathEscape(ecs), ""), 400, "validation_failed", nucleus.HeaderUserID, "")
}

func TestAccountResources(t *testing.T) {
	s := newService(t, options{})
	const a, b = "123456789012", "210987654321"
	s.createAccount(t, a, "A", "active")
	s.createAccount(t, b, "B", "active")
	var want []string
	for i := range 3 {
		sc := s.createSchedule(t, fmt.Sprint("s", i))
		for j := range 2 {
			s.MustRoute(t, 201, contract.AttachResource, resourceBody(a, ec2ARN(a, i*10+j)), nil, sc.ScheduleID)
			want = append(want, sc.ScheduleID+" "+ec2ARN(a, i*10+j))
		}
		s.MustRoute(t, 201, contract.AttachResource, resourceBody(b, ec2ARN(b, i)), nil, sc.ScheduleID)
	}
	var got []string
	cur := ""
	for {
		var p nucleus.ResourcePage
		s.Must(t, 200, contract.AccountResources.Method, contract.AccountResources.URL(a)+"?limit=4&cursor="+cur, "", &p)
		for _, r := range p.Resources {
			assert.Equal(t, a, r.AccountID, "foreign resource %+v", r)
			got = append(got, r.ScheduleID+" "+r.ResourceARN)
		}
		if p.Next == "" {
			break
		}
		cur = p.Next
	}
	assert.Len(t, got, len(want), "resources")
	var p nucleus.ResourcePage
	s.Must(t, 200, contract.AccountResources.Method, contract.AccountResources.URLQuery(svc.Values{svc.Limit: "1"}, a), "", &p)
	apitest.WantError(t, s.Do(t, contract.AccountResources.Method, contract.AccountResources.URL(b)+"?cursor="+p.Next, ""), 400, "bad_request", "", "cursor")
	apitest.WantError(t, s.Do(t, contract.AccountResources.Method, contract.AccountResources.URL("999999999999"), ""), 404, "not_found", "", "")
	apitest.WantError(t, s.Do(t, contract.AccountResources.Method, contract.AccountResources.URL("1"), ""), 404, "not_found", "", "")
	s.createAccount(t, "111111111111", "Empty", "active")
	p = nucleus.ResourcePage{}
	s.MustRoute(t, 200, contract.AccountResources, "", &p, "111111111111")
	assert.NotNil(t, p.Resources, "empty account: resources are a list, not null")
	assert.Empty(t, p.Resources, "empty account: resources")
	assert.Empty(t, p.Next, "empty account: next")
}
