package itsm_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/constructs/itsm/contract"
	svc "github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/services/itsm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var tsPattern = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`)

func (s *service) put(t *testing.T, tk itsm.Ticket) {
	t.Helper()
	item, err := attributevalue.MarshalMap(tk)
	require.NoError(t, err)
	_, err = s.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(s.Table), Item: item})
	require.NoError(t, err)
}

func TestCreateTicket(t *testing.T) {
	s := newService(t, options{})
	multibyte := strings.Repeat("€", itsm.MaxDescriptionChars) // 3 bytes each
	tests := []struct {
		name   string
		body   string
		status int
		code   string
		field  string
	}{
		{"valid", `{"caller_id":"sess-poc-user-001","issue_description":"My laptop won't turn on"}`, 201, "", ""},
		{"max lengths", `{"caller_id":"sess-` + strings.Repeat("c", itsm.MaxCallerIDLen-5) + `","issue_description":"` + strings.Repeat("d", itsm.MaxDescriptionChars) + `"}`, 201, "", ""},
		{"empty body", ``, 400, "bad_request", ""},
		{"null body", `null`, 400, "bad_request", ""},
		{"array body", `[{"caller_id":"sess-a","issue_description":"b"}]`, 400, "bad_request", ""},
		{"malformed", `{"caller_id":"sess-a",`, 400, "bad_request", ""},
		{"trailing garbage", `{"caller_id":"sess-a","issue_description":"b"} x`, 400, "bad_request", ""},
		{"missing caller_id", `{"issue_description":"b"}`, 400, "validation_failed", "caller_id"},
		{"null caller_id", `{"caller_id":null,"issue_description":"b"}`, 400, "validation_failed", "caller_id"},
		{"numeric caller_id", `{"caller_id":42,"issue_description":"b"}`, 400, "validation_failed", "caller_id"},
		{"caller_id with space", `{"caller_id":"sess-a b","issue_description":"b"}`, 400, "validation_failed", "caller_id"},
		{"caller_id too long", `{"caller_id":"sess-` + strings.Repeat("c", itsm.MaxCallerIDLen-4) + `","issue_description":"b"}`, 400, "validation_failed", "caller_id"},
		{"phone number as caller_id", `{"caller_id":"+15550100199","issue_description":"b"}`, 400, "validation_failed", "caller_id"},
		{"written phone number as caller_id", `{"caller_id":"(555)010-0199","issue_description":"b"}`, 400, "validation_failed", "caller_id"},
		{"phone number as a session id", `{"caller_id":"sess-+15550100199","issue_description":"b"}`, 400, "validation_failed", "caller_id"},
		{"caller_id in neither form", `{"caller_id":"poc-user-001","issue_description":"b"}`, 400, "validation_failed", "caller_id"},
		{"hashed caller_id", `{"caller_id":"hmac-sha256:` + strings.Repeat("0f", 32) + `","issue_description":"b"}`, 201, "", ""},
		{"missing description", `{"caller_id":"sess-a"}`, 400, "validation_failed", "issue_description"},
		{"blank description", `{"caller_id":"sess-a","issue_description":"  \n "}`, 400, "validation_failed", "issue_description"},
		{"boolean description", `{"caller_id":"sess-a","issue_description":true}`, 400, "validation_failed", "issue_description"},
		{"description too long", `{"caller_id":"sess-a","issue_description":"` + strings.Repeat("d", itsm.MaxDescriptionChars+1) + `"}`, 400, "validation_failed", "issue_description"},
		{"description too many bytes", `{"caller_id":"sess-a","issue_description":"` + multibyte + `"}`, 400, "validation_failed", "issue_description"},
		{"control character", `{"caller_id":"sess-a","issue_description":"bell\u0007"}`, 400, "validation_failed", "issue_description"},
		{"unknown field", `{"caller_id":"sess-a","issue_description":"b","priority":"high"}`, 400, "validation_failed", "priority"},
		{"client-chosen status", `{"caller_id":"sess-a","issue_description":"b","status":"closed"}`, 400, "validation_failed", "status"},
		{"body too large", `{"caller_id":"sess-a","issue_description":"` + strings.Repeat("x", 40<<10) + `"}`, 413, "too_large", ""},
	}
	created := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, contract.CreateTicket.Method, contract.CreateTicket.URL(), tt.body)
			if tt.status != 201 {
				apitest.WantError(t, r, tt.status, tt.code, tt.field, "")
				return
			}
			created++
			require.Equal(t, 201, r.Status, "status: %s", r.Body)
			var tk itsm.Ticket
			r.JSON(t, &tk)
			assert.Equal(t, strings.TrimPrefix(contract.GetTicket.URL(tk.TicketID), "/"), r.Header.Get("Location"), "Location")
			assert.Len(t, tk.TicketID, 36, "ticket id")
			assert.Equal(t, itsm.StatusOpen, tk.Status, "status")
			assert.Equal(t, []itsm.Comment{}, tk.Comments, "comments: an empty list, not null")
			assert.Regexp(t, tsPattern, tk.CreatedAt, "created_at")
			assert.Equal(t, tk.CreatedAt, tk.UpdatedAt, "updated_at of a new ticket")
		})
	}
	assert.Equal(t, created, s.Count(t), "items in the table: a rejected request wrote")
}

