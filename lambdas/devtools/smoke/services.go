package smoke

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"

	itsmcontract "github.com/dynastack/dynastack/constructs/itsm/contract"
	pmclient "github.com/dynastack/dynastack/lambdas/client/agenticpm"
	itsmclient "github.com/dynastack/dynastack/lambdas/client/itsm"
	nucleusclient "github.com/dynastack/dynastack/lambdas/client/nucleus"
	"github.com/dynastack/dynastack/lambdas/client/opt"
	rezclient "github.com/dynastack/dynastack/lambdas/client/rezagent"
	stakclient "github.com/dynastack/dynastack/lambdas/client/stak"
)

// itsm: a ticket of caller <run>, its description saying it is smoke
// data. ITSM has no delete: the ticket is walked to closed (the final
// status), which is the cleanup the API allows. Every call goes through
// the generated client (lambdas/client/itsm).
func itsm(ctx context.Context, s *suite) {
	c, cerr := itsmclient.NewClientWithResponses(s.c.base, itsmclient.WithHTTPClient(s.c.http), itsmclient.WithRequestEditorFn(acceptJSON))
	caller := itsmcontract.SessionCallerID(s.t.Run)
	var id uuid.UUID
	if !s.check("create ticket", func() error {
		if cerr != nil {
			return cerr
		}
		r, err := c.CreateTicketWithResponse(ctx, nil, itsmclient.CreateTicketJSONRequestBody{CallerId: &caller,
			IssueDescription: new("dynastack smoke test " + s.t.Run + " (smoke data, closed by the test)")})
		if err := s.c.answered(r, err, s201); err != nil {
			return err
		}
		id, err = uuid.Parse(r.JSON201.TicketId)
		return err
	}) {
		return
	}
	s.note("ticket %s of caller %s stays (ITSM has no delete), closed", id, caller)
	s.check("read ticket", func() error {
		r, err := c.GetTicketWithResponse(ctx, id)
		if err := s.c.answered(r, err, s200); err != nil {
			return err
		}
		return want("status", r.JSON200.Status, "open")
	})
	s.check("list tickets of the caller", func() error {
		return s.eventually(ctx, func() error {
			r, err := c.ListTicketsWithResponse(ctx, &itsmclient.ListTicketsParams{Caller: caller})
			if err := s.c.answered(r, err, s200); err != nil {
				return err
			}
			var n int
			if r.JSON200.Tickets != nil {
				for _, x := range *r.JSON200.Tickets {
					if x.TicketId == id.String() {
						return nil
					}
				}
				n = len(*r.JSON200.Tickets)
			}
			return fmt.Errorf("ticket %s not in the caller's list (%d tickets)", id, n)
		})
	})
	s.check("comment", func() error {
		r, err := c.AddCommentWithResponse(ctx, id, itsmclient.AddCommentJSONRequestBody{CommentText: new("smoke comment")})
		if err := s.c.answered(r, err, s201); err != nil {
			return err
		}
		if n := len(opt.Value(r.JSON201.Comments)); n != 1 {
			return fmt.Errorf("%d comments after one, want 1", n)
		}
		return nil
	})
	for _, to := range []string{"in_progress", "resolved", "closed"} {
		s.check("status to "+to, func() error {
			r, err := c.SetStatusWithResponse(ctx, id, itsmclient.SetStatusJSONRequestBody{Status: &to})
			if err := s.c.answered(r, err, s200); err != nil {
				return err
			}
			return want("status", r.JSON200.Status, to)
		})
	}
	s.check("closed ticket refuses a comment", func() error {
		r, err := c.AddCommentWithResponse(ctx, id, itsmclient.AddCommentJSONRequestBody{CommentText: new("after close")})
		return s.c.answered(r, err, []int{409})
	})
}

