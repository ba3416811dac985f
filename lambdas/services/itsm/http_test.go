package itsm_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/services/itsm"
)

var tsPattern = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`)

func (s *service) put(t *testing.T, tk itsm.Ticket) {
	t.Helper()
	item, err := attributevalue.MarshalMap(tk)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(s.Table), Item: item}); err != nil {
		t.Fatal(err)
	}
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
		{"valid", `{"caller_id":"poc-user-001","issue_description":"My laptop won't turn on"}`, 201, "", ""},
		{"max lengths", `{"caller_id":"` + strings.Repeat("c", itsm.MaxCallerIDLen) + `","issue_description":"` + strings.Repeat("d", itsm.MaxDescriptionChars) + `"}`, 201, "", ""},
		{"empty body", ``, 400, "bad_request", ""},
		{"null body", `null`, 400, "bad_request", ""},
		{"array body", `[{"caller_id":"a","issue_description":"b"}]`, 400, "bad_request", ""},
		{"malformed", `{"caller_id":"a",`, 400, "bad_request", ""},
		{"trailing garbage", `{"caller_id":"a","issue_description":"b"} x`, 400, "bad_request", ""},
		{"missing caller_id", `{"issue_description":"b"}`, 400, "validation_failed", "caller_id"},
		{"null caller_id", `{"caller_id":null,"issue_description":"b"}`, 400, "validation_failed", "caller_id"},
		{"numeric caller_id", `{"caller_id":42,"issue_description":"b"}`, 400, "validation_failed", "caller_id"},
		{"caller_id with space", `{"caller_id":"a b","issue_description":"b"}`, 400, "validation_failed", "caller_id"},
		{"caller_id too long", `{"caller_id":"` + strings.Repeat("c", itsm.MaxCallerIDLen+1) + `","issue_description":"b"}`, 400, "validation_failed", "caller_id"},
		{"missing description", `{"caller_id":"a"}`, 400, "validation_failed", "issue_description"},
		{"blank description", `{"caller_id":"a","issue_description":"  \n "}`, 400, "validation_failed", "issue_description"},
		{"boolean description", `{"caller_id":"a","issue_description":true}`, 400, "validation_failed", "issue_description"},
		{"description too long", `{"caller_id":"a","issue_description":"` + strings.Repeat("d", itsm.MaxDescriptionChars+1) + `"}`, 400, "validation_failed", "issue_description"},
		{"description too many bytes", `{"caller_id":"a","issue_description":"` + multibyte + `"}`, 400, "validation_failed", "issue_description"},
		{"control character", `{"caller_id":"a","issue_description":"bell\u0007"}`, 400, "validation_failed", "issue_description"},
		{"unknown field", `{"caller_id":"a","issue_description":"b","priority":"high"}`, 400, "validation_failed", "priority"},
		{"client-chosen status", `{"caller_id":"a","issue_description":"b","status":"closed"}`, 400, "validation_failed", "status"},
		{"body too large", `{"caller_id":"a","issue_description":"` + strings.Repeat("x", 40<<10) + `"}`, 413, "too_large", ""},
	}
	created := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, "POST", "/tickets", tt.body)
			if tt.status != 201 {
				apitest.WantError(t, r, tt.status, tt.code, tt.field, "")
				return
			}
			created++
			if r.Status != 201 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			var tk itsm.Ticket
			r.JSON(t, &tk)
			if r.Header.Get("Location") != "tickets/"+tk.TicketID {
				t.Errorf("Location = %q", r.Header.Get("Location"))
			}
			if len(tk.TicketID) != 36 || tk.Status != itsm.StatusOpen || tk.Comments == nil || len(tk.Comments) != 0 {
				t.Errorf("ticket = %+v", tk)
			}
			if !tsPattern.MatchString(tk.CreatedAt) || tk.CreatedAt != tk.UpdatedAt {
				t.Errorf("timestamps %q %q", tk.CreatedAt, tk.UpdatedAt)
			}
		})
	}
	if n := s.Count(t); n != created {
		t.Errorf("table holds %d items, want %d: a rejected request wrote", n, created)
	}
}

func TestGetTicket(t *testing.T) {
	s := newService(t, options{})
	tk := s.create(t, "poc-user-001", "Email not working in Outlook")
	servicetest.GetByID(t, s.Service, contract.GetTicket, tk.TicketID, tk, "PATCH")
}

func TestAddComment(t *testing.T) {
	c := apitest.NewClock(time.Date(2026, 2, 9, 12, 0, 0, 0, time.UTC), time.Second)
	s := newService(t, options{now: c.Now})
	tk := s.create(t, "poc-user-001", "VPN drops")

	r := s.Do(t, "POST", "/tickets/"+tk.TicketID+"/comments", `{"comment_text":"Tried restarting"}`)
	if r.Status != 201 {
		t.Fatalf("status %d %s", r.Status, r.Body)
	}
	r = s.Do(t, "POST", "/tickets/"+tk.TicketID+"/comments", `{"comment_text":"Still broken"}`)
	var got itsm.Ticket
	r.JSON(t, &got)
	if len(got.Comments) != 2 || got.Comments[0].CommentText != "Tried restarting" || got.Comments[1].CommentText != "Still broken" {
		t.Fatalf("comments = %+v", got.Comments)
	}
	if got.UpdatedAt != got.Comments[1].AddedAt || got.UpdatedAt <= tk.UpdatedAt || got.CreatedAt != tk.CreatedAt {
		t.Errorf("timestamps: %+v", got)
	}

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
			apitest.WantError(t, s.Do(t, "POST", "/tickets/"+tt.id+"/comments", tt.body), tt.status, tt.code, tt.field, "")
		})
	}
	// The comment on a missing ticket must not have created one.
	if n := s.Count(t); n != 1 {
		t.Errorf("table holds %d items, want 1 (phantom ticket created?)", n)
	}
	if r := s.Do(t, "GET", "/tickets/"+missing, ""); r.Status != 404 {
		t.Errorf("GET unknown ticket after comment = %d %s", r.Status, r.Body)
	}
	r = s.Do(t, "GET", "/tickets/"+tk.TicketID, "")
	r.JSON(t, &got)
	if len(got.Comments) != 2 {
		t.Errorf("rejected comments were stored: %+v", got.Comments)
	}
}

func TestCommentLimits(t *testing.T) {
	s := newService(t, options{})
	closed := itsm.Ticket{TicketID: "3f1d7e3a-3333-4000-8000-000000000000", CallerID: "c", IssueDescription: "d",
		Status: itsm.StatusClosed, CreatedAt: "2026-02-09T12:00:00.000000Z", UpdatedAt: "2026-02-09T12:00:00.000000Z", Comments: []itsm.Comment{}}
	s.put(t, closed)
	apitest.WantError(t, s.Do(t, "POST", "/tickets/"+closed.TicketID+"/comments", `{"comment_text":"hello"}`), 409, "conflict", "", "closed")

	// The largest ticket the limits allow: 4-byte characters everywhere.
	full := itsm.Ticket{TicketID: "3f1d7e3a-4444-4000-8000-000000000000", CallerID: strings.Repeat("c", itsm.MaxCallerIDLen),
		IssueDescription: strings.Repeat("😀", itsm.MaxDescriptionBytes/4),
		Status:           itsm.StatusOpen, CreatedAt: "2026-02-09T12:00:00.000000Z", UpdatedAt: "2026-02-09T12:00:00.000000Z"}
	for i := range itsm.MaxComments {
		full.Comments = append(full.Comments, itsm.Comment{CommentText: strings.Repeat("😀", itsm.MaxCommentBytes/4), AddedAt: fmt.Sprintf("2026-02-09T12:00:%02d.000000Z", i%60)})
	}
	s.put(t, full) // fails if the limits allowed an item over 400 KB
	apitest.WantError(t, s.Do(t, "POST", "/tickets/"+full.TicketID+"/comments", `{"comment_text":"one more"}`), 413, "too_large", "", "maximum of 100 comments")
	r := s.Do(t, "GET", "/tickets/"+full.TicketID, "")
	var got itsm.Ticket
	r.JSON(t, &got)
	if len(got.Comments) != itsm.MaxComments {
		t.Errorf("comments = %d, want %d", len(got.Comments), itsm.MaxComments)
	}
}

// setState puts a ticket in the given status directly, to test every
// transition from every state.
func (s *service) setState(t *testing.T, id string, st itsm.Status) {
	s.put(t, itsm.Ticket{TicketID: id, CallerID: "c", IssueDescription: "d", Status: st,
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
				if itsm.CanTransition(from, to) != allowed {
					t.Fatalf("CanTransition(%s, %s) = %v", from, to, !allowed)
				}
				s.setState(t, id, from)
				r := s.Do(t, "PATCH", "/tickets/"+id, `{"status":"`+string(to)+`"}`)
				var got itsm.Ticket
				if allowed {
					if r.Status != 200 {
						t.Fatalf("status %d %s", r.Status, r.Body)
					}
					r.JSON(t, &got)
					if got.Status != to || got.UpdatedAt == got.CreatedAt {
						t.Errorf("ticket = %+v", got)
					}
					return
				}
				apitest.WantError(t, r, 409, "conflict", "", "from "+string(from)+" to "+string(to))
				r = s.Do(t, "GET", "/tickets/"+id, "")
				r.JSON(t, &got)
				if got.Status != from {
					t.Errorf("refused change still changed status to %s", got.Status)
				}
			})
		}
	}

	tk := s.create(t, "c", "d")
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
			apitest.WantError(t, s.Do(t, "PATCH", "/tickets/"+tt.id, tt.body), tt.status, tt.code, tt.field, "")
		})
	}
	if after := s.Count(t); after != before {
		t.Errorf("items %d → %d: a refused status change created an item", before, after)
	}
}

func TestLifecycle(t *testing.T) {
	s := newService(t, options{})
	tk := s.create(t, "poc-user-002", "Printer jams")
	for _, st := range []string{"in_progress", "resolved", "open", "in_progress", "resolved", "closed"} {
		if r := s.Do(t, "PATCH", "/tickets/"+tk.TicketID, `{"status":"`+st+`"}`); r.Status != 200 {
			t.Fatalf("→ %s: %d %s", st, r.Status, r.Body)
		}
	}
	apitest.WantError(t, s.Do(t, "PATCH", "/tickets/"+tk.TicketID, `{"status":"open"}`), 409, "conflict", "", "closed is final")
	apitest.WantError(t, s.Do(t, "POST", "/tickets/"+tk.TicketID+"/comments", `{"comment_text":"hi"}`), 409, "conflict", "", "closed")
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
				codes[j] = s.Do(t, "PATCH", "/tickets/"+id, `{"status":"`+to+`"}`).Status
			}()
		}
		wg.Wait()
		if codes[0]+codes[1] != 200+409 {
			t.Errorf("round %d: statuses %v, want one 200 and one 409", i, codes)
		}
	}
}

type page struct {
	Tickets    []map[string]any `json:"tickets"`
	NextCursor string           `json:"next_cursor"`
}

func (s *service) list(t *testing.T, caller, cursor string) page {
	t.Helper()
	path := "/tickets?caller=" + caller
	if cursor != "" {
		path += "&cursor=" + cursor
	}
	r := s.Do(t, "GET", path, "")
	if r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
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
		want = append([]string{s.create(t, "caller-a", fmt.Sprintf("issue %d", i)).TicketID}, want...)
	}
	for range 10 {
		s.create(t, "caller-exact", "x")
	}
	s.create(t, "caller-b", "b's ticket")
	s.Do(t, "POST", "/tickets/"+want[0]+"/comments", `{"comment_text":"not in listings"}`)

	var got []string
	var cursors []string
	cur := ""
	for pageNo := 0; ; pageNo++ {
		p := s.list(t, "caller-a", cur)
		for _, tk := range p.Tickets {
			if tk["caller_id"] != "caller-a" {
				t.Errorf("foreign ticket %v", tk)
			}
			if _, ok := tk["comments"]; ok {
				t.Errorf("listing returned comments: %v", tk)
			}
			got = append(got, tk["ticket_id"].(string))
		}
		if wantLen := []int{10, 10, 3}[pageNo]; len(p.Tickets) != wantLen {
			t.Fatalf("page %d has %d tickets, want %d", pageNo, len(p.Tickets), wantLen)
		}
		if p.NextCursor == "" {
			break
		}
		cursors = append(cursors, p.NextCursor)
		cur = p.NextCursor
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("order:\n got %v\nwant %v", got, want)
	}

	if p := s.list(t, "caller-exact", ""); len(p.Tickets) != 10 || p.NextCursor != "" {
		t.Errorf("exactly one page: %d tickets, cursor %q", len(p.Tickets), p.NextCursor)
	}
	if p := s.list(t, "nobody", ""); p.Tickets == nil || len(p.Tickets) != 0 || p.NextCursor != "" {
		t.Errorf("unknown caller: %+v", p)
	}

	tampered := []byte(cursors[0])
	tampered[len(tampered)/2] ^= 0x01
	if tampered[len(tampered)/2] == '-' || tampered[len(tampered)/2] == '_' {
		tampered[len(tampered)/2] = 'A'
	}
	tests := []struct {
		name, query string
		field       string
	}{
		{"cursor of another caller", "caller=caller-b&cursor=" + cursors[0], ""},
		{"tampered cursor", "caller=caller-a&cursor=" + string(tampered), ""},
		{"garbage cursor", "caller=caller-a&cursor=bm90IGEgY3Vyc29y", ""},
		{"missing caller", "", "caller"},
		{"blank caller", "caller=", "caller"},
		{"caller too long", "caller=" + strings.Repeat("c", itsm.MaxCallerIDLen+1), "caller"},
		// Not a silent pick of one value or a silent full listing.
		{"caller twice", "caller=caller-a&caller=caller-b", "caller"},
		{"unknown parameter", "caller=caller-a&calller=caller-b", "calller"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, "GET", "/tickets?"+tt.query, "")
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
	if a != "2026-02-09T12:00:00.300000Z" || !(a < b) || c != "2026-02-09T12:00:00.000000Z" || !(c < a) {
		t.Errorf("a=%s b=%s c=%s", a, b, c)
	}
}

// The template is the source of truth for the schema: if the CDK renamed
// the index, listing must fail here rather than in production.
func TestRenamedIndexBreaksListing(t *testing.T) {
	path := testenv.Template(t, "dev", "itsm")
	tmpl, err := cfntables.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for id, r := range tmpl.Resources {
		r.Properties = []byte(strings.ReplaceAll(string(r.Properties), `"CallerIdIndex"`, `"ByCallerIndex"`))
		tmpl.Resources[id] = r
	}
	s := newService(t, options{tmpl: tmpl})
	s.create(t, "caller-a", "x")
	r := s.Do(t, "GET", "/tickets?caller=caller-a", "")
	apitest.WantError(t, r, 500, "internal", "", "")
	if strings.Contains(string(r.Body), "CallerIdIndex") || strings.Contains(string(r.Body), s.Table) {
		t.Errorf("500 leaks internals: %s", r.Body)
	}
}