// A phone number as caller_id is personal data, which design document 003
// forbids: the 400 says so and names the forms a caller id takes, on the
// create and on the listing alike.
func TestCallerIDIsNeverAPhoneNumber(t *testing.T) {
	s := newService(t, options{})
	for _, r := range []apitest.Response{
		s.Do(t, contract.CreateTicket.Method, contract.CreateTicket.URL(), `{"caller_id":"+44 20 7946 0958","issue_description":"no dial tone"}`),
		s.Do(t, "GET", contract.ListTickets.URLQuery(svc.Values{contract.ParamCaller: "+442079460958"}), ""),
	} {
		apitest.WantError(t, r, 400, "validation_failed", "", "must not be a phone number")
		var e apitest.ErrorBody
		r.JSON(t, &e)
		require.Len(t, e.Error.Fields, 1, "fields (%s)", r.Body)
		assert.Contains(t, []string{"caller_id", contract.ParamCaller.String()}, e.Error.Fields[0].Field, "field named")
		assert.Contains(t, e.Error.Fields[0].Message, contract.PrefixCallerSession, "names the session form")
		assert.Contains(t, e.Error.Fields[0].Message, contract.PrefixCallerHash, "names the hash form")
	}
	assert.Equal(t, 0, s.Count(t), "items in the table")

	// The id the desk backend computes is accepted and lists the ticket.
	id, err := contract.CallerIDFromPhone("+44 20 7946 0958", []byte(strings.Repeat("p", contract.MinPepperBytes)))
	require.NoError(t, err)
	tk := s.create(t, id, "no dial tone")
	p := s.list(t, id, "")
	require.Len(t, p.Tickets, 1, "the hashed caller's tickets")
	assert.Equal(t, tk.TicketID, p.Tickets[0]["ticket_id"], "listed ticket")
}

// TestCreateRefusesNonJSONContentType: a create whose body is labelled
// text/plain or a form is 415 and stores nothing (the document takes
// application/json only).
func TestCreateRefusesNonJSONContentType(t *testing.T) {
	s := newService(t, options{})
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
		r := s.Do(t, contract.CreateTicket.Method, contract.CreateTicket.URL(), `{"caller_id":"sess-ct","issue_description":"labelled `+ct+`"}`, "Content-Type", ct)
		apitest.WantError(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type", "", "Content-Type: application/json")
	}
	var page itsm.Page
	s.Must(t, http.StatusOK, contract.ListTickets.Method, contract.ListTickets.URLQuery(svc.Values{contract.ParamCaller: "sess-ct"}), "", &page)
	assert.Empty(t, page.Tickets, "tickets stored by refused creates")
}

