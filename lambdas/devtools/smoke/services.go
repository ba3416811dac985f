package smoke

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/uuid"

	pmcontract "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	itsmcontract "github.com/dynastack/dynastack/constructs/itsm/contract"
	nucleuscontract "github.com/dynastack/dynastack/constructs/nucleus/contract"
	rezcontract "github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/constructs/service"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	itsmclient "github.com/dynastack/dynastack/lambdas/client/itsm"
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
			IssueDescription: ptr("dynastack smoke test " + s.t.Run + " (smoke data, closed by the test)")})
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
		r, err := c.AddCommentWithResponse(ctx, id, itsmclient.AddCommentJSONRequestBody{CommentText: ptr("smoke comment")})
		if err := s.c.answered(r, err, s201); err != nil {
			return err
		}
		if n := len(deref(r.JSON201.Comments)); n != 1 {
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
		r, err := c.AddCommentWithResponse(ctx, id, itsmclient.AddCommentJSONRequestBody{CommentText: ptr("after close")})
		return s.c.answered(r, err, []int{409})
	})
}

// rezagent: a message created by <run>; the pipeline (SNS, queue,
// processor, ntfy) must move it to completed. There is no delete: the
// message expires with rez_agent's TTL (90 days), and its notification
// reaches the stage's ntfy topic.
func rezagent(ctx context.Context, s *suite) {
	type message struct {
		ID        string `json:"message_id"`
		Status    string `json:"status"`
		CreatedBy string `json:"created_by"`
		Error     string `json:"error_message"`
	}
	var m message
	if !s.check("create message", func() error {
		return s.c.do(ctx, rezcontract.CreateMessage.Method, rezcontract.CreateMessage.URL(), map[string]any{"message_type": "smoke_test", "created_by": s.t.Run,
			"payload": map[string]any{"text": "dynastack smoke test " + s.t.Run + " (ignore)"}}, &m, s201)
	}) {
		return
	}
	path := rezcontract.GetMessage.URL(m.ID)
	s.note("message %s (created_by %s, message_type smoke_test) stays until its TTL (90 days; no delete); its notification went to the stage's ntfy topic (make dev: its ntfy sink)", m.ID, s.t.Run)
	s.check("read message", func() error {
		var got message
		if err := s.c.do(ctx, rezcontract.GetMessage.Method, path, nil, &got, s200); err != nil {
			return err
		}
		return want("created_by", got.CreatedBy, s.t.Run)
	})
	s.check("list messages", func() error {
		return s.eventually(ctx, func() error {
			var page struct {
				Messages []message `json:"messages"`
			}
			if err := s.c.do(ctx, rezcontract.ListMessages.Method, rezcontract.ListMessages.URLQuery(service.Values{service.Limit: "100"}), nil, &page, s200); err != nil {
				return err
			}
			for _, x := range page.Messages {
				if x.ID == m.ID {
					return nil
				}
			}
			return fmt.Errorf("message %s not on the newest page (%d messages)", m.ID, len(page.Messages))
		})
	})
	s.check("pipeline delivers (status completed)", func() error {
		return s.eventually(ctx, func() error {
			var got message
			if err := s.c.do(ctx, rezcontract.GetMessage.Method, path, nil, &got, s200); err != nil {
				return err
			}
			if got.Status == "failed" {
				return fmt.Errorf("status failed: %s (not retried)", got.Error)
			}
			return want("status", got.Status, "completed")
		})
	})
	s.check("metrics", func() error {
		return s.c.do(ctx, rezcontract.Metrics.Method, rezcontract.Metrics.URL(), nil, nil, s200)
	})
}

