package load

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"

	pmcontract "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	itsmcontract "github.com/dynastack/dynastack/constructs/itsm/contract"
	nucleuscontract "github.com/dynastack/dynastack/constructs/nucleus/contract"
	rezcontract "github.com/dynastack/dynastack/constructs/rezagent/contract"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	pmclient "github.com/dynastack/dynastack/lambdas/client/agenticpm"
	itsmclient "github.com/dynastack/dynastack/lambdas/client/itsm"
	nucleusclient "github.com/dynastack/dynastack/lambdas/client/nucleus"
	"github.com/dynastack/dynastack/lambdas/client/opt"
	rezclient "github.com/dynastack/dynastack/lambdas/client/rezagent"
	stakclient "github.com/dynastack/dynastack/lambdas/client/stak"
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
				CallerId: new(itsmcontract.SessionCallerID(run)), IssueDescription: new(fmt.Sprintf("load ticket %d", i))})
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
			return answer(c.ITSM().AddCommentWithResponse(ctx, u, itsmclient.AddCommentJSONRequestBody{CommentText: new(fmt.Sprintf("load comment %d", i))}))
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
				MessageType: new("load_test"), CreatedBy: &run, Payload: payload})
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
			params := &rezclient.ListMessagesParams{Limit: new(100)}
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
// leave exactly one audit entry in the schedule's log. Every call goes
// through the generated client (lambdas/client/nucleus); X-User-Id, the
// user every change is audited with, is the scenario's header.
func Nucleus() Scenario {
	h := http.Header{}
	h.Set("X-User-Id", "load@example.com")
	prefix := func(run string) string { return run + " " }
	return Scenario{
		Service: nucleuscontract.Name, Header: h,
		Create: func(ctx context.Context, c *Client, run string, i int) (string, Answer, error) {
			r, err := c.Nucleus().CreateScheduleWithResponse(ctx, nil, nucleusclient.CreateScheduleJSONRequestBody{
				ScheduleName: new(fmt.Sprintf("%s%d", prefix(run), i)), StartCron: new("0 8 * * MON-FRI"), EndCron: new("0 18 * * MON-FRI"),
				Timezone: new("Europe/Berlin"), Enabled: new(false)})
			a, err := answer(r, err)
			if err != nil || r.JSON201 == nil {
				return "", a, err
			}
			return r.JSON201.ScheduleId, a, nil
		},
		Read: func(ctx context.Context, c *Client, id string) (Answer, error) {
			u, err := uuid.Parse(id)
			if err != nil {
				return Answer{}, err
			}
			return answer(c.Nucleus().GetScheduleWithResponse(ctx, u, nil))
		},
		// An end time not used before in this run (each acknowledged change
		// must write one audit entry: a PATCH that changes nothing writes
		// none, by design). Not a rename: the list is by name, and a
		// schedule renamed during a walk can be met at its old and its new
		// place (docs/schemas/nucleus.md).
		Update: func(ctx context.Context, c *Client, id string, i int) (Answer, error) {
			u, err := uuid.Parse(id)
			if err != nil {
				return Answer{}, err
			}
			return answer(c.Nucleus().UpdateScheduleWithResponse(ctx, u, nil,
				nucleusclient.UpdateScheduleJSONRequestBody{EndCron: new(fmt.Sprintf("%d %d * * SAT", i%60, (i/60)%24))}))
		},
		Page: func(ctx context.Context, c *Client, run, cursor string) ([]string, string, Answer, error) {
			r, err := c.Nucleus().ListSchedulesWithResponse(ctx, &nucleusclient.ListSchedulesParams{Limit: new(100), Cursor: optional(cursor)})
			a, err := answer(r, err)
			if err != nil || r.JSON200 == nil {
				return nil, "", a, err
			}
			var ids []string
			for _, s := range opt.Value(r.JSON200.Schedules) {
				if strings.HasPrefix(s.ScheduleName, prefix(run)) && len(s.ScheduleName) > len(prefix(run)) {
					ids = append(ids, s.ScheduleId)
				}
			}
			return ids, opt.Value(r.JSON200.NextCursor), a, nil
		},
		Verify: func(ctx context.Context, c *Client, run string, updates map[string]int) []string {
			var problems []string
			for id, n := range updates {
				var entries int
				var next string
				a, err := Stored(func() (Answer, error) {
					r, err := c.Nucleus().EntityLogWithResponse(ctx, "schedule", id, &nucleusclient.EntityLogParams{Limit: new(100)})
					if err == nil && r.JSON200 != nil {
						entries, next = len(opt.Value(r.JSON200.Entries)), opt.Value(r.JSON200.NextCursor)
					}
					return answer(r, err)
				})
				if err != nil || a.Status != 200 {
					problems = append(problems, fmt.Sprintf("audit of schedule %s: %d %v", id, a.Status, err))
				} else if entries != n+1 || next != "" {
					problems = append(problems, fmt.Sprintf("schedule %s has %d audit entries, want %d (its create and %d acknowledged changes)", id, entries, n+1, n))
				}
			}
			return problems
		},
	}
}