func TestGetTicket(t *testing.T) {
	s := newService(t, options{})
	tk := s.create(t, "sess-poc-user-001", "Email not working in Outlook")
	servicetest.GetByID(t, s.Service, contract.GetTicket, tk.TicketID, tk, "PATCH")
}

func TestAddComment(t *testing.T) {
	c := apitest.NewClock(time.Date(2026, 2, 9, 12, 0, 0, 0, time.UTC), time.Second)
	s := newService(t, options{now: c.Now})
	tk := s.create(t, "sess-poc-user-001", "VPN drops")

	r := s.Do(t, contract.AddComment.Method, contract.AddComment.URL(tk.TicketID), `{"comment_text":"Tried restarting"}`)
	require.Equal(t, 201, r.Status, "first comment: %s", r.Body)
	r = s.Do(t, contract.AddComment.Method, contract.AddComment.URL(tk.TicketID), `{"comment_text":"Still broken"}`)
	var got itsm.Ticket
	r.JSON(t, &got)
	require.Len(t, got.Comments, 2, "comments")
	require.Equal(t, "Tried restarting", got.Comments[0].CommentText, "first comment")
	require.Equal(t, "Still broken", got.Comments[1].CommentText, "second comment")
	assert.Equal(t, got.Comments[1].AddedAt, got.UpdatedAt, "updated_at is the last comment's time")
	assert.Greater(t, got.UpdatedAt, tk.UpdatedAt, "updated_at moves forward")
	assert.Equal(t, tk.CreatedAt, got.CreatedAt, "created_at")

	missing := "3f1d7e3a-2222-4000-8000-000000000000"
	tests := []struct {
		name, id, body string
		status         int
		code, field    string
	}{
		{"unknown ticket", missing, `{"comment_text":"hello"}`, 404, "not_found", ""},
		{"malformed id", "nope", `{"comment_text":"hello"}`, 404, "not_found", ""},
		{"empty body", tk.TicketID, ``, 400, "bad_request", ""},
		{"null body", tk.TicketID, `null`, 400, "bad_request", ""},
		{"missing text", tk.TicketID, `{}`, 400, "validation_failed", "comment_text"},
		{"numeric text", tk.TicketID, `{"comment_text":1}`, 400, "validation_failed", "comment_text"},
		{"unknown field", tk.TicketID, `{"comment_text":"a","author":"b"}`, 400, "validation_failed", "author"},
		{"too long", tk.TicketID, `{"comment_text":"` + strings.Repeat("x", itsm.MaxCommentChars+1) + `"}`, 400, "validation_failed", "comment_text"},
		{"too many bytes", tk.TicketID, `{"comment_text":"` + strings.Repeat("€", itsm.MaxCommentChars) + `"}`, 400, "validation_failed", "comment_text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, contract.AddComment.Method, contract.AddComment.URL(tt.id), tt.body), tt.status, tt.code, tt.field, "")
		})
	}
	// The comment on a missing ticket must not have created one.
	assert.Equal(t, 1, s.Count(t), "items in the table (phantom ticket created?)")
	r = s.Do(t, contract.GetTicket.Method, contract.GetTicket.URL(missing), "")
	assert.Equal(t, 404, r.Status, "GET unknown ticket after comment: %s", r.Body)
	r = s.Do(t, contract.GetTicket.Method, contract.GetTicket.URL(tk.TicketID), "")
	r.JSON(t, &got)
	assert.Len(t, got.Comments, 2, "rejected comments were stored")
}

