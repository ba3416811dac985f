package stak_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	svc "github.com/dynastack/dynastack/constructs/service"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/services/stak"
)

func TestSettingsAndInboxes(t *testing.T) {
	s := newService(t)
	tests := []struct {
		name, method, path, body string
		status                   int
	}{
		{"unknown tenant", stakcontract.GetTenant.Method, stakcontract.GetTenant.URL("acme"), "", 404},
		{"inbox of unknown tenant", stakcontract.PutInbox.Method, stakcontract.PutInbox.URL("acme", "main"), `{"title":"Main","description":""}`, 404},
		{"put tenant", stakcontract.PutTenant.Method, stakcontract.PutTenant.URL("acme"), `{"title":"Acme","ttl":"30d"}`, 200},
		{"get tenant", stakcontract.GetTenant.Method, stakcontract.GetTenant.URL("acme"), "", 200},
		{"tenant with #", stakcontract.PutTenant.Method, stakcontract.PutTenant.URL("a#b"), `{"title":"x"}`, 400},
		{"get tenant with #", stakcontract.GetTenant.Method, stakcontract.GetTenant.URL("a#b"), "", 400},
		// Bytes that are not UTF-8 would be stored as U+FFFD: %FEx and
		// %EF%BF%BDx (U+FFFD itself) must not reach the same item.
		{"tenant not UTF-8", stakcontract.PutTenant.Method, stakcontract.PutTenant.URL("\xfex"), `{"title":"x"}`, 400},
		{"tenant U+FFFD", stakcontract.GetTenant.Method, stakcontract.GetTenant.URL("\uFFFDx"), "", 404},
		{"tenant with /", stakcontract.PutTenant.Method, stakcontract.PutTenant.URL("a/b"), `{"title":"x"}`, 400},
		// Route.URL would send * escaped (%2A): the raw byte is the case,
		// so the path is written out (allowed in names_test.go).
		{"tenant with *", "PUT", "/tenants/a*/settings", `{"title":"x"}`, 400},
		{"tenant with ?", stakcontract.PutTenant.Method, stakcontract.PutTenant.URL("a?"), `{"title":"x"}`, 400},
		{"empty body", stakcontract.PutTenant.Method, stakcontract.PutTenant.URL("acme"), ``, 400},
		{"null body", stakcontract.PutTenant.Method, stakcontract.PutTenant.URL("acme"), `null`, 400},
		{"malformed body", stakcontract.PutTenant.Method, stakcontract.PutTenant.URL("acme"), `{"title":`, 400},
		{"unknown field", stakcontract.PutTenant.Method, stakcontract.PutTenant.URL("acme"), `{"title":"x","color":"red"}`, 400},
		{"missing title", stakcontract.PutTenant.Method, stakcontract.PutTenant.URL("acme"), `{"ttl":"1d"}`, 400},
		{"bad ttl unit", stakcontract.PutTenant.Method, stakcontract.PutTenant.URL("acme"), `{"title":"x","ttl":"3w"}`, 400},
		{"ttl over cap", stakcontract.PutTenant.Method, stakcontract.PutTenant.URL("acme"), `{"title":"x","ttl":"721d"}`, 400},
		{"ttl zero", stakcontract.PutTenant.Method, stakcontract.PutTenant.URL("acme"), `{"title":"x","ttl":"0s"}`, 400},
		{"unknown inbox", stakcontract.GetInbox.Method, stakcontract.GetInbox.URL("acme", "main"), "", 404},
		{"put inbox", stakcontract.PutInbox.Method, stakcontract.PutInbox.URL("acme", "main"), `{"title":"Main","description":"d","ttl":{"default":"7d","flash":"60s"}}`, 200},
		{"get inbox", stakcontract.GetInbox.Method, stakcontract.GetInbox.URL("acme", "main"), "", 200},
		{"inbox with #", stakcontract.PutInbox.Method, stakcontract.PutInbox.URL("acme", "a#b"), `{"title":"x","description":""}`, 400},
		{"inbox ttl key with #", stakcontract.PutInbox.Method, stakcontract.PutInbox.URL("acme", "x"), `{"title":"x","description":"","ttl":{"a#b":"1d"}}`, 400},
		{"inbox ttl invalid", stakcontract.PutInbox.Method, stakcontract.PutInbox.URL("acme", "x"), `{"title":"x","description":"","ttl":{"default":"forever"}}`, 400},
		{"inbox null body", stakcontract.PutInbox.Method, stakcontract.PutInbox.URL("acme", "x"), `null`, 400},
		{"wrong method", "DELETE", stakcontract.PutTenant.URL("acme"), "", 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, tt.method, tt.path, tt.body)
			require.Equal(t, tt.status, r.Status, "status: %s", r.Body)
		})
	}
	var ic stak.InboxConfig
	s.MustRoute(t, 200, stakcontract.GetInbox, "", &ic, "acme", "main")
	assert.Equal(t, "Main", ic.Title, "inbox: title")
	assert.Equal(t, "60s", ic.TTL["flash"], "inbox: flash TTL")
	assert.Equal(t, "acme", ic.Tenant, "inbox: tenant")
	assert.Equal(t, "main", ic.Inbox, "inbox: key")
	// tenant settings, one inbox: rejected requests wrote nothing.
	assert.Equal(t, 2, s.Count(t), "items: tenant settings and one inbox")
}