// nucleus: a disabled schedule named <run>, changed once (two audit
// entries), then deleted: nothing stays but the audit entries of its
// create, change and delete, which the audit log keeps by design.
func nucleus(ctx context.Context, s *suite) {
	type schedule struct {
		ID      string `json:"schedule_id"`
		Name    string `json:"schedule_name"`
		EndCron string `json:"end_cron"`
	}
	user := []string{"X-User-Id", "smoke@dynastack.invalid"}
	var sc schedule
	if !s.check("create schedule", func() error {
		return s.c.do(ctx, nucleuscontract.CreateSchedule.Method, nucleuscontract.CreateSchedule.URL(), map[string]any{"schedule_name": s.t.Run, "start_cron": "0 8 * * MON-FRI",
			"end_cron": "0 18 * * MON-FRI", "timezone": "UTC", "enabled": false}, &sc, s201, user...)
	}) {
		return
	}
	path := nucleuscontract.GetSchedule.URL(sc.ID)
	deleted := false
	s.cleanup("delete schedule", func() error {
		if deleted {
			return nil
		}
		return s.c.do(ctx, nucleuscontract.DeleteSchedule.Method, nucleuscontract.DeleteSchedule.URL(sc.ID), nil, nil, []int{204, 404}, user...)
	})
	s.note("schedule %s deleted; its audit entries stay (the audit log is append-only)", sc.ID)
	s.check("read schedule", func() error {
		var got struct {
			Schedule schedule `json:"schedule"`
		}
		if err := s.c.do(ctx, nucleuscontract.GetSchedule.Method, path, nil, &got, s200, user...); err != nil {
			return err
		}
		return want("schedule_name", got.Schedule.Name, s.t.Run)
	})
	s.check("list schedules", func() error {
		return s.eventually(ctx, func() error {
			found, n := false, 0
			err := walk(ctx, s.c, nucleuscontract.ListSchedules, service.Values{service.Limit: "100"}, "next_cursor", func(raw json.RawMessage) error {
				var page struct {
					Schedules []schedule `json:"schedules"`
				}
				if err := json.Unmarshal(raw, &page); err != nil {
					return err
				}
				n += len(page.Schedules)
				found = found || slices.ContainsFunc(page.Schedules, func(x schedule) bool { return x.ID == sc.ID })
				return nil
			}, user...)
			if err == nil && !found {
				err = fmt.Errorf("schedule %s not listed (%d schedules)", sc.ID, n)
			}
			return err
		})
	})
	s.check("change schedule", func() error {
		var got schedule
		if err := s.c.do(ctx, nucleuscontract.UpdateSchedule.Method, nucleuscontract.UpdateSchedule.URL(sc.ID), map[string]any{"end_cron": "0 19 * * MON-FRI"}, &got, s200, user...); err != nil {
			return err
		}
		return want("end_cron", got.EndCron, "0 19 * * MON-FRI")
	})
	s.check("audit log of the schedule", func() error {
		var log struct {
			Entries []map[string]any `json:"entries"`
		}
		if err := s.c.do(ctx, nucleuscontract.EntityLog.Method, nucleuscontract.EntityLog.URLQuery(service.Values{service.Limit: "100"}, "schedule", sc.ID), nil, &log, s200, user...); err != nil {
			return err
		}
		if len(log.Entries) != 2 {
			return fmt.Errorf("%d audit entries, want 2 (create and change)", len(log.Entries))
		}
		return nil
	})
	if s.check("delete schedule", func() error {
		return s.c.do(ctx, nucleuscontract.DeleteSchedule.Method, nucleuscontract.DeleteSchedule.URL(sc.ID), nil, nil, []int{204}, user...)
	}) {
		deleted = true
	}
	s.check("deleted schedule is gone", func() error { return s.c.do(ctx, nucleuscontract.GetSchedule.Method, path, nil, nil, s404, user...) })
}

