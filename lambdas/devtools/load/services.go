package load

import (
	"context"
	"fmt"
	"net/http"

	"github.com/google/uuid"

	pmcontract "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	itsmcontract "github.com/dynastack/dynastack/constructs/itsm/contract"
	nucleuscontract "github.com/dynastack/dynastack/constructs/nucleus/contract"
	rezcontract "github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/constructs/service"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	itsmclient "github.com/dynastack/dynastack/lambdas/client/itsm"
	rezclient "github.com/dynastack/dynastack/lambdas/client/rezagent"
)

// Scenarios returns the mix of every service as make dev serves it. The
// Stak scenario needs an end-user token of tenant StakTenant and user
// StakUser (make token TENANT=load USER=u1); without one it is left out.
func Scenarios(stakToken string) []Scenario {
	out := []Scenario{ITSM(), RezAgent(), Nucleus(), AgenticPM()}
	if stakToken != "" {
		out = append(out, Stak(stakToken))
	}
	return out
}

// ITSM: tickets of one caller (the run's tag); updates append comments,
// which must each be stored exactly once. Every call goes through the
// generated client (lambdas/client/itsm).
func ITSM() Scenario {
	return Scenario{
		Service: itsmcontract.Name,
		Create: func(ctx context.Context, c *Client, run string, i int) (string, Answer, error) {
			r, err := c.ITSM().CreateTicketWithResponse(ctx, nil, itsmclient.CreateTicketJSONRequestBody{
				CallerId: ptr(itsmcontract.SessionCallerID(run)), IssueDescription: ptr(fmt.Sprintf("load ticket %d", i))})
			a, err := answer(r, err)
			if err != nil || r.JSON201 == nil {
				return "", a, err
			}
			return r.JSON201.TicketId, a, nil
		},
		Read: func(ctx context.Context, c *Client, id string) (Answer, error) {
			u, err := uuid.Parse(id)
			if err != nil {
				return Answer{}, err
			}
			return answer(c.ITSM().GetTicketWithResponse(ctx, u))
		},
		Update: func(ctx context.Context, c *Client, id string, i int) (Answer, error) {
			u, err := uuid.Parse(id)
			if err != nil {
				return Answer{}, err
			}
			return answer(c.ITSM().AddCommentWithResponse(ctx, u, itsmclient.AddCommentJSONRequestBody{CommentText: ptr(fmt.Sprintf("load comment %d", i))}))
		},
		Page: func(ctx context.Context, c *Client, run, cursor string) ([]string, string, Answer, error) {
			params := &itsmclient.ListTicketsParams{Caller: itsmcontract.SessionCallerID(run)}
			if cursor != "" {
				params.Cursor = &cursor
			}
			r, err := c.ITSM().ListTicketsWithResponse(ctx, params)
			a, err := answer(r, err)
			if err != nil || r.JSON200 == nil {
				return nil, "", a, err
			}
			var ids []string
			if r.JSON200.Tickets != nil {
				for _, t := range *r.JSON200.Tickets {
					ids = append(ids, t.TicketId)
				}
			}
			var next string
			if r.JSON200.NextCursor != nil {
				next = *r.JSON200.NextCursor
			}
			return ids, next, a, nil
		},
		Verify: func(ctx context.Context, c *Client, run string, updates map[string]int) []string {
			var problems []string
			for id, n := range updates {
				var comments int
				a, err := Stored(func() (Answer, error) {
					u, err := uuid.Parse(id)
					if err != nil {
						return Answer{}, err
					}
					r, err := c.ITSM().GetTicketWithResponse(ctx, u)
					if err == nil && r.JSON200 != nil && r.JSON200.Comments != nil {
						comments = len(*r.JSON200.Comments)
					}
					return answer(r, err)
				})
				if err != nil || a.Status != 200 {
					problems = append(problems, fmt.Sprintf("ticket %s: %d %v", id, a.Status, err))
				} else if comments != n {
					problems = append(problems, fmt.Sprintf("ticket %s holds %d comments, %d were acknowledged", id, comments, n))
				}
			}
			return problems
		},
	}
}