func TestCommentLimits(t *testing.T) {
	s := newService(t, options{})
	closed := itsm.Ticket{TicketID: "3f1d7e3a-3333-4000-8000-000000000000", CallerID: "sess-c", IssueDescription: "d",
		Status: itsm.StatusClosed, CreatedAt: "2026-02-09T12:00:00.000000Z", UpdatedAt: "2026-02-09T12:00:00.000000Z", Comments: []itsm.Comment{}}
	s.put(t, closed)
	apitest.WantError(t, s.Do(t, contract.AddComment.Method, contract.AddComment.URL(closed.TicketID), `{"comment_text":"hello"}`), 409, "conflict", "", "closed")

	// The largest ticket the limits allow: 4-byte characters everywhere.
	full := itsm.Ticket{TicketID: "3f1d7e3a-4444-4000-8000-000000000000", CallerID: strings.Repeat("c", itsm.MaxCallerIDLen),
		IssueDescription: strings.Repeat("😀", itsm.MaxDescriptionBytes/4),
		Status:           itsm.StatusOpen, CreatedAt: "2026-02-09T12:00:00.000000Z", UpdatedAt: "2026-02-09T12:00:00.000000Z"}
	for i := range itsm.MaxComments {
		full.Comments = append(full.Comments, itsm.Comment{CommentText: strings.Repeat("😀", itsm.MaxCommentBytes/4), AddedAt: fmt.Sprintf("2026-02-09T12:00:%02d.000000Z", i%60)})
	}
	s.put(t, full) // fails if the limits allowed an item over 400 KB
	apitest.WantError(t, s.Do(t, contract.AddComment.Method, contract.AddComment.URL(full.TicketID), `{"comment_text":"one more"}`), 413, "too_large", "", "maximum of 100 comments")
	r := s.Do(t, contract.GetTicket.Method, contract.GetTicket.URL(full.TicketID), "")
	var got itsm.Ticket
	r.JSON(t, &got)
	assert.Len(t, got.Comments, itsm.MaxComments, "comments")
}

// setState puts a ticket in the given status directly, to test every
// transition from every state.
func (s *service) setState(t *testing.T, id string, st itsm.Status) {
	s.put(t, itsm.Ticket{TicketID: id, CallerID: "sess-c", IssueDescription: "d", Status: st,
		CreatedAt: "2026-02-09T12:00:00.000000Z", UpdatedAt: "2026-02-09T12:00:00.000000Z", Comments: []itsm.Comment{}})
}

func TestStatusTransitions(t *testing.T) {
	s := newService(t, options{})
	n := 0
	for _, from := range itsm.Statuses {
		for _, to := range itsm.Statuses {
			n++
			id := fmt.Sprintf("3f1d7e3a-5555-4000-8000-%012d", n)
			allowed := (from == itsm.StatusOpen && to == itsm.StatusInProgress) ||
				(from == itsm.StatusInProgress && to == itsm.StatusResolved) ||
				(from == itsm.StatusResolved && (to == itsm.StatusClosed || to == itsm.StatusOpen))
			t.Run(fmt.Sprintf("%s to %s", from, to), func(t *testing.T) {
				require.Equal(t, allowed, itsm.CanTransition(from, to), "CanTransition(%s, %s)", from, to)
				s.setState(t, id, from)
				r := s.Do(t, contract.SetStatus.Method, contract.SetStatus.URL(id), `{"status":"`+string(to)+`"}`)
				var got itsm.Ticket
				if allowed {
					require.Equal(t, 200, r.Status, "status: %s", r.Body)
					r.JSON(t, &got)
					assert.Equal(t, to, got.Status, "status")
					assert.NotEqual(t, got.CreatedAt, got.UpdatedAt, "updated_at")
					return
				}
				apitest.WantError(t, r, 409, "conflict", "", "from "+string(from)+" to "+string(to))
				r = s.Do(t, contract.GetTicket.Method, contract.GetTicket.URL(id), "")
				r.JSON(t, &got)
				assert.Equal(t, from, got.Status, "a refused change still changed the status")
			})
		}
	}

	tk := s.create(t, "sess-c", "d")
	before := s.Count(t)
	tests := []struct {
		name, id, body string
		status         int
		code, field    string
	}{
		{"unknown ticket", "3f1d7e3a-6666-4000-8000-000000000000", `{"status":"in_progress"}`, 404, "not_found", ""},
		{"unknown status", tk.TicketID, `{"status":"done"}`, 400, "validation_failed", "status"},
		{"missing status", tk.TicketID, `{}`, 400, "validation_failed", "status"},
		{"numeric status", tk.TicketID, `{"status":1}`, 400, "validation_failed", "status"},
		{"other field", tk.TicketID, `{"status":"in_progress","caller_id":"x"}`, 400, "validation_failed", "caller_id"},
		{"null body", tk.TicketID, `null`, 400, "bad_request", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, contract.SetStatus.Method, contract.SetStatus.URL(tt.id), tt.body), tt.status, tt.code, tt.field, "")
		})
	}
	assert.Equal(t, before, s.Count(t), "items: a refused status change created an item")
}