// stak: publishes to the token's own user in a new inbox <run> of the
// token's tenant, reads the feed with the token, marks the message read
// and checks the user's counters. Stak has no delete: the inbox stays,
// its message expires after a day (the inbox's TTL); the tenant's
// settings are created only when the tenant has none.
func stak(ctx context.Context, s *suite) {
	var tenant, uid string
	if !s.check("end-user token", func() (err error) {
		tenant, uid, err = claims(s.t.StakToken)
		return err
	}) {
		return
	}
	bearer := []string{"Authorization", "Bearer " + s.t.StakToken}
	settings := stakcontract.GetTenant.URL(tenant)
	s.check("tenant settings", func() error {
		err := s.c.do(ctx, stakcontract.GetTenant.Method, settings, nil, nil, s200)
		if err == nil {
			return nil
		}
		if e := s.c.do(ctx, stakcontract.GetTenant.Method, settings, nil, nil, s404); e != nil {
			return err
		}
		if err := s.c.do(ctx, stakcontract.PutTenant.Method, stakcontract.PutTenant.URL(tenant), map[string]any{"title": "dynastack smoke"}, nil, s200); err != nil {
			return err
		}
		s.note("tenant %s had no settings: created them (title \"dynastack smoke\"); they stay", tenant)
		return nil
	})
	s.check("create inbox", func() error {
		return s.c.do(ctx, stakcontract.PutInbox.Method, stakcontract.PutInbox.URL(tenant, s.t.Run), map[string]any{"title": "dynastack smoke " + s.t.Run,
			"description": "smoke data of a smoke test, kept (no delete); messages expire after a day", "ttl": map[string]any{"default": "1d"}}, nil, s200)
	})
	if !s.failed {
		s.note("inbox %s of tenant %s stays (Stak has no delete); its message to user %s expires after a day", s.t.Run, tenant, uid)
	}
	s.check("read inbox", func() error {
		return s.c.do(ctx, stakcontract.GetInbox.Method, stakcontract.GetInbox.URL(tenant, s.t.Run), nil, nil, s200)
	})
	var id string
	s.check("publish message", func() error {
		var m struct {
			Header struct {
				ID string `json:"id"`
			} `json:"audiences"`
		}
		err := s.c.do(ctx, stakcontract.Publish.Method, stakcontract.Publish.URL(tenant, s.t.Run), map[string]any{"sender": "dynastack-smoke",
			"audiences": map[string]any{"kind": "users", "uids": []string{uid}},
			"message":   map[string]any{"title": "dynastack smoke test " + s.t.Run}}, &m, s201)
		id = m.Header.ID
		if err == nil && id == "" {
			err = errors.New("the answer has no message id (audiences.id)")
		}
		return err
	})
	s.check("feed lists the message", func() error {
		var page struct {
			Messages []struct {
				Header struct {
					ID string `json:"id"`
				} `json:"audiences"`
			} `json:"messages"`
		}
		if err := s.c.do(ctx, stakcontract.Feed.Method, stakcontract.Feed.URL(tenant, s.t.Run, uid), nil, &page, s200, bearer...); err != nil {
			return err
		}
		if len(page.Messages) != 1 || page.Messages[0].Header.ID != id {
			return fmt.Errorf("feed holds %d messages, want just %s", len(page.Messages), id)
		}
		return nil
	})
	s.check("mark read", func() error {
		var got struct {
			Changed bool `json:"changed"`
		}
		if err := s.c.do(ctx, stakcontract.MarkRead.Method, stakcontract.MarkRead.URL(tenant, s.t.Run, uid, id), nil, &got, s200, bearer...); err != nil {
			return err
		}
		if !got.Changed {
			return errors.New("changed false on the first read")
		}
		return nil
	})
	s.check("user stats", func() error {
		var st struct{ Published, Read, Unread int64 }
		if err := s.c.do(ctx, stakcontract.Stats.Method, stakcontract.Stats.URL(tenant, s.t.Run, uid), nil, &st, s200, bearer...); err != nil {
			return err
		}
		if st.Published != 1 || st.Read != 1 || st.Unread != 0 {
			return fmt.Errorf("stats %+v, want published 1, read 1, unread 0", st)
		}
		return nil
	})
	s.check("token of another user is refused", func() error {
		return s.c.do(ctx, stakcontract.Feed.Method, stakcontract.Feed.URL(tenant, s.t.Run, uid+"-other"), nil, nil, []int{403}, bearer...)
	})
}