// RezAgent: messages created by the run's tag, listed over the stage (the
// pipeline in make dev moves them on meanwhile); no update of its own, as
// the processor owns the status. Every call goes through the generated
// client (lambdas/client/rezagent).
func RezAgent() Scenario {
	return Scenario{
		Service: rezcontract.Name,
		Create: func(ctx context.Context, c *Client, run string, i int) (string, Answer, error) {
			var payload any = map[string]any{"text": fmt.Sprintf("load %d", i)}
			r, err := c.RezAgent().CreateMessageWithResponse(ctx, nil, rezclient.CreateMessageJSONRequestBody{
				MessageType: ptr("load_test"), CreatedBy: &run, Payload: payload})
			a, err := answer(r, err)
			if err != nil || r.JSON201 == nil {
				return "", a, err
			}
			return r.JSON201.MessageId, a, nil
		},
		Read: func(ctx context.Context, c *Client, id string) (Answer, error) {
			u, err := uuid.Parse(id)
			if err != nil {
				return Answer{}, err
			}
			return answer(c.RezAgent().GetMessageWithResponse(ctx, u))
		},
		Page: func(ctx context.Context, c *Client, run, cursor string) ([]string, string, Answer, error) {
			params := &rezclient.ListMessagesParams{Limit: ptr(100)}
			if cursor != "" {
				params.Cursor = &cursor
			}
			r, err := c.RezAgent().ListMessagesWithResponse(ctx, params)
			a, err := answer(r, err)
			if err != nil || r.JSON200 == nil {
				return nil, "", a, err
			}
			var ids []string
			if r.JSON200.Messages != nil {
				for _, m := range *r.JSON200.Messages {
					if m.CreatedBy == run {
						ids = append(ids, m.MessageId)
					}
				}
			}
			var next string
			if r.JSON200.NextCursor != nil {
				next = *r.JSON200.NextCursor
			}
			return ids, next, a, nil
		},
	}
}

// Nucleus: schedules named after the run; every create and rename must
// leave exactly one audit entry in the schedule's log.
func Nucleus() Scenario {
	type schedule struct {
		ID   string `json:"schedule_id"`
		Name string `json:"schedule_name"`
	}
	h := http.Header{}
	h.Set("X-User-Id", "load@example.com")
	prefix := func(run string) string { return run + " " }
	return Scenario{
		Service: nucleuscontract.Name, Header: h,
		Create: func(ctx context.Context, c *Client, run string, i int) (string, Answer, error) {
			var s schedule
			a, err := c.Do(ctx, nucleuscontract.CreateSchedule.Method, nucleuscontract.CreateSchedule.URL(), map[string]any{
				"schedule_name": fmt.Sprintf("%s%d", prefix(run), i), "start_cron": "0 8 * * MON-FRI", "end_cron": "0 18 * * MON-FRI",
				"timezone": "Europe/Berlin", "enabled": false,
			}, &s)
			return s.ID, a, err
		},
		Read: func(ctx context.Context, c *Client, id string) (Answer, error) {
			return c.Do(ctx, nucleuscontract.GetSchedule.Method, nucleuscontract.GetSchedule.URL(id), nil, nil)
		},
		// An end time not used before in this run (each acknowledged change
		// must write one audit entry: a PATCH that changes nothing writes
		// none, by design). Not a rename: the list is by name, and a
		// schedule renamed during a walk can be met at its old and its new
		// place (docs/schemas/nucleus.md).
		Update: func(ctx context.Context, c *Client, id string, i int) (Answer, error) {
			return c.Do(ctx, nucleuscontract.UpdateSchedule.Method, nucleuscontract.UpdateSchedule.URL(id), map[string]any{"end_cron": fmt.Sprintf("%d %d * * SAT", i%60, (i/60)%24)}, nil)
		},
		Page: func(ctx context.Context, c *Client, run, cursor string) ([]string, string, Answer, error) {
			var page struct {
				Schedules []schedule `json:"schedules"`
				Next      string     `json:"next_cursor"`
			}
			a, err := c.Do(ctx, nucleuscontract.ListSchedules.Method, nucleuscontract.ListSchedules.URLQuery(service.Values{service.Limit: "100", service.Cursor: cursor}), nil, &page)
			var ids []string
			for _, s := range page.Schedules {
				if len(s.Name) > len(prefix(run)) && s.Name[:len(prefix(run))] == prefix(run) {
					ids = append(ids, s.ID)
				}
			}
			return ids, page.Next, a, err
		},
		Verify: func(ctx context.Context, c *Client, run string, updates map[string]int) []string {
			var problems []string
			for id, n := range updates {
				var log struct {
					Entries []map[string]any `json:"entries"`
					Next    string           `json:"next_cursor"`
				}
				a, err := Stored(func() (Answer, error) {
					return c.Do(ctx, nucleuscontract.EntityLog.Method, nucleuscontract.EntityLog.URLQuery(service.Values{service.Limit: "100"}, "schedule", id), nil, &log)
				})
				if err != nil || a.Status != 200 {
					problems = append(problems, fmt.Sprintf("audit of schedule %s: %d %v", id, a.Status, err))
				} else if len(log.Entries) != n+1 || log.Next != "" {
					problems = append(problems, fmt.Sprintf("schedule %s has %d audit entries, want %d (its create and %d acknowledged changes)", id, len(log.Entries), n+1, n))
				}
			}
			return problems
		},
	}
}