func TestPublish(t *testing.T) {
	s := newService(t)
	s.MustRoute(t, 404, stakcontract.Publish, `{"sender":"a","audiences":{"kind":"everyone"},"message":{"title":"x"}}`, nil, "acme", "main")
	s.setup(t)
	before := s.Count(t)
	invalid := map[string]string{
		"empty":            ``,
		"null":             `null`,
		"array":            `[]`,
		"no audiences":     `{"sender":"a","message":{"title":"x"}}`,
		"bad kind":         `{"sender":"a","audiences":{"kind":"some"},"message":{"title":"x"}}`,
		"no uids":          `{"sender":"a","audiences":{"kind":"users"},"message":{"title":"x"}}`,
		"uid with #":       `{"sender":"a","audiences":{"kind":"users","uids":["a#b"]},"message":{"title":"x"}}`,
		"uid $public":      `{"sender":"a","audiences":{"kind":"users","uids":["$public"]},"message":{"title":"x"}}`,
		"duplicate uid":    `{"sender":"a","audiences":{"kind":"users","uids":["u","u"]},"message":{"title":"x"}}`,
		"everyone uids":    `{"sender":"a","audiences":{"kind":"everyone","uids":["u"]},"message":{"title":"x"}}`,
		"no message":       `{"sender":"a","audiences":{"kind":"everyone"}}`,
		"no title":         `{"sender":"a","audiences":{"kind":"everyone"},"message":{"body":"x"}}`,
		"category with #":  `{"sender":"a","audiences":{"kind":"everyone"},"taxonomy":{"category":"a#b"},"message":{"title":"x"}}`,
		"category *":       `{"sender":"a","audiences":{"kind":"everyone"},"taxonomy":{"category":"*"},"message":{"title":"x"}}`,
		"no sender":        `{"audiences":{"kind":"everyone"},"message":{"title":"x"}}`,
		"unknown field":    `{"sender":"a","audiences":{"kind":"everyone"},"message":{"title":"x"},"prio":1}`,
		"too many uids":    `{"sender":"a","audiences":{"kind":"users","uids":[` + strings.Repeat(`"u",`, stak.MaxRecipients) + `"v"]},"message":{"title":"x"}}`,
		"readat by client": `{"sender":"a","audiences":{"kind":"everyone"},"message":{"title":"x"},"readat":1}`,
	}
	for name, body := range invalid {
		t.Run(name, func(t *testing.T) {
			r := s.Do(t, stakcontract.Publish.Method, stakcontract.Publish.URL("acme", "main"), body)
			assert.Equal(t, 400, r.Status, "status: %s", r.Body)
		})
	}
	require.Equal(t, before, s.Count(t), "items: rejected publishes wrote")

	start := s.clock.Now()
	m := s.toUsers(t, "Invoice", "billing", "u1", "u2")
	assert.Equal(t, 2, m.Recipients, "published: recipients")
	assert.Len(t, m.Header.Audiences.UIDs, 2, "published: uids")
	assert.Len(t, m.Header.ID, 19, "published: id")
	assert.Equal(t, "UM", m.Kind, "published: kind")
	// inbox ttl.default (7d): the category has no TTL of its own.
	want := start.Add(7 * 24 * time.Hour).Unix()
	assert.GreaterOrEqual(t, m.ExpiredAt, want, "expiredat: the inbox's default TTL")
	assert.LessOrEqual(t, m.ExpiredAt, want+1, "expiredat: the inbox's default TTL")
	flash := s.toEveryone(t, "Sale", "flash")
	want = s.clock.Now().Add(60 * time.Second).Unix()
	assert.GreaterOrEqual(t, flash.ExpiredAt, want-1, "flash expiredat (inbox ttl.flash)")
	assert.LessOrEqual(t, flash.ExpiredAt, want, "flash expiredat (inbox ttl.flash)")
	for _, uid := range []string{"u1", "u2"} {
		st := s.stats(t, uid)
		assert.Equal(t, counts(2, 0), st.Counts, uid)
		assert.Equal(t, counts(1, 0), st.Categories["billing"], uid+" billing")
		assert.Equal(t, counts(1, 0), st.Categories["flash"], uid+" flash")
	}
	assert.Equal(t, counts(1, 0), s.stats(t, "u3").Counts, "u3") // the public message only

	// A tenant TTL applies when the inbox has none.
	s.MustRoute(t, 200, stakcontract.PutInbox, `{"title":"Plain","description":""}`, nil, "acme", "plain")
	var p stak.Published
	s.MustRoute(t, 201, stakcontract.Publish, `{"sender":"a","audiences":{"kind":"everyone"},"message":{"title":"x"}}`, &p, "acme", "plain")
	want = s.clock.Now().Add(10 * 24 * time.Hour).Unix()
	assert.GreaterOrEqual(t, p.ExpiredAt, want-1, "plain expiredat (tenant ttl)")
	assert.LessOrEqual(t, p.ExpiredAt, want, "plain expiredat (tenant ttl)")
}