// rezagent: a message created by <run>; the pipeline (SNS, queue,
// processor, ntfy) must move it to completed. There is no delete: the
// message expires with rez_agent's TTL (90 days), and its notification
// reaches the stage's ntfy topic. Every call goes through the generated
// client (lambdas/client/rezagent).
func rezagent(ctx context.Context, s *suite) {
	c, cerr := rezclient.NewClientWithResponses(s.c.base, rezclient.WithHTTPClient(s.c.http), rezclient.WithRequestEditorFn(acceptJSON))
	var id uuid.UUID
	if !s.check("create message", func() error {
		if cerr != nil {
			return cerr
		}
		var payload any = map[string]any{"text": "dynastack smoke test " + s.t.Run + " (ignore)"}
		r, err := c.CreateMessageWithResponse(ctx, nil, rezclient.CreateMessageJSONRequestBody{
			MessageType: new("smoke_test"), CreatedBy: &s.t.Run, Payload: payload})
		if err := s.c.answered(r, err, s201); err != nil {
			return err
		}
		id, err = uuid.Parse(r.JSON201.MessageId)
		return err
	}) {
		return
	}
	s.note("message %s (created_by %s, message_type smoke_test) stays until its TTL (90 days; no delete); its notification went to the stage's ntfy topic (make dev: its ntfy sink)", id, s.t.Run)
	s.check("read message", func() error {
		r, err := c.GetMessageWithResponse(ctx, id)
		if err := s.c.answered(r, err, s200); err != nil {
			return err
		}
		return want("created_by", r.JSON200.CreatedBy, s.t.Run)
	})
	s.check("list messages", func() error {
		return s.eventually(ctx, func() error {
			r, err := c.ListMessagesWithResponse(ctx, &rezclient.ListMessagesParams{Limit: new(100)})
			if err := s.c.answered(r, err, s200); err != nil {
				return err
			}
			page := opt.Value(r.JSON200.Messages)
			for _, x := range page {
				if x.MessageId == id.String() {
					return nil
				}
			}
			return fmt.Errorf("message %s not on the newest page (%d messages)", id, len(page))
		})
	})
	s.check("pipeline delivers (status completed)", func() error {
		return s.eventually(ctx, func() error {
			r, err := c.GetMessageWithResponse(ctx, id)
			if err := s.c.answered(r, err, s200); err != nil {
				return err
			}
			if r.JSON200.Status == "failed" {
				return fmt.Errorf("status failed: %s (not retried)", opt.Value(r.JSON200.ErrorMessage))
			}
			return want("status", r.JSON200.Status, "completed")
		})
	})
	s.check("metrics", func() error {
		r, err := c.MetricsWithResponse(ctx, nil)
		return s.c.answered(r, err, s200)
	})
}