// AgenticPM: projects named after the run; updates record project events,
// each of which must be stored exactly once.
func AgenticPM() Scenario {
	type item struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	return Scenario{
		Service: pmcontract.Name,
		Create: func(ctx context.Context, c *Client, run string, i int) (string, Answer, error) {
			var p item
			a, err := c.Do(ctx, pmcontract.CreateProject.Method, pmcontract.CreateProject.URL(), map[string]any{"name": run, "source": "jira", "sourceProjectKey": fmt.Sprintf("L%d", i), "autonomyLevel": "monitoring"}, &p)
			return p.ID, a, err
		},
		Read: func(ctx context.Context, c *Client, id string) (Answer, error) {
			return c.Do(ctx, pmcontract.GetProject.Method, pmcontract.GetProject.URL(id), nil, nil)
		},
		Update: func(ctx context.Context, c *Client, id string, i int) (Answer, error) {
			return c.Do(ctx, pmcontract.RecordProjectEvent.Method, pmcontract.RecordProjectEvent.URL(id), map[string]any{"eventType": "heartbeat", "severity": "info", "summary": fmt.Sprintf("load %d", i)}, nil)
		},
		Page: func(ctx context.Context, c *Client, run, cursor string) ([]string, string, Answer, error) {
			var page struct {
				Items []item `json:"items"`
				Next  string `json:"nextCursor"`
			}
			a, err := c.Do(ctx, pmcontract.ListProjects.Method, pmcontract.ListProjects.URLQuery(service.Values{pmcontract.ParamStatus: "active", service.Limit: "100", service.Cursor: cursor}), nil, &page)
			var ids []string
			for _, p := range page.Items {
				if p.Name == run {
					ids = append(ids, p.ID)
				}
			}
			return ids, page.Next, a, err
		},
		Verify: func(ctx context.Context, c *Client, run string, updates map[string]int) []string {
			var problems []string
			for id, n := range updates {
				var page struct {
					Items []item `json:"items"`
					Next  string `json:"nextCursor"`
				}
				a, err := Stored(func() (Answer, error) {
					return c.Do(ctx, pmcontract.ListProjectEvents.Method, pmcontract.ListProjectEvents.URLQuery(service.Values{service.Limit: "100"}, id), nil, &page)
				})
				if err != nil || a.Status != 200 {
					problems = append(problems, fmt.Sprintf("events of project %s: %d %v", id, a.Status, err))
				} else if len(page.Items) != n || page.Next != "" {
					problems = append(problems, fmt.Sprintf("project %s has %d events, %d were acknowledged", id, len(page.Items), n))
				}
			}
			return problems
		},
	}
}