type page struct {
	Messages []stak.Message `json:"messages"`
	Next     string         `json:"next_cursor"`
}

func (s *service) feed(t *testing.T, uid, query string) page {
	t.Helper()
	var p page
	s.Must(t, 200, "GET", stakcontract.Feed.URL("acme", "main", uid)+query, "", &p)
	return p
}

func titles(ms []stak.Message) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Message.Title)
	}
	return strings.Join(out, ",")
}

func TestFeed(t *testing.T) {
	s := newService(t)
	s.setup(t)
	// Oldest first: u1 gets u-messages, everyone gets p-messages; u2's
	// message must not show up in u1's feed.
	s.toUsers(t, "u1", "a", "u1")
	p2 := s.toEveryone(t, "p2", "a")
	s.toUsers(t, "u3", "b", "u1")
	s.toUsers(t, "other", "b", "u2")
	s.toEveryone(t, "p4", "b")
	s.toUsers(t, "u5", "a", "u1")
	s.toEveryone(t, "p6", "")
	s.toUsers(t, "u7", "", "u1")

	all := s.feed(t, "u1", "")
	require.Equal(t, "u7,p6,u5,p4,u3,p2,u1", titles(all.Messages), "feed")
	require.Empty(t, all.Next, "feed: cursor")
	for _, m := range all.Messages {
		assert.Nil(t, m.ReadAt, "%s read before any mark", m.Message.Title)
	}
	assert.Equal(t, "p6,p4,other,p2", titles(s.feed(t, "u2", "").Messages), "u2 feed")

	// Pages of 3, 3, 1: full pages, and no cursor after the last one.
	var got []string
	q := "?limit=3"
	for i := 0; ; i++ {
		p := s.feed(t, "u1", q)
		got = append(got, titles(p.Messages))
		if p.Next == "" {
			break
		}
		require.LessOrEqual(t, i, 5, "too many pages")
		q = "?limit=3&cursor=" + p.Next
	}
	assert.Equal(t, []string{"u7,p6,u5", "p4,u3,p2", "u1"}, got, "pages")
	// A page size dividing the feed exactly ends without a cursor.
	p7 := s.feed(t, "u1", "?limit=7")
	assert.Len(t, p7.Messages, 7, "limit=7")
	assert.Empty(t, p7.Next, "limit=7: cursor")

	// Read state of a public message comes from the user's receipt.
	s.MustRoute(t, 200, stakcontract.MarkRead, "", nil, "acme", "main", "u1", p2.Header.ID)
	for _, m := range s.feed(t, "u1", "").Messages {
		assert.Equal(t, m.Message.Title == "p2", m.ReadAt != nil, "%s: read", m.Message.Title)
	}
	for _, m := range s.feed(t, "u2", "").Messages {
		assert.Nil(t, m.ReadAt, "u2 sees u1's read of %s", m.Message.Title)
	}

	// Cursors are bound to user and inbox, and tamper-evident.
	p := s.feed(t, "u1", "?limit=2")
	for _, path := range []string{
		stakcontract.Feed.URL("acme", "main", "u2") + "?cursor=" + p.Next,
		stakcontract.Feed.URL("acme", "main", "u1") + "?cursor=" + p.Next + "x",
		stakcontract.Feed.URLQuery(svc.Values{svc.Limit: "0"}, "acme", "main", "u1"),
		stakcontract.Feed.URLQuery(svc.Values{svc.Limit: "101"}, "acme", "main", "u1"),
		stakcontract.Feed.URL("acme", "main", "u1") + "?limit=2&limit=3",
		stakcontract.Feed.URL("acme", "main", "u1") + "?limt=2",
		stakcontract.Feed.URL("acme", "main", "a#b"),
		stakcontract.Feed.URL("acme", "main", "$public"),
	} {
		r := s.Do(t, "GET", path, "")
		assert.Equal(t, 400, r.Status, "GET %s: %s", path, r.Body)
	}
	s.MustRoute(t, 404, stakcontract.Feed, "", nil, "acme", "nope", "u1")
	s.MustRoute(t, 404, stakcontract.Feed, "", nil, "nope", "main", "u1")
}