// nucleus: a disabled schedule named <run>, changed once (two audit
// entries), then deleted: nothing stays but the audit entries of its
// create, change and delete, which the audit log keeps by design. Every
// call goes through the generated client (lambdas/client/nucleus); each
// change names its user (X-User-Id, a typed parameter of the writes).
func nucleus(ctx context.Context, s *suite) {
	c, cerr := nucleusclient.NewClientWithResponses(s.c.base, nucleusclient.WithHTTPClient(s.c.http), nucleusclient.WithRequestEditorFn(acceptJSON))
	user := new("smoke@dynastack.invalid")
	var id uuid.UUID
	if !s.check("create schedule", func() error {
		if cerr != nil {
			return cerr
		}
		r, err := c.CreateScheduleWithResponse(ctx, &nucleusclient.CreateScheduleParams{XUserId: user}, nucleusclient.CreateScheduleJSONRequestBody{
			ScheduleName: &s.t.Run, StartCron: new("0 8 * * MON-FRI"), EndCron: new("0 18 * * MON-FRI"), Timezone: new("UTC"), Enabled: new(false)})
		if err := s.c.answered(r, err, s201); err != nil {
			return err
		}
		id, err = uuid.Parse(r.JSON201.ScheduleId)
		return err
	}) {
		return
	}
	deleted := false
	s.cleanup("delete schedule", func() error {
		if deleted {
			return nil
		}
		r, err := c.DeleteScheduleWithResponse(ctx, id, &nucleusclient.DeleteScheduleParams{XUserId: user})
		return s.c.answered(r, err, []int{204, 404})
	})
	s.note("schedule %s deleted; its audit entries stay (the audit log is append-only)", id)
	s.check("read schedule", func() error {
		r, err := c.GetScheduleWithResponse(ctx, id, nil)
		if err := s.c.answered(r, err, s200); err != nil {
			return err
		}
		if r.JSON200.Schedule == nil {
			return errors.New("the answer has no schedule")
		}
		return want("schedule_name", r.JSON200.Schedule.ScheduleName, s.t.Run)
	})
	s.check("list schedules", func() error {
		return s.eventually(ctx, func() error {
			found, n := false, 0
			err := walk(func(cursor *string) (*string, error) {
				r, err := c.ListSchedulesWithResponse(ctx, &nucleusclient.ListSchedulesParams{Limit: new(100), Cursor: cursor})
				if err := s.c.answered(r, err, s200); err != nil {
					return nil, err
				}
				for _, x := range opt.Value(r.JSON200.Schedules) {
					n++
					found = found || x.ScheduleId == id.String()
				}
				return r.JSON200.NextCursor, nil
			})
			if err == nil && !found {
				err = fmt.Errorf("schedule %s not listed (%d schedules)", id, n)
			}
			return err
		})
	})
	s.check("change schedule", func() error {
		r, err := c.UpdateScheduleWithResponse(ctx, id, &nucleusclient.UpdateScheduleParams{XUserId: user},
			nucleusclient.UpdateScheduleJSONRequestBody{EndCron: new("0 19 * * MON-FRI")})
		if err := s.c.answered(r, err, s200); err != nil {
			return err
		}
		return want("end_cron", r.JSON200.EndCron, "0 19 * * MON-FRI")
	})
	s.check("audit log of the schedule", func() error {
		r, err := c.EntityLogWithResponse(ctx, "schedule", id.String(), &nucleusclient.EntityLogParams{Limit: new(100)})
		if err := s.c.answered(r, err, s200); err != nil {
			return err
		}
		if n := len(opt.Value(r.JSON200.Entries)); n != 2 {
			return fmt.Errorf("%d audit entries, want 2 (create and change)", n)
		}
		return nil
	})
	if s.check("delete schedule", func() error {
		r, err := c.DeleteScheduleWithResponse(ctx, id, &nucleusclient.DeleteScheduleParams{XUserId: user})
		return s.c.answered(r, err, []int{204})
	}) {
		deleted = true
	}
	s.check("deleted schedule is gone", func() error {
		r, err := c.GetScheduleWithResponse(ctx, id, nil)
		return s.c.answered(r, err, s404)
	})
}