// AgenticPM: projects named after the run; updates record project events,
// each of which must be stored exactly once. Every call goes through the
// generated client (lambdas/client/agenticpm).
func AgenticPM() Scenario {
	return Scenario{
		Service: pmcontract.Name,
		Create: func(ctx context.Context, c *Client, run string, i int) (string, Answer, error) {
			r, err := c.AgenticPM().CreateProjectWithResponse(ctx, nil, pmclient.CreateProjectJSONRequestBody{
				Name: &run, Source: new("jira"), SourceProjectKey: new(fmt.Sprintf("L%d", i)), AutonomyLevel: new("monitoring")})
			a, err := answer(r, err)
			if err != nil || r.JSON201 == nil {
				return "", a, err
			}
			return r.JSON201.Id, a, nil
		},
		Read: func(ctx context.Context, c *Client, id string) (Answer, error) {
			u, err := uuid.Parse(id)
			if err != nil {
				return Answer{}, err
			}
			return answer(c.AgenticPM().GetProjectWithResponse(ctx, u))
		},
		Update: func(ctx context.Context, c *Client, id string, i int) (Answer, error) {
			u, err := uuid.Parse(id)
			if err != nil {
				return Answer{}, err
			}
			return answer(c.AgenticPM().RecordProjectEventWithResponse(ctx, u, nil,
				pmclient.EventRequest{EventType: new("heartbeat"), Severity: new("info"), Summary: new(fmt.Sprintf("load %d", i))}))
		},
		Page: func(ctx context.Context, c *Client, run, cursor string) ([]string, string, Answer, error) {
			r, err := c.AgenticPM().ListProjectsWithResponse(ctx, &pmclient.ListProjectsParams{Status: new(pmclient.Active), Limit: new(100), Cursor: optional(cursor)})
			a, err := answer(r, err)
			if err != nil || r.JSON200 == nil {
				return nil, "", a, err
			}
			var ids []string
			for _, p := range opt.Value(r.JSON200.Items) {
				if p.Name == run {
					ids = append(ids, p.Id)
				}
			}
			return ids, opt.Value(r.JSON200.NextCursor), a, nil
		},
		Verify: func(ctx context.Context, c *Client, run string, updates map[string]int) []string {
			var problems []string
			for id, n := range updates {
				var events int
				var next string
				a, err := Stored(func() (Answer, error) {
					u, err := uuid.Parse(id)
					if err != nil {
						return Answer{}, err
					}
					r, err := c.AgenticPM().ListProjectEventsWithResponse(ctx, u, &pmclient.ListProjectEventsParams{Limit: new(100)})
					if err == nil && r.JSON200 != nil {
						events, next = len(opt.Value(r.JSON200.Items)), opt.Value(r.JSON200.NextCursor)
					}
					return answer(r, err)
				})
				if err != nil || a.Status != 200 {
					problems = append(problems, fmt.Sprintf("events of project %s: %d %v", id, a.Status, err))
				} else if events != n || next != "" {
					problems = append(problems, fmt.Sprintf("project %s has %d events, %d were acknowledged", id, events, n))
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
// Every call goes through the generated client (lambdas/client/stak); the
// token is the scenario's Authorization header.
func Stak(token string) Scenario {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+token)
	page := func(ctx context.Context, c *Client, run, cursor string) ([]string, string, Answer, error) {
		r, err := c.Stak().FeedWithResponse(ctx, StakTenant, run, StakUser, &stakclient.FeedParams{Limit: new(100), Cursor: optional(cursor)})
		a, err := answer(r, err)
		if err != nil || r.JSON200 == nil {
			return nil, "", a, err
		}
		var ids []string
		for _, m := range opt.Value(r.JSON200.Messages) {
			// A Stak message's id is in the document's outer "audiences" object.
			ids = append(ids, m.Audiences.Id)
		}
		return ids, opt.Value(r.JSON200.NextCursor), a, nil
	}
	return Scenario{
		Service: stakcontract.Name, Header: h,
		Setup: func(ctx context.Context, c *Client, run string) error {
			tenant, err := c.Stak().PutTenantWithResponse(ctx, StakTenant, stakclient.PutTenantJSONRequestBody{Title: new("load test")})
			if a, err := answer(tenant, err); err != nil || a.Status != 200 {
				return fmt.Errorf("put tenant %s: %d %v %s", StakTenant, a.Status, err, cut(a.Body))
			}
			inbox, err := c.Stak().PutInboxWithResponse(ctx, StakTenant, run, stakclient.PutInboxJSONRequestBody{Title: new("load " + run)})
			if a, err := answer(inbox, err); err != nil || a.Status != 200 {
				return fmt.Errorf("put inbox %s: %d %v %s", run, a.Status, err, cut(a.Body))
			}
			return nil
		},
		Create: func(ctx context.Context, c *Client, run string, i int) (string, Answer, error) {
			var body stakclient.PublishJSONRequestBody
			body.Sender = new("load")
			to := opt.Set(&body.Audiences)
			to.Kind, to.Uids = new("users"), &[]string{StakUser}
			opt.Set(&body.Message).Title = new(fmt.Sprintf("load %d", i))
			r, err := c.Stak().PublishWithResponse(ctx, StakTenant, run, nil, body)
			a, err := answer(r, err)
			if err != nil || r.JSON201 == nil {
				return "", a, err
			}
			return r.JSON201.Audiences.Id, a, nil
		},
		Read: func(ctx context.Context, c *Client, id string) (Answer, error) {
			return answer(c.Stak().MarkReadWithResponse(ctx, StakTenant, c.run, StakUser, id))
		},
		Page: page,
		// verify has read every acknowledged message by now: published
		// and read both equal the acknowledged publishes.
		Verify: func(ctx context.Context, c *Client, run string, _ map[string]int) []string {
			var walked int
			if ids, err := walk(ctx, c, Scenario{Page: page}, run); err == nil {
				walked = len(ids)
			}
			var published, read, unread int64
			a, err := Stored(func() (Answer, error) {
				r, err := c.Stak().StatsWithResponse(ctx, StakTenant, run, StakUser)
				if err == nil && r.JSON200 != nil {
					published, read, unread = r.JSON200.Published, r.JSON200.Read, r.JSON200.Unread
				}
				return answer(r, err)
			})
			if err != nil || a.Status != 200 {
				return []string{fmt.Sprintf("stats: %d %v", a.Status, err)}
			}
			if published != int64(walked) || read != published || unread != 0 {
				return []string{fmt.Sprintf("stats published %d, read %d, unread %d, want published = read = %d (the messages listed, all read), unread 0", published, read, unread, walked)}
			}
			return nil
		},
	}
}

// optional is the cursor as a generated client's parameter: nil for the
// first page.
func optional(cursor string) *string {
	if cursor == "" {
		return nil
	}
	return &cursor
}