func TestFeedHidesExpired(t *testing.T) {
	s := newService(t)
	s.setup(t)
	for i := range 5 {
		s.toUsers(t, fmt.Sprint("flash", i), "flash", "u1") // 60s
	}
	s.toEveryone(t, "pflash", "flash")
	s.toUsers(t, "keep", "a", "u1")
	for i := range 4 {
		s.toUsers(t, fmt.Sprint("flash", 5+i), "flash", "u1")
	}
	s.toEveryone(t, "pkeep", "")
	// Two minutes on, the flash messages are past expiredat but still
	// stored (TTL deletes days late): hidden, and pages stay full.
	s.clock.Set(s.clock.Now().Add(2 * time.Minute))
	p := s.feed(t, "u1", "?limit=1")
	require.Equal(t, "pkeep", titles(p.Messages), "page 1")
	require.NotEmpty(t, p.Next, "page 1: cursor")
	p = s.feed(t, "u1", "?limit=1&cursor="+p.Next)
	require.Equal(t, "keep", titles(p.Messages), "page 2")
	require.Empty(t, p.Next, "page 2: a cursor to a page of expired items")
}

func TestMarkRead(t *testing.T) {
	s := newService(t)
	s.setup(t)
	um := s.toUsers(t, "hello", "billing", "u1", "u2")
	pm := s.toEveryone(t, "news", "promo")

	for i, want := range []bool{true, false} {
		var r stak.ReadResult
		s.MustRoute(t, 200, stakcontract.MarkRead, "", &r, "acme", "main", "u1", um.Header.ID)
		assert.Equal(t, want, r.Changed, "user mark %d: changed", i)
		assert.NotNil(t, r.ReadAt, "user mark %d: readat", i)
		assert.Equal(t, um.Header.ID, r.Header.ID, "user mark %d: id", i)
		s.MustRoute(t, 200, stakcontract.MarkRead, "", &r, "acme", "main", "u1", pm.Header.ID)
		assert.Equal(t, want, r.Changed, "public mark %d: changed", i)
		assert.NotNil(t, r.ReadAt, "public mark %d: readat", i)
		assert.Equal(t, stakcontract.PublicUID, r.UID, "public mark %d: uid", i)
	}
	st := s.stats(t, "u1")
	assert.Equal(t, counts(2, 2), st.Counts, "u1")
	assert.Equal(t, counts(1, 1), st.Categories["billing"], "u1 billing")
	assert.Equal(t, counts(1, 1), st.Categories["promo"], "u1 promo")
	assert.Equal(t, counts(2, 0), s.stats(t, "u2").Counts, "u2")

	// Nothing a failed mark could create: no phantom message or receipt.
	before := s.Count(t)
	unknown := "0000000000000000000"
	s.MustRoute(t, 404, stakcontract.MarkRead, "", nil, "acme", "main", "u1", unknown)
	s.MustRoute(t, 404, stakcontract.MarkRead, "", nil, "acme", "main", "u1", "not-an-id")
	s.MustRoute(t, 404, stakcontract.MarkRead, "", nil, "acme", "main", "u3", um.Header.ID) // not u3's
	s.MustRoute(t, 404, stakcontract.MarkRead, "", nil, "acme", "nope", "u1", um.Header.ID)
	s.MustRoute(t, 400, stakcontract.MarkRead, "", nil, "acme", "main", "a#b", um.Header.ID)
	assert.Equal(t, before, s.Count(t), "items: failed marks wrote")
	assert.Equal(t, counts(1, 0), s.stats(t, "u3").Counts, "u3")

	// An expired message cannot be marked.
	fl := s.toUsers(t, "flash", "flash", "u1")
	s.clock.Set(s.clock.Now().Add(2 * time.Minute))
	s.MustRoute(t, 404, stakcontract.MarkRead, "", nil, "acme", "main", "u1", fl.Header.ID)
	s.MustRoute(t, 404, stakcontract.Stats, "", nil, "acme", "nope", "u1")
}