// agenticpm: a project named <run>, an event on it, then archived — the
// API's end of a project, which is never deleted (so it stays, archived).
func agenticpm(ctx context.Context, s *suite) {
	type project struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Status string `json:"status"`
	}
	var p project
	if !s.check("create project", func() error {
		return s.c.do(ctx, pmcontract.CreateProject.Method, pmcontract.CreateProject.URL(), map[string]any{"name": s.t.Run, "description": "dynastack smoke test (smoke data, archived by the test)",
			"source": "jira", "sourceProjectKey": "SMOKE", "autonomyLevel": "monitoring"}, &p, s201)
	}) {
		return
	}
	s.note("project %s (name %s) stays archived (AgenticPM never deletes projects)", p.ID, s.t.Run)
	s.check("read project", func() error {
		var got project
		if err := s.c.do(ctx, pmcontract.GetProject.Method, pmcontract.GetProject.URL(p.ID), nil, &got, s200); err != nil {
			return err
		}
		return want("name", got.Name, s.t.Run)
	})
	s.check("list active projects", func() error {
		return s.eventually(ctx, func() error {
			found, n := false, 0
			err := walk(ctx, s.c, pmcontract.ListProjects, service.Values{pmcontract.ParamStatus: "active", service.Limit: "100"}, "nextCursor", func(raw json.RawMessage) error {
				var page struct {
					Items []project `json:"items"`
				}
				if err := json.Unmarshal(raw, &page); err != nil {
					return err
				}
				n += len(page.Items)
				found = found || slices.ContainsFunc(page.Items, func(x project) bool { return x.ID == p.ID })
				return nil
			})
			if err == nil && !found {
				err = fmt.Errorf("project %s not among the %d active projects", p.ID, n)
			}
			return err
		})
	})
	s.check("record event", func() error {
		return s.c.do(ctx, pmcontract.RecordProjectEvent.Method, pmcontract.RecordProjectEvent.URL(p.ID),
			map[string]any{"eventType": "heartbeat", "severity": "info", "summary": "smoke"}, nil, s201)
	})
	s.check("list events", func() error {
		var page struct {
			Items []map[string]any `json:"items"`
		}
		if err := s.c.do(ctx, pmcontract.ListProjectEvents.Method, pmcontract.ListProjectEvents.URLQuery(service.Values{service.Limit: "100"}, p.ID), nil, &page, s200); err != nil {
			return err
		}
		if len(page.Items) != 1 {
			return fmt.Errorf("%d events, want 1", len(page.Items))
		}
		return nil
	})
	s.check("archive project", func() error {
		var got project
		if err := s.c.do(ctx, pmcontract.UpdateProject.Method, pmcontract.UpdateProject.URL(p.ID), map[string]any{"status": "archived"}, &got, s200); err != nil {
			return err
		}
		return want("status", got.Status, "archived")
	})
}

// walk reads a list's pages (at most 50) through its cursor field: route
// with the query q, then with each page's cursor.
func walk(ctx context.Context, c client, route service.Route, q service.Values, cursorField string, page func(json.RawMessage) error, headers ...string) error {
	q = maps.Clone(q)
	path := route.URLQuery(q)
	for range 50 {
		var raw json.RawMessage
		if err := c.do(ctx, "GET", path, nil, &raw, s200, headers...); err != nil {
			return err
		}
		if err := page(raw); err != nil {
			return err
		}
		var next map[string]any
		_ = json.Unmarshal(raw, &next)
		cur, _ := next[cursorField].(string)
		if cur == "" {
			return nil
		}
		q[service.Cursor] = cur
		path = route.URLQuery(q)
	}
	return fmt.Errorf("more than 50 pages of %s", route.URLQuery(q))
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