func TestLifecycle(t *testing.T) {
	s := newService(t, options{})
	tk := s.create(t, "sess-poc-user-002", "Printer jams")
	for _, st := range []string{"in_progress", "resolved", "open", "in_progress", "resolved", "closed"} {
		r := s.Do(t, contract.SetStatus.Method, contract.SetStatus.URL(tk.TicketID), `{"status":"`+st+`"}`)
		require.Equal(t, 200, r.Status, "→ %s: %s", st, r.Body)
	}
	apitest.WantError(t, s.Do(t, contract.SetStatus.Method, contract.SetStatus.URL(tk.TicketID), `{"status":"open"}`), 409, "conflict", "", "closed is final")
	apitest.WantError(t, s.Do(t, contract.AddComment.Method, contract.AddComment.URL(tk.TicketID), `{"comment_text":"hi"}`), 409, "conflict", "", "closed")
}

// Concurrent close and reopen of a resolved ticket: the conditional update
// lets exactly one win, whichever runs first.
func TestConcurrentStatusChanges(t *testing.T) {
	s := newService(t, options{})
	for i := range 5 {
		id := fmt.Sprintf("3f1d7e3a-7777-4000-8000-%012d", i)
		s.setState(t, id, itsm.StatusResolved)
		var wg sync.WaitGroup
		codes := make([]int, 2)
		for j, to := range []string{"closed", "open"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes[j] = s.Do(t, contract.SetStatus.Method, contract.SetStatus.URL(id), `{"status":"`+to+`"}`).Status
			}()
		}
		wg.Wait()
		assert.ElementsMatch(t, []int{200, 409}, codes, "round %d: want one 200 and one 409", i)
	}
}

type page struct {
	Tickets    []map[string]any `json:"tickets"`
	NextCursor string           `json:"next_cursor"`
}

func (s *service) list(t *testing.T, caller, cursor string) page {
	t.Helper()
	path := contract.ListTickets.URL() + "?caller=" + caller
	if cursor != "" {
		path += "&cursor=" + cursor
	}
	r := s.Do(t, "GET", path, "")
	require.Equal(t, 200, r.Status, "list: %s", r.Body)
	var p page
	r.JSON(t, &p)
	return p
}