func TestParsePartition(t *testing.T) {
	for pk, want := range map[string]stak.Partition{
		"t#acmeU#u1#main":        {Tenant: "acme", UID: "u1", Inbox: "main"},
		"t#acmeUU#u1#main":       {Tenant: "acmeU", UID: "u1", Inbox: "main"},
		"t#aG#$public#x":         {Tenant: "a", UID: "$public", Inbox: "x"},
		"t#aU#$public#x":         {},
		"t#aG#u1#x":              {},
		"t#acme":                 {},
		"t#U#u#i":                {},
		"t#aU#u1#main#extra":     {},
		"st#tenant_settings":     {},
		"t#acmeU#u1#":            {},
		"t#acmeX#u1#main":        {},
		"t#acmeU##main":          {},
		"t#tenantU#user#inbox-1": {Tenant: "tenant", UID: "user", Inbox: "inbox-1"},
	} {
		got, err := stak.ParsePartition(pk)
		if want == (stak.Partition{}) {
			assert.Error(t, err, "ParsePartition(%q)", pk)
		} else {
			assert.NoError(t, err, "ParsePartition(%q)", pk)
		}
		assert.Equal(t, want, got, "ParsePartition(%q)", pk)
		if err == nil {
			assert.Equal(t, pk, got.PK(), "PK() of ParsePartition(%q)", pk)
		}
	}
}

func TestParseTTL(t *testing.T) {
	for s, want := range map[string]time.Duration{
		"30d": 30 * 24 * time.Hour, "300m": 300 * time.Minute, "6000s": 6000 * time.Second, "720d": stak.MaxTTL,
		"721d": -1, "0d": -1, "-1d": -1, "+1d": -1, "d": -1, "1h": -1, "1.5d": -1, "": -1, "99999999999d": -1,
	} {
		got, err := stak.ParseTTL(s)
		if want < 0 {
			assert.Error(t, err, "ParseTTL(%q) = %v", s, got)
			continue
		}
		if assert.NoError(t, err, "ParseTTL(%q)", s) {
			assert.Equal(t, want, got, "ParseTTL(%q)", s)
		}
	}
}