// stak: publishes to the token's own user in a new inbox <run> of the
// token's tenant, reads the feed with the token, marks the message read
// and checks the user's counters. Stak has no delete: the inbox stays,
// its message expires after a day (the inbox's TTL); the tenant's
// settings are created only when the tenant has none. Every call goes
// through the generated client (lambdas/client/stak); the end-user routes
// carry the token (bearer).
func stak(ctx context.Context, s *suite) {
	var tenant, uid string
	if !s.check("end-user token", func() (err error) {
		tenant, uid, err = claims(s.t.StakToken)
		return err
	}) {
		return
	}
	c, cerr := stakclient.NewClientWithResponses(s.c.base, stakclient.WithHTTPClient(s.c.http), stakclient.WithRequestEditorFn(acceptJSON))
	bearer := stakclient.RequestEditorFn(func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+s.t.StakToken)
		return nil
	})
	s.check("tenant settings", func() error {
		if cerr != nil {
			return cerr
		}
		r, err := c.GetTenantWithResponse(ctx, tenant)
		if err := s.c.answered(r, err, []int{200, 404}); err != nil || r.StatusCode() == 200 {
			return err
		}
		put, err := c.PutTenantWithResponse(ctx, tenant, stakclient.PutTenantJSONRequestBody{Title: new("dynastack smoke")})
		if err := s.c.answered(put, err, s200); err != nil {
			return err
		}
		s.note("tenant %s had no settings: created them (title \"dynastack smoke\"); they stay", tenant)
		return nil
	})
	s.check("create inbox", func() error {
		r, err := c.PutInboxWithResponse(ctx, tenant, s.t.Run, stakclient.PutInboxJSONRequestBody{Title: new("dynastack smoke " + s.t.Run),
			Description: new("smoke data of a smoke test, kept (no delete); messages expire after a day"), Ttl: &map[string]string{"default": "1d"}})
		return s.c.answered(r, err, s200)
	})
	if !s.failed {
		s.note("inbox %s of tenant %s stays (Stak has no delete); its message to user %s expires after a day", s.t.Run, tenant, uid)
	}
	s.check("read inbox", func() error {
		r, err := c.GetInboxWithResponse(ctx, tenant, s.t.Run)
		return s.c.answered(r, err, s200)
	})
	var id string
	s.check("publish message", func() error {
		var body stakclient.PublishJSONRequestBody
		body.Sender = new("dynastack-smoke")
		to := opt.Set(&body.Audiences)
		to.Kind, to.Uids = new("users"), &[]string{uid}
		opt.Set(&body.Message).Title = new("dynastack smoke test " + s.t.Run)
		r, err := c.PublishWithResponse(ctx, tenant, s.t.Run, nil, body)
		if err := s.c.answered(r, err, s201); err != nil {
			return err
		}
		// A Stak message's id is in the document's outer "audiences" object.
		if id = r.JSON201.Audiences.Id; id == "" {
			return errors.New("the answer has no message id (audiences.id)")
		}
		return nil
	})
	s.check("feed lists the message", func() error {
		r, err := c.FeedWithResponse(ctx, tenant, s.t.Run, uid, nil, bearer)
		if err := s.c.answered(r, err, s200); err != nil {
			return err
		}
		page := opt.Value(r.JSON200.Messages)
		if len(page) != 1 || page[0].Audiences.Id != id {
			return fmt.Errorf("feed holds %d messages, want just %s", len(page), id)
		}
		return nil
	})
	s.check("mark read", func() error {
		r, err := c.MarkReadWithResponse(ctx, tenant, s.t.Run, uid, id, bearer)
		if err := s.c.answered(r, err, s200); err != nil {
			return err
		}
		if !r.JSON200.Changed {
			return errors.New("changed false on the first read")
		}
		return nil
	})
	s.check("user stats", func() error {
		r, err := c.StatsWithResponse(ctx, tenant, s.t.Run, uid, bearer)
		if err := s.c.answered(r, err, s200); err != nil {
			return err
		}
		if st := r.JSON200; st.Published != 1 || st.Read != 1 || st.Unread != 0 {
			return fmt.Errorf("stats published %d, read %d, unread %d, want published 1, read 1, unread 0", st.Published, st.Read, st.Unread)
		}
		return nil
	})
	s.check("token of another user is refused", func() error {
		r, err := c.FeedWithResponse(ctx, tenant, s.t.Run, uid+"-other", nil, bearer)
		return s.c.answered(r, err, []int{403})
	})
}