// Stak's scenario publishes to one user of tenant StakTenant, in an inbox
// of the run; its token must be of that tenant and user.
const (
	StakTenant = "load"
	StakUser   = "u1"
)

// Stak: the run's inbox gets messages for one user; reading marks a
// message read (the only read by id Stak has). The feed lists them, and
// the user's counters must equal the acknowledged publishes and reads.
func Stak(token string) Scenario {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+token)
	page := func(ctx context.Context, c *Client, run, cursor string) ([]string, string, Answer, error) {
		var page struct {
			Messages []stakMessage `json:"messages"`
			Next     string        `json:"next_cursor"`
		}
		a, err := c.Do(ctx, stakcontract.Feed.Method, stakcontract.Feed.URLQuery(service.Values{service.Limit: "100", service.Cursor: cursor}, StakTenant, run, StakUser), nil, &page)
		ids := make([]string, len(page.Messages))
		for i, m := range page.Messages {
			ids[i] = m.Header.ID
		}
		return ids, page.Next, a, err
	}
	return Scenario{
		Service: stakcontract.Name, Header: h,
		Setup: func(ctx context.Context, c *Client, run string) error {
			for _, put := range []struct {
				route service.Route
				path  string
				body  map[string]any
			}{
				{stakcontract.PutTenant, stakcontract.PutTenant.URL(StakTenant), map[string]any{"title": "load test"}},
				{stakcontract.PutInbox, stakcontract.PutInbox.URL(StakTenant, run), map[string]any{"title": "load " + run}},
			} {
				a, err := c.Do(ctx, put.route.Method, put.path, put.body, nil)
				if err != nil {
					return err
				}
				if a.Status != 200 {
					return fmt.Errorf("%s %s: %d %s", put.route.Method, put.path, a.Status, cut(a.Body))
				}
			}
			return nil
		},
		Create: func(ctx context.Context, c *Client, run string, i int) (string, Answer, error) {
			var m stakMessage
			a, err := c.Do(ctx, stakcontract.Publish.Method, stakcontract.Publish.URL(StakTenant, run), map[string]any{
				"sender": "load", "audiences": map[string]any{"kind": "users", "uids": []string{StakUser}},
				"message": map[string]any{"title": fmt.Sprintf("load %d", i)},
			}, &m)
			return m.Header.ID, a, err
		},
		Read: func(ctx context.Context, c *Client, id string) (Answer, error) {
			return c.Do(ctx, stakcontract.MarkRead.Method, stakcontract.MarkRead.URL(StakTenant, c.run, StakUser, id), nil, nil)
		},
		Page: page,
		// verify has read every acknowledged message by now: published
		// and read both equal the acknowledged publishes.
		Verify: func(ctx context.Context, c *Client, run string, _ map[string]int) []string {
			var walked int
			if ids, err := walk(ctx, c, Scenario{Page: page}, run); err == nil {
				walked = len(ids)
			}
			var stats struct {
				Published, Read, Unread int64
			}
			a, err := Stored(func() (Answer, error) {
				return c.Do(ctx, stakcontract.Stats.Method, stakcontract.Stats.URL(StakTenant, run, StakUser), nil, &stats)
			})
			if err != nil || a.Status != 200 {
				return []string{fmt.Sprintf("stats: %d %v", a.Status, err)}
			}
			if stats.Published != int64(walked) || stats.Read != stats.Published || stats.Unread != 0 {
				return []string{fmt.Sprintf("stats %+v, want published = read = %d (the messages listed, all read), unread 0", stats, walked)}
			}
			return nil
		},
	}
}

// stakMessage: a Stak message's id is in the document's outer
// "audiences" object.
type stakMessage struct {
	Header struct {
		ID string `json:"id"`
	} `json:"audiences"`
}