func TestListByCaller(t *testing.T) {
	// A clock in 1 ms steps crossing a whole second: with RFC3339Nano,
	// "…:00Z" would sort after "…:00.999Z" and break newest-first order.
	c := apitest.NewClock(time.Date(2026, 2, 9, 12, 0, 0, 990_000_000, time.UTC), time.Millisecond)
	s := newService(t, options{now: c.Now})
	var want []string
	for i := range 23 {
		want = append([]string{s.create(t, "sess-caller-a", fmt.Sprintf("issue %d", i)).TicketID}, want...)
	}
	for range 10 {
		s.create(t, "sess-caller-exact", "x")
	}
	s.create(t, "sess-caller-b", "b's ticket")
	s.Do(t, contract.AddComment.Method, contract.AddComment.URL(want[0]), `{"comment_text":"not in listings"}`)

	var got []string
	var cursors []string
	cur := ""
	for pageNo := 0; ; pageNo++ {
		p := s.list(t, "sess-caller-a", cur)
		for _, tk := range p.Tickets {
			assert.Equal(t, "sess-caller-a", tk["caller_id"], "foreign ticket")
			assert.NotContains(t, tk, "comments", "listing returned comments")
			got = append(got, tk["ticket_id"].(string))
		}
		require.Len(t, p.Tickets, []int{10, 10, 3}[pageNo], "page %d", pageNo)
		if p.NextCursor == "" {
			break
		}
		cursors = append(cursors, p.NextCursor)
		cur = p.NextCursor
	}
	assert.Equal(t, want, got, "order")

	p := s.list(t, "sess-caller-exact", "")
	assert.Len(t, p.Tickets, 10, "exactly one page: tickets")
	assert.Empty(t, p.NextCursor, "exactly one page: cursor")
	p = s.list(t, "sess-nobody", "")
	assert.Equal(t, []map[string]any{}, p.Tickets, "unknown caller: an empty list, not null")
	assert.Empty(t, p.NextCursor, "unknown caller: cursor")

	tampered := []byte(cursors[0])
	tampered[len(tampered)/2] ^= 0x01
	if tampered[len(tampered)/2] == '-' || tampered[len(tampered)/2] == '_' {
		tampered[len(tampered)/2] = 'A'
	}
	tests := []struct {
		name, query string
		field       string
	}{
		{"cursor of another caller", "caller=sess-caller-b&cursor=" + cursors[0], ""},
		{"tampered cursor", "caller=sess-caller-a&cursor=" + string(tampered), ""},
		{"garbage cursor", "caller=sess-caller-a&cursor=bm90IGEgY3Vyc29y", ""},
		{"missing caller", "", "caller"},
		{"blank caller", "caller=", "caller"},
		{"phone number", "caller=%2B15550100199", "caller"},
		{"caller in neither form", "caller=poc-user-001", "caller"},
		{"caller too long", "caller=sess-" + strings.Repeat("c", itsm.MaxCallerIDLen-4), "caller"},
		// Not a silent pick of one value or a silent full listing.
		{"caller twice", "caller=sess-caller-a&caller=sess-caller-b", "caller"},
		{"unknown parameter", "caller=sess-caller-a&calller=caller-b", "calller"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, contract.ListTickets.Method, contract.ListTickets.URL()+"?"+tt.query, "")
			if tt.field != "" {
				apitest.WantError(t, r, 400, "validation_failed", tt.field, "")
				return
			}
			apitest.WantError(t, r, 400, "bad_request", "", "cursor")
		})
	}
}

func TestTimestamp(t *testing.T) {
	a := itsm.Timestamp(time.Date(2026, 2, 9, 12, 0, 0, 300_000_000, time.UTC))
	b := itsm.Timestamp(time.Date(2026, 2, 9, 12, 0, 0, 340_000_000, time.UTC))
	c := itsm.Timestamp(time.Date(2026, 2, 9, 13, 0, 0, 0, time.FixedZone("CET", 3600)))
	assert.Equal(t, "2026-02-09T12:00:00.300000Z", a)
	assert.Less(t, a, b, "sub-second order")
	assert.Equal(t, "2026-02-09T12:00:00.000000Z", c, "a time in another zone is written in UTC")
	assert.Less(t, c, a, "order across zones")
}

// The template is the source of truth for the schema: if the CDK renamed
// the index, listing must fail here rather than in production.
func TestRenamedIndexBreaksListing(t *testing.T) {
	path := testenv.Template(t, "dev", "itsm")
	tmpl, err := cfntables.Load(path)
	require.NoError(t, err)
	for id, r := range tmpl.Resources {
		r.Properties = []byte(strings.ReplaceAll(string(r.Properties), `"CallerIdIndex"`, `"ByCallerIndex"`))
		tmpl.Resources[id] = r
	}
	s := newService(t, options{tmpl: tmpl})
	s.create(t, "sess-caller-a", "x")
	r := s.Do(t, contract.ListTickets.Method, contract.ListTickets.URLQuery(svc.Values{contract.ParamCaller: "sess-caller-a"}), "")
	apitest.WantError(t, r, 500, "internal", "", "")
	assert.NotContains(t, string(r.Body), "CallerIdIndex", "500 leaks internals")
	assert.NotContains(t, string(r.Body), s.Table, "500 leaks internals")
}