// agenticpm: a project named <run>, an event on it, then archived — the
// API's end of a project, which is never deleted (so it stays, archived).
// Every call goes through the generated client (lambdas/client/agenticpm).
func agenticpm(ctx context.Context, s *suite) {
	c, cerr := pmclient.NewClientWithResponses(s.c.base, pmclient.WithHTTPClient(s.c.http), pmclient.WithRequestEditorFn(acceptJSON))
	var id uuid.UUID
	if !s.check("create project", func() error {
		if cerr != nil {
			return cerr
		}
		r, err := c.CreateProjectWithResponse(ctx, nil, pmclient.CreateProjectJSONRequestBody{Name: &s.t.Run,
			Description: new("dynastack smoke test (smoke data, archived by the test)"),
			Source:      new("jira"), SourceProjectKey: new("SMOKE"), AutonomyLevel: new("monitoring")})
		if err := s.c.answered(r, err, s201); err != nil {
			return err
		}
		id, err = uuid.Parse(r.JSON201.Id)
		return err
	}) {
		return
	}
	s.note("project %s (name %s) stays archived (AgenticPM never deletes projects)", id, s.t.Run)
	s.check("read project", func() error {
		r, err := c.GetProjectWithResponse(ctx, id)
		if err := s.c.answered(r, err, s200); err != nil {
			return err
		}
		return want("name", r.JSON200.Name, s.t.Run)
	})
	s.check("list active projects", func() error {
		return s.eventually(ctx, func() error {
			found, n := false, 0
			err := walk(func(cursor *string) (*string, error) {
				r, err := c.ListProjectsWithResponse(ctx, &pmclient.ListProjectsParams{Status: new(pmclient.Active), Limit: new(100), Cursor: cursor})
				if err := s.c.answered(r, err, s200); err != nil {
					return nil, err
				}
				for _, x := range opt.Value(r.JSON200.Items) {
					n++
					found = found || x.Id == id.String()
				}
				return r.JSON200.NextCursor, nil
			})
			if err == nil && !found {
				err = fmt.Errorf("project %s not among the %d active projects", id, n)
			}
			return err
		})
	})
	s.check("record event", func() error {
		r, err := c.RecordProjectEventWithResponse(ctx, id, nil, pmclient.EventRequest{EventType: new("heartbeat"), Severity: new("info"), Summary: new("smoke")})
		return s.c.answered(r, err, s201)
	})
	s.check("list events", func() error {
		r, err := c.ListProjectEventsWithResponse(ctx, id, &pmclient.ListProjectEventsParams{Limit: new(100)})
		if err := s.c.answered(r, err, s200); err != nil {
			return err
		}
		if n := len(opt.Value(r.JSON200.Items)); n != 1 {
			return fmt.Errorf("%d events, want 1", n)
		}
		return nil
	})
	s.check("archive project", func() error {
		r, err := c.UpdateProjectWithResponse(ctx, id, pmclient.UpdateProjectJSONRequestBody{Status: new("archived")})
		if err := s.c.answered(r, err, s200); err != nil {
			return err
		}
		return want("status", r.JSON200.Status, "archived")
	})
}

// walk reads a list's pages (at most 50): page reads the one at cursor
// (nil: the first) and returns the next page's cursor (nil or empty: the
// last).
func walk(page func(cursor *string) (next *string, err error)) error {
	var cursor *string
	for range 50 {
		next, err := page(cursor)
		if err != nil {
			return err
		}
		if next == nil || *next == "" {
			return nil
		}
		cursor = next
	}
	return errors.New("more than 50 pages")
}

func want(field, got, wanted string) error {
	if got != wanted {
		return fmt.Errorf("%s %q, want %q", field, got, wanted)
	}
	return nil
}

// claims reads the tenant and sub claims of a JWT without verifying it
// (the API verifies it; the smoke test only needs to know whom it names).
func claims(token string) (tenant, sub string, err error) {
	if token == "" {
		return "", "", errors.New("no Stak end-user token (make smoke STAGE=…: STAK_TOKEN_FILE=<a file holding a token of the stage's identity provider>, STAK_TOKEN_FILE=- for standard input, or STAK_TOKEN exported; docs/smoke.md)")
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", "", fmt.Errorf("the Stak token is no JWT (%d dot-separated parts, want 3)", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", "", fmt.Errorf("the Stak token's payload: %w", err)
	}
	var c struct {
		Tenant string `json:"tenant"`
		Sub    string `json:"sub"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return "", "", fmt.Errorf("the Stak token's payload: %w", err)
	}
	if c.Tenant == "" || c.Sub == "" {
		return "", "", fmt.Errorf("the Stak token needs a tenant and a sub claim (has tenant %q, sub %q)", c.Tenant, c.Sub)
	}
	return c.Tenant, c.Sub, nil
}
