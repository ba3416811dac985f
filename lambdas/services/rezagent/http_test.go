package rezagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/uuid"

	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/services/rezagent"
	"github.com/dynastack/dynastack/lambdas/services/rezagent/publisher"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var tsPattern = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`)

func TestCreateMessage(t *testing.T) {
	s := newService(t, options{})
	body := func(fields string) string { return `{` + fields + `}` }
	const ok = `"message_type":"scheduled_hello","created_by":"scheduler"`
	tests := []struct {
		name   string
		body   string
		status int
		code   string
		field  string
	}{
		{"scheduled hello", body(ok + `,"payload":{"text":"hello world","priority":"default","tags":["scheduled","daily"]}`), 201, "", ""},
		{"manual notification", body(`"message_type":"manual_notification","created_by":"user:a@example.com","payload":{"text":"hi","title":"t","priority":"urgent","click_url":"https://example.com/x","extra":{"kept":true}}`), 201, "", ""},
		{"undocumented type takes any object", body(`"message_type":"deployment_notification","created_by":"ci","payload":{"sha":"abc","n":[1,2.5,null,{"deep":false}]}`), 201, "", ""},
		{"empty payload object", body(`"message_type":"reminder","created_by":"ci","payload":{}`), 201, "", ""},
		{"empty body", ``, 400, "bad_request", ""},
		{"null body", `null`, 400, "bad_request", ""},
		{"array body", `[]`, 400, "bad_request", ""},
		{"malformed", `{"message_type":`, 400, "bad_request", ""},
		{"trailing data", body(ok+`,"payload":{"text":"x"}`) + ` {}`, 400, "bad_request", ""},
		{"missing message_type", body(`"created_by":"scheduler","payload":{"text":"x"}`), 400, "validation_failed", "message_type"},
		{"null message_type", body(`"message_type":null,"created_by":"scheduler","payload":{"text":"x"}`), 400, "validation_failed", "message_type"},
		{"numeric message_type", body(`"message_type":7,"created_by":"scheduler","payload":{"text":"x"}`), 400, "validation_failed", "message_type"},
		{"message_type with space", body(`"message_type":"a b","created_by":"scheduler","payload":{}`), 400, "validation_failed", "message_type"},
		{"message_type too long", body(`"message_type":"` + strings.Repeat("t", rezagent.MaxMessageTypeLen+1) + `","created_by":"s","payload":{}`), 400, "validation_failed", "message_type"},
		{"missing created_by", body(`"message_type":"scheduled_hello","payload":{"text":"x"}`), 400, "validation_failed", "created_by"},
		{"missing payload", body(ok), 400, "validation_failed", "payload"},
		{"null payload", body(ok + `,"payload":null`), 400, "validation_failed", "payload"},
		{"array payload", body(ok + `,"payload":[{"text":"x"}]`), 400, "validation_failed", "payload"},
		{"string payload", body(ok + `,"payload":"hello"`), 400, "validation_failed", "payload"},
		{"number payload", body(ok + `,"payload":1`), 400, "validation_failed", "payload"},
		{"unknown field", body(ok + `,"payload":{"text":"x"},"priority":"high"`), 400, "validation_failed", "priority"},
		{"client-chosen status", body(ok + `,"payload":{"text":"x"},"status":"completed"`), 400, "validation_failed", "status"},
		{"client-chosen id", body(ok + `,"payload":{"text":"x"},"message_id":"3f1d7e3a-0000-4000-8000-000000000000"`), 400, "validation_failed", "message_id"},
		{"client-chosen stage", body(ok + `,"payload":{"text":"x"},"stage":"prod"`), 400, "validation_failed", "stage"},
		{"hello without text", body(ok + `,"payload":{"priority":"default"}`), 400, "validation_failed", "payload.text"},
		{"hello with blank text", body(ok + `,"payload":{"text":"  "}`), 400, "validation_failed", "payload.text"},
		{"hello with numeric text", body(ok + `,"payload":{"text":5}`), 400, "validation_failed", "payload.text"},
		{"unknown priority", body(ok + `,"payload":{"text":"x","priority":"max"}`), 400, "validation_failed", "payload.priority"},
		{"non-string tag", body(ok + `,"payload":{"text":"x","tags":["a",1]}`), 400, "validation_failed", "payload.tags"},
		{"tags not an array", body(ok + `,"payload":{"text":"x","tags":"a"}`), 400, "validation_failed", "payload.tags"},
		{"bad click_url", body(ok + `,"payload":{"text":"x","click_url":"javascript:alert(1)"}`), 400, "validation_failed", "payload.click_url"},
		{"empty key", body(`"message_type":"x","created_by":"s","payload":{"a":{"":1}}`), 400, "validation_failed", "payload.a"},
		{"deepest", body(`"message_type":"x","created_by":"s","payload":` + strings.Repeat(`{"a":`, rezagent.MaxPayloadDepth-1) + `[1]` + strings.Repeat(`}`, rezagent.MaxPayloadDepth-1)), 201, "", ""},
		{"too deep", body(`"message_type":"x","created_by":"s","payload":` + strings.Repeat(`{"a":`, rezagent.MaxPayloadDepth) + `[1]` + strings.Repeat(`}`, rezagent.MaxPayloadDepth)), 400, "validation_failed", "payload" + strings.Repeat(".a", rezagent.MaxPayloadDepth)},
		{"number too large", body(`"message_type":"x","created_by":"s","payload":{"n":1e200}`), 400, "validation_failed", "payload.n"},
		{"number too precise", body(`"message_type":"x","created_by":"s","payload":{"n":[1234567890123456789012345678901234567891]}`), 400, "validation_failed", "payload.n[0]"},
		{"body too large", body(ok + `,"payload":{"text":"` + strings.Repeat("x", 600<<10) + `"}`), 413, "too_large", ""},
	}
	created := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, contract.CreateMessage.Method, contract.CreateMessage.URL(), tt.body)
			if tt.status != 201 {
				apitest.WantError(t, r, tt.status, tt.code, tt.field, "")
				return
			}
			require.Equal(t, 201, r.Status, "status: %s", r.Body)
			created++
			var m rezagent.Message
			r.JSON(t, &m)
			assert.Equal(t, strings.TrimPrefix(contract.GetMessage.URL(m.MessageID), "/"), r.Header.Get("Location"), "Location")
			_, err := uuid.Parse(m.MessageID)
			assert.NoError(t, err, "message id %q is not a UUID", m.MessageID)
			assert.Equal(t, rezagent.StatusCreated, m.Status, "status")
			assert.Equal(t, "dev", m.Stage, "stage")
			assert.Equal(t, 0, m.RetryCount, "retry_count")
			at, _ := time.Parse("2006-01-02T15:04:05.000000Z", m.CreatedDate)
			assert.Regexp(t, tsPattern, m.CreatedDate, "created_date")
			assert.Equal(t, m.CreatedDate, m.UpdatedDate, "updated_date of a new message")
			assert.Equal(t, at.Add(90*24*time.Hour).Unix(), m.TTL, "ttl")
			assert.NotEmpty(t, m.CorrelationID, "correlation_id")
			assert.Equal(t, r.Header.Get("X-Request-Id"), m.CorrelationID, "correlation_id is the request id")
			assert.Empty(t, m.ProcessingStartedAt, "processing_started_at set on create")
			assert.Empty(t, m.ErrorMessage, "error_message set on create")
			assert.Empty(t, m.NotificationID, "notification_id set on create")
		})
	}
	assert.Equal(t, created, s.Count(t), "items in the table: a rejected request wrote")
}

// Payload numbers keep every digit through DynamoDB and back.
func TestPayloadFidelity(t *testing.T) {
	s := newService(t, options{})
	payload := `{"big":123456789012345678901234567890,"small":0.000001,"neg":-42,"list":[true,null,"s",{"m":1e10}],"unicode":"héllo 😀"}`
	m := s.create(t, "custom", payload)
	r := s.Do(t, contract.GetMessage.Method, contract.GetMessage.URL(m.MessageID), "")
	var got struct {
		Payload json.RawMessage `json:"payload"`
	}
	r.JSON(t, &got)
	var want, have any
	dec := func(b []byte, v *any) {
		d := json.NewDecoder(strings.NewReader(string(b)))
		d.UseNumber()
		require.NoError(t, d.Decode(v))
	}
	dec([]byte(payload), &want)
	dec(got.Payload, &have)
	// DynamoDB may respell a number (1e10 as 10000000000), never change it.
	assert.Equal(t, canonical(t, want), canonical(t, have), "payload")
	assert.Contains(t, string(got.Payload), "123456789012345678901234567890", "big integer lost digits")
}

// canonical spells every number of v as an exact fraction.
func canonical(t *testing.T, v any) string {
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case json.Number:
			r, ok := new(big.Rat).SetString(string(v))
			require.True(t, ok, "number %s", v)
			return r.RatString()
		case []any:
			for i := range v {
				v[i] = walk(v[i])
			}
		case map[string]any:
			for k := range v {
				v[k] = walk(v[k])
			}
		}
		return v
	}
	b, _ := json.Marshal(walk(v))
	return string(b)
}

// The correlation id is ours, the request id, whatever the caller sends:
// a caller's X-Correlation-Id could be another caller's, and the message
// would join that caller's work in every search (issue 29). The caller's
// id is logged beside it as client_correlation_id (api.Instrument).
func TestCorrelationID(t *testing.T) {
	s := newService(t, options{})
	body := `{"message_type":"x","created_by":"s","payload":{}}`
	tests := []struct {
		name    string
		headers []string
	}{
		{"correlation header", []string{"X-Correlation-Id", "trace-1", "X-Request-Id", "req-1"}},
		{"request id", []string{"X-Request-Id", "req-2"}},
		{"insane correlation header", []string{"X-Correlation-Id", "has space", "X-Request-Id", "req-3"}},
		{"neither", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, contract.CreateMessage.Method, contract.CreateMessage.URL(), body, tt.headers...)
			var m rezagent.Message
			r.JSON(t, &m)
			want := r.Header.Get("X-Request-Id")
			_, err := uuid.Parse(want)
			require.NoError(t, err, "request id %q is not a UUID", want)
			assert.Equal(t, want, m.CorrelationID, "correlation_id")
		})
	}
}

// The largest message Create accepts still takes every status change,
// including the longest error_message, within DynamoDB's real limit.
func TestItemSizeLimit(t *testing.T) {
	s := newService(t, options{})
	base := s.create(t, "custom", `{"text":""}`)
	item, err := attributevalue.MarshalMap(base)
	require.NoError(t, err)
	room := rezagent.MaxMessageBytes - ddb.ItemSize(item)
	mk := func(n int) string {
		return `{"message_type":"custom","created_by":"scheduler","payload":{"text":"` + strings.Repeat("x", n) + `"}}`
	}
	before := s.Count(t)
	apitest.WantError(t, s.Do(t, contract.CreateMessage.Method, contract.CreateMessage.URL(), mk(room+1)), 413, "too_large", "", "item size limit")
	require.Equal(t, before, s.Count(t), "items: a refused create wrote")
	r := s.Do(t, contract.CreateMessage.Method, contract.CreateMessage.URL(), mk(room))
	require.Equal(t, 201, r.Status, "largest message: %s", r.Body[:min(len(r.Body), 300)])
	var m rezagent.Message
	r.JSON(t, &m)
	longest := strings.Repeat("😀", rezagent.MaxErrorMessageBytes/4)
	for _, b := range []string{`{"status":"processing"}`, `{"status":"processing"}`, `{"status":"failed","error_message":"` + longest + `"}`} {
		r := s.Do(t, contract.SetStatus.Method, contract.SetStatus.URL(m.MessageID), b)
		require.Equal(t, 200, r.Status, "%s: %s", b, r.Body)
	}
}

func TestGetMessage(t *testing.T) {
	s := newService(t, options{})
	m := s.create(t, "scheduled_hello", `{"text":"hello world","tags":["a"]}`)
	servicetest.GetByID(t, s.Service, contract.GetMessage, m.MessageID, m, "PATCH")
}

// TTL deletion lags, so the service hides an expired item itself, from
// the second its ttl is reached.
func TestExpiredMessage(t *testing.T) {
	s := newService(t, options{step: time.Nanosecond})
	m := s.create(t, "scheduled_hello", `{"text":"x"}`)
	ttl := time.Unix(m.TTL, 0)
	s.clock.Set(ttl.Add(-time.Second))
	r := s.Do(t, contract.GetMessage.Method, contract.GetMessage.URL(m.MessageID), "")
	require.Equal(t, 200, r.Status, "a second before ttl: %s", r.Body)
	s.clock.Set(ttl)
	apitest.WantError(t, s.Do(t, contract.GetMessage.Method, contract.GetMessage.URL(m.MessageID), ""), 404, "not_found", "", "")
	apitest.WantError(t, s.Do(t, contract.SetStatus.Method, contract.SetStatus.URL(m.MessageID), `{"status":"queued"}`), 404, "not_found", "", "")
	var p page
	s.Do(t, contract.ListMessages.Method, contract.ListMessages.URL(), "").JSON(t, &p)
	assert.Empty(t, p.Messages, "listing shows expired message")
	require.True(t, s.exists(t, m.MessageID), "the item is gone from the table; the test proves nothing")
	s.clock.Set(ttl.Add(-time.Second))
	r = s.Do(t, contract.GetMessage.Method, contract.GetMessage.URL(m.MessageID), "")
	var got rezagent.Message
	r.JSON(t, &got)
	assert.Equal(t, rezagent.StatusCreated, got.Status, "refused change on expired message changed it")
}

var allowed = map[[2]rezagent.Status]bool{
	{rezagent.StatusCreated, rezagent.StatusQueued}:        true,
	{rezagent.StatusCreated, rezagent.StatusProcessing}:    true,
	{rezagent.StatusQueued, rezagent.StatusProcessing}:     true,
	{rezagent.StatusProcessing, rezagent.StatusProcessing}: true,
	{rezagent.StatusProcessing, rezagent.StatusCompleted}:  true,
	{rezagent.StatusProcessing, rezagent.StatusFailed}:     true,
}

func TestStatusTransitions(t *testing.T) {
	s := newService(t, options{})
	n := 0
	for _, from := range rezagent.Statuses {
		for _, to := range rezagent.Statuses {
			n++
			mid := id(2, n)
			ok := allowed[[2]rezagent.Status{from, to}]
			t.Run(fmt.Sprintf("%s to %s", from, to), func(t *testing.T) {
				require.Equal(t, ok, rezagent.CanTransition(from, to), "CanTransition(%s, %s)", from, to)
				stored := message(mid, from, epoch)
				stored.RetryCount = 2
				s.put(t, stored)
				body := `{"status":"` + string(to) + `"}`
				if to == rezagent.StatusFailed {
					body = `{"status":"failed","error_message":"ntfy.sh returned 503"}`
				}
				r := s.Do(t, contract.SetStatus.Method, contract.SetStatus.URL(mid), body)
				if to == rezagent.StatusCreated {
					apitest.WantError(t, r, 400, "validation_failed", "status", "")
					return
				}
				var got rezagent.Message
				if !ok {
					apitest.WantError(t, r, 409, "conflict", "", fmt.Sprintf("is %s: cannot change status from %s to %s", from, from, to))
					s.Do(t, contract.GetMessage.Method, contract.GetMessage.URL(mid), "").JSON(t, &got)
					assert.Equal(t, from, got.Status, "refused change still changed the message: status")
					assert.Equal(t, stored.UpdatedDate, got.UpdatedDate, "refused change still changed the message: updated_date")
					return
				}
				require.Equal(t, 200, r.Status, "status: %s", r.Body)
				r.JSON(t, &got)
				assert.Equal(t, to, got.Status, "status")
				assert.Greater(t, got.UpdatedDate, got.CreatedDate, "updated_date")
				assert.Regexp(t, tsPattern, got.UpdatedDate, "updated_date")
				wantRetries := 2
				if from == rezagent.StatusProcessing && to == rezagent.StatusProcessing {
					wantRetries = 3
				}
				assert.Equal(t, wantRetries, got.RetryCount, "retry_count")
				switch to {
				case rezagent.StatusProcessing:
					assert.Equal(t, got.UpdatedDate, got.ProcessingStartedAt, "processing_started_at")
					assert.Empty(t, got.ProcessingCompletedAt, "processing_completed_at")
				case rezagent.StatusCompleted, rezagent.StatusFailed:
					assert.Equal(t, got.UpdatedDate, got.ProcessingCompletedAt, "completion timestamp")
				}
				if to == rezagent.StatusFailed {
					assert.Equal(t, "ntfy.sh returned 503", got.ErrorMessage, "error_message")
				} else {
					assert.NotEqual(t, "ntfy.sh returned 503", got.ErrorMessage, "error_message")
				}
				assert.NotEmpty(t, got.Payload, "update response lacks the payload")
			})
		}
	}
}

func TestStatusValidation(t *testing.T) {
	s := newService(t, options{})
	m := s.create(t, "scheduled_hello", `{"text":"x"}`)
	processing := id(3, 1)
	s.put(t, message(processing, rezagent.StatusProcessing, epoch))
	missing := id(3, 99)
	before := s.Count(t)
	tests := []struct {
		name, id, body string
		status         int
		code, field    string
	}{
		{"unknown message", missing, `{"status":"queued"}`, 404, "not_found", ""},
		{"unknown message, processing", missing, `{"status":"processing"}`, 404, "not_found", ""},
		{"unknown message, failed", missing, `{"status":"failed","error_message":"x"}`, 404, "not_found", ""},
		{"malformed id", "nope", `{"status":"queued"}`, 404, "not_found", ""},
		{"unknown status", m.MessageID, `{"status":"done"}`, 400, "validation_failed", "status"},
		{"back to created", m.MessageID, `{"status":"created"}`, 400, "validation_failed", "status"},
		{"missing status", m.MessageID, `{}`, 400, "validation_failed", "status"},
		{"numeric status", m.MessageID, `{"status":1}`, 400, "validation_failed", "status"},
		{"null status", m.MessageID, `{"status":null}`, 400, "validation_failed", "status"},
		{"failed without error_message", processing, `{"status":"failed"}`, 400, "validation_failed", "error_message"},
		{"failed with null error_message", processing, `{"status":"failed","error_message":null}`, 400, "validation_failed", "error_message"},
		{"failed with blank error_message", processing, `{"status":"failed","error_message":" "}`, 400, "validation_failed", "error_message"},
		{"error_message too long", processing, `{"status":"failed","error_message":"` + strings.Repeat("e", rezagent.MaxErrorMessageChars+1) + `"}`, 400, "validation_failed", "error_message"},
		{"error_message with completed", processing, `{"status":"completed","error_message":"x"}`, 400, "validation_failed", "error_message"},
		{"notification_id with failed", processing, `{"status":"failed","error_message":"x","notification_id":"n"}`, 400, "validation_failed", "notification_id"},
		{"notification_id with space", processing, `{"status":"completed","notification_id":"a b"}`, 400, "validation_failed", "notification_id"},
		{"other field", m.MessageID, `{"status":"queued","payload":{}}`, 400, "validation_failed", "payload"},
		{"empty body", m.MessageID, ``, 400, "bad_request", ""},
		{"null body", m.MessageID, `null`, 400, "bad_request", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, contract.SetStatus.Method, contract.SetStatus.URL(tt.id), tt.body), tt.status, tt.code, tt.field, "")
		})
	}
	assert.False(t, s.exists(t, missing), "a status change of an unknown id created a phantom item")
	assert.Equal(t, before, s.Count(t), "items: a refused change wrote")
	var got rezagent.Message
	s.Do(t, contract.GetMessage.Method, contract.GetMessage.URL(processing), "").JSON(t, &got)
	assert.Equal(t, rezagent.StatusProcessing, got.Status, "refused changes modified the message: status")
	assert.Equal(t, rezagent.Timestamp(epoch), got.UpdatedDate, "refused changes modified the message: updated_date")
}

func TestLifecycle(t *testing.T) {
	s := newService(t, options{})
	m := s.create(t, "scheduled_hello", `{"text":"hello world"}`)
	var got rezagent.Message
	for _, b := range []string{`{"status":"queued"}`, `{"status":"processing"}`, `{"status":"processing"}`, `{"status":"completed","notification_id":"ntfy_abc123"}`} {
		r := s.Do(t, contract.SetStatus.Method, contract.SetStatus.URL(m.MessageID), b)
		require.Equal(t, 200, r.Status, "%s: %s", b, r.Body)
		r.JSON(t, &got)
	}
	assert.Equal(t, 1, got.RetryCount, "final message: retry_count")
	assert.Equal(t, "ntfy_abc123", got.NotificationID, "final message: notification_id")
	assert.Less(t, got.ProcessingStartedAt, got.ProcessingCompletedAt, "final message: processing times")
	assert.Equal(t, m.CreatedDate, got.CreatedDate, "final message: created_date")
	for _, b := range []string{`{"status":"processing"}`, `{"status":"completed"}`, `{"status":"failed","error_message":"x"}`, `{"status":"queued"}`} {
		apitest.WantError(t, s.Do(t, contract.SetStatus.Method, contract.SetStatus.URL(m.MessageID), b), 409, "conflict", "", "completed is final")
	}
}

// Completion and failure racing on one processing message: the conditional
// update lets exactly one win, and the loser is told the winner's status.
func TestConcurrentTransitions(t *testing.T) {
	s := newService(t, options{})
	for i := range 8 {
		mid := id(4, i)
		s.put(t, message(mid, rezagent.StatusProcessing, epoch))
		var wg sync.WaitGroup
		rs := make([]apitest.Response, 2)
		for j, b := range []string{`{"status":"completed"}`, `{"status":"failed","error_message":"boom"}`} {
			wg.Go(func() { rs[j] = s.Do(t, contract.SetStatus.Method, contract.SetStatus.URL(mid), b) })
		}
		wg.Wait()
		require.ElementsMatch(t, []int{200, 409}, []int{rs[0].Status, rs[1].Status}, "round %d: want one 200 and one 409", i)
		winner, loser := rezagent.StatusCompleted, 1
		if rs[1].Status == 200 {
			winner, loser = rezagent.StatusFailed, 0
		}
		var e apitest.ErrorBody
		rs[loser].JSON(t, &e)
		assert.Contains(t, e.Error.Message, "is "+string(winner), "round %d: loser's error does not name the winner", i)
		var got rezagent.Message
		s.Do(t, contract.GetMessage.Method, contract.GetMessage.URL(mid), "").JSON(t, &got)
		assert.Equal(t, winner, got.Status, "round %d: stored status", i)
		if winner == rezagent.StatusCompleted {
			assert.Empty(t, got.ErrorMessage, "round %d: stored error_message", i)
		} else {
			assert.NotEmpty(t, got.ErrorMessage, "round %d: stored error_message", i)
		}
	}
}

type page struct {
	Messages   []map[string]any `json:"messages"`
	NextCursor string           `json:"next_cursor"`
}

func (p page) ids() []string {
	out := make([]string, len(p.Messages))
	for i, m := range p.Messages {
		out[i], _ = m["message_id"].(string)
	}
	return out
}

func (s *service) list(t *testing.T, query string) page {
	t.Helper()
	r := s.Do(t, contract.ListMessages.Method, contract.ListMessages.URL()+"?"+query, "")
	require.Equal(t, 200, r.Status, "list %s: %s", query, r.Body)
	var p page
	r.JSON(t, &p)
	return p
}

// all pages through a listing and returns the ids and the page sizes.
func (s *service) all(t *testing.T, query string) (ids []string, sizes []int) {
	t.Helper()
	cur := ""
	for range 100 {
		q := query
		if cur != "" {
			q += "&cursor=" + cur
		}
		p := s.list(t, q)
		ids = append(ids, p.ids()...)
		sizes = append(sizes, len(p.Messages))
		if cur = p.NextCursor; cur == "" {
			return ids, sizes
		}
	}
	require.Fail(t, "listing does not end")
	return nil, nil
}

func TestListByStage(t *testing.T) {
	// 1 ms steps crossing a whole second: with RFC3339Nano, "…:00Z" would
	// sort after "…:00.999Z" and break newest-first order.
	s := newService(t, options{})
	s.clock.Set(epoch.Add(990 * time.Millisecond))
	var want []string // newest first
	for i := range 25 {
		m := s.create(t, "scheduled_hello", fmt.Sprintf(`{"text":"message %d"}`, i))
		want = append([]string{m.MessageID}, want...)
		if i%3 == 0 {
			// An expired item between live ones: filtered after Limit, it
			// must not shorten pages.
			old := message(id(5, i), rezagent.StatusCompleted, s.clock.Now().Add(-rezagent.Retention-time.Hour))
			old.CreatedDate = rezagent.Timestamp(s.clock.Now())
			s.put(t, old)
		}
	}
	ids, sizes := s.all(t, "limit=10")
	assert.Equal(t, want, ids, "order")
	assert.Equal(t, []int{10, 10, 5}, sizes, "page sizes")
	ids, sizes = s.all(t, "stage=dev&limit=25")
	assert.Len(t, ids, 25, "exact page: ids")
	assert.Len(t, sizes, 1, "exact page: sizes %v (a cursor to an empty page?)", sizes)
	_, sizes = s.all(t, "")
	assert.Equal(t, []int{20, 5}, sizes, "default page size: sizes")
	p := s.list(t, "limit=1")
	require.NotEmpty(t, p.Messages, "listing")
	assert.NotContains(t, p.Messages[0], "payload", "listing returned a payload")
	assert.Equal(t, "dev", p.Messages[0]["stage"], "summary: stage")
	assert.Equal(t, "created", p.Messages[0]["status"], "summary: status")
}

func TestListByStatus(t *testing.T) {
	s := newService(t, options{})
	var failed []string
	for i := range 12 {
		st := []rezagent.Status{rezagent.StatusFailed, rezagent.StatusCompleted, rezagent.StatusProcessing}[i%3]
		m := message(id(6, i), st, epoch.Add(time.Duration(i)*time.Minute))
		s.put(t, m)
		if st == rezagent.StatusFailed {
			failed = append([]string{m.MessageID}, failed...)
		}
	}
	expired := message(id(6, 99), rezagent.StatusFailed, epoch.Add(-rezagent.Retention))
	s.put(t, expired)
	s.clock.Set(epoch.Add(time.Hour))
	ids, _ := s.all(t, "status=failed&limit=2")
	assert.Equal(t, failed, ids, "failed")
	// stage and status together: the stage is the deployment's, so status
	// decides (see the package documentation).
	ids, _ = s.all(t, "stage=dev&status=failed")
	assert.Equal(t, failed, ids, "stage+status")
	ids, _ = s.all(t, "status=queued")
	assert.Empty(t, ids, "queued")
}

func TestListDateRange(t *testing.T) {
	s := newService(t, options{})
	day := func(d, h int) time.Time { return time.Date(2031, 1, d, h, 0, 0, 0, time.UTC) }
	created := []time.Time{day(30, 0), day(30, 23), day(31, 0), day(31, 23).Add(59*time.Minute + 59*time.Second + 999999*time.Microsecond), day(32, 0)}
	for i, c := range created {
		s.put(t, message(id(7, i), rezagent.StatusCompleted, c))
	}
	s.clock.Set(day(40, 0))
	tests := []struct {
		name, query string
		want        []int // indexes into created, newest first
	}{
		{"all", "", []int{4, 3, 2, 1, 0}},
		{"from inclusive", "from=2031-01-31", []int{4, 3, 2}},
		{"to exclusive", "to=2031-01-31", []int{1, 0}},
		{"one day", "from=2031-01-31&to=2031-02-01", []int{3, 2}},
		{"to one microsecond later", "from=2031-01-31&to=2031-02-01T00:00:00.000001Z", []int{4, 3, 2}},
		{"offset time", "from=2031-01-31T01:00:00%2B01:00&to=2031-01-31T00:00:00.000001Z", []int{2}},
		{"sub-microsecond from excludes", "from=2031-01-31T00:00:00.0000001Z", []int{4, 3}},
		{"status with range", "status=completed&from=2031-01-30T12:00:00Z&to=2031-01-31T12:00:00Z", []int{2, 1}},
		{"empty range", "from=2031-03-01", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []string
			for _, i := range tt.want {
				want = append(want, id(7, i))
			}
			ids, _ := s.all(t, tt.query+"&limit=1")
			assert.Equal(t, want, ids)
		})
	}
}

func TestListValidation(t *testing.T) {
	s := newService(t, options{})
	for i := range 3 {
		s.create(t, "x", `{}`)
		s.put(t, message(id(8, i), rezagent.StatusFailed, epoch.Add(time.Duration(i)*time.Second)))
	}
	stageCursor := s.list(t, "limit=1").NextCursor
	statusCursor := s.list(t, "status=failed&limit=1").NextCursor
	rangeCursor := s.list(t, "status=failed&from=2031-01-01&limit=1").NextCursor
	require.NotEmpty(t, stageCursor, "no cursors to test with")
	require.NotEmpty(t, statusCursor, "no cursors to test with")
	require.NotEmpty(t, rangeCursor, "no cursors to test with")
	tampered := []byte(stageCursor)
	i := len(tampered) / 2
	tampered[i] = map[bool]byte{true: 'B', false: 'A'}[tampered[i] == 'A']
	tests := []struct {
		name, query string
		code, field string
	}{
		{"stage cursor on status listing", "status=failed&cursor=" + stageCursor, "bad_request", ""},
		{"status cursor on stage listing", "cursor=" + statusCursor, "bad_request", ""},
		{"status cursor on other status", "status=completed&cursor=" + statusCursor, "bad_request", ""},
		{"cursor with another range", "status=failed&from=2031-01-02&cursor=" + rangeCursor, "bad_request", ""},
		{"range cursor without range", "status=failed&cursor=" + rangeCursor, "bad_request", ""},
		{"tampered cursor", "cursor=" + string(tampered), "bad_request", ""},
		{"garbage cursor", "cursor=bm90IGEgY3Vyc29y", "bad_request", ""},
		{"other stage", "stage=prod", "validation_failed", "stage"},
		{"unknown stage", "stage=qa", "validation_failed", "stage"},
		{"empty stage", "stage=", "validation_failed", "stage"},
		{"unknown status", "status=done", "validation_failed", "status"},
		{"empty status", "status=", "validation_failed", "status"},
		{"limit zero", "limit=0", "validation_failed", "limit"},
		{"limit too large", "limit=101", "validation_failed", "limit"},
		{"limit not a number", "limit=ten", "validation_failed", "limit"},
		{"bad from", "from=yesterday", "validation_failed", "from"},
		{"bad to", "to=2031-13-01", "validation_failed", "to"},
		{"from after to", "from=2031-02-01&to=2031-01-01", "validation_failed", "to"},
		{"from equals to", "from=2031-02-01&to=2031-02-01", "validation_failed", "to"},
		{"unknown parameter", "stauts=failed", "validation_failed", "stauts"},
		{"repeated parameter", "status=failed&status=completed", "validation_failed", "status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, contract.ListMessages.Method, contract.ListMessages.URL()+"?"+tt.query, "")
			if tt.code == "bad_request" {
				apitest.WantError(t, r, 400, tt.code, "", "cursor")
				return
			}
			apitest.WantError(t, r, 400, tt.code, tt.field, "")
		})
	}
	assert.Len(t, s.list(t, "status=failed&limit=1&cursor="+statusCursor).Messages, 1, "the untouched cursor fails")
}

// With a tiny scan budget, a long run of expired items yields short pages
// whose cursors still continue exactly where reading stopped.
func TestListScanBudget(t *testing.T) {
	s := newService(t, options{scanBudget: 4})
	var want []string
	n := 0
	for i := range 6 {
		for range 7 { // a run of expired items older than the live one
			n++
			old := message(id(9, 100+n), rezagent.StatusCompleted, epoch.Add(-rezagent.Retention))
			old.CreatedDate = rezagent.Timestamp(epoch.Add(time.Duration(n) * time.Second))
			s.put(t, old)
		}
		n++
		m := message(id(9, i), rezagent.StatusCompleted, epoch.Add(time.Duration(n)*time.Second))
		s.put(t, m)
		want = append([]string{m.MessageID}, want...)
	}
	s.clock.Set(epoch.Add(time.Hour))
	ids, sizes := s.all(t, "limit=3")
	assert.Equal(t, want, ids, "ids")
	short := false
	for _, n := range sizes[:len(sizes)-1] {
		short = short || n < 3
	}
	assert.True(t, short, "sizes %v: the budget never cut a page short; the test proves nothing", sizes)
}

func TestMetrics(t *testing.T) {
	s := newService(t, options{})
	now := epoch.Add(48 * time.Hour)
	counts := map[rezagent.Status]int{rezagent.StatusCreated: 1, rezagent.StatusQueued: 2, rezagent.StatusProcessing: 1, rezagent.StatusCompleted: 7, rezagent.StatusFailed: 3}
	n := 0
	var newest []string
	for st, c := range counts {
		for range c {
			n++
			m := message(id(10, n), st, now.Add(-time.Duration(n)*time.Minute))
			s.put(t, m)
		}
	}
	for i := range 10 {
		newest = append(newest, id(10, i+1))
	}
	// Outside the window, or expired: never counted.
	s.put(t, message(id(10, 900), rezagent.StatusCompleted, now.Add(-25*time.Hour)))
	gone := message(id(10, 901), rezagent.StatusFailed, now.Add(-time.Hour))
	gone.TTL = now.Add(-time.Second).Unix()
	s.put(t, gone)
	s.clock.Set(now)

	type metrics struct {
		Stage       string         `json:"stage"`
		Since       string         `json:"since"`
		Counts      map[string]int `json:"counts"`
		Total       int            `json:"total"`
		SuccessRate *float64       `json:"success_rate"`
		Recent      []struct {
			MessageID string `json:"message_id"`
		} `json:"recent"`
		Truncated bool `json:"truncated"`
	}
	var m metrics
	r := s.Do(t, contract.Metrics.Method, contract.Metrics.URL(), "")
	r.JSON(t, &m)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	for st, c := range counts {
		assert.Equal(t, c, m.Counts[string(st)], "count %s", st)
	}
	assert.Equal(t, 14, m.Total, "total")
	if assert.NotNil(t, m.SuccessRate, "success_rate") {
		assert.Equal(t, 0.7, *m.SuccessRate, "success_rate")
	}
	assert.Equal(t, "dev", m.Stage, "stage")
	assert.False(t, m.Truncated, "truncated")
	assert.Equal(t, rezagent.Timestamp(now.Add(time.Millisecond-24*time.Hour)), m.Since, "since")
	var recent []string
	for _, x := range m.Recent {
		recent = append(recent, x.MessageID)
	}
	assert.Equal(t, newest, recent, "recent")

	m = metrics{}
	s.Do(t, contract.Metrics.Method, contract.Metrics.URL()+"?since="+now.Add(-30*time.Hour).Format(time.RFC3339), "").JSON(t, &m)
	assert.Equal(t, 8, m.Counts["completed"], "30 h window: completed")
	assert.Equal(t, 15, m.Total, "30 h window: total")
	m = metrics{}
	r = s.Do(t, contract.Metrics.Method, contract.Metrics.URL()+"?since="+now.Add(-30*time.Second).Format(time.RFC3339Nano), "")
	r.JSON(t, &m)
	assert.Equal(t, 0, m.Total, "empty window: total")
	assert.Nil(t, m.SuccessRate, "empty window: success_rate")
	assert.Contains(t, string(r.Body), `"success_rate":null`, "empty window: success_rate")
	assert.Len(t, m.Recent, 10, "empty window: recent")

	tests := []struct{ name, query, field string }{
		{"future", "since=2040-01-01", "since"},
		{"garbage", "since=last-week", "since"},
		{"empty", "since=", "since"},
		{"unknown parameter", "status=failed", "status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, contract.Metrics.Method, contract.Metrics.URL()+"?"+tt.query, ""), 400, "validation_failed", tt.field, "")
		})
	}
}

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{"ok", map[string]string{"REZ_AGENT_MESSAGES_TABLE": "rez-agent-messages-dev", "DYNASTACK_STAGE": "dev"}, ""},
		{"with key", map[string]string{"REZ_AGENT_MESSAGES_TABLE": "t", "DYNASTACK_STAGE": "prod", "DYNASTACK_CURSOR_KEY": "k"}, ""},
		{"no table", map[string]string{"DYNASTACK_STAGE": "dev"}, "REZ_AGENT_MESSAGES_TABLE"},
		{"no stage", map[string]string{"REZ_AGENT_MESSAGES_TABLE": "t"}, "DYNASTACK_STAGE"},
		{"bad stage", map[string]string{"REZ_AGENT_MESSAGES_TABLE": "t", "DYNASTACK_STAGE": "Prod"}, "DYNASTACK_STAGE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := rezagent.ConfigFromEnv(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.env["REZ_AGENT_MESSAGES_TABLE"], cfg.Table, "table")
			assert.Equal(t, tt.env["DYNASTACK_STAGE"], cfg.Stage, "stage")
			assert.NotEmpty(t, cfg.CursorKey, "cursor key")
		})
	}
}

// New wires the environment the way the Lambda main does.
func TestNew(t *testing.T) {
	_, names := testenv.Tables(t, testenv.Template(t, "dev", "rezagent"))
	var table string
	for _, n := range names {
		table = n
	}
	h, err := publisher.NewAPI(context.Background(), testenv.Getenv(t, map[string]string{"REZ_AGENT_MESSAGES_TABLE": table, "DYNASTACK_STAGE": "dev"}))
	require.NoError(t, err)
	s := &service{Service: servicetest.Service{H: h}}
	m := s.create(t, "scheduled_hello", `{"text":"hi"}`)
	r := s.Do(t, contract.GetMessage.Method, contract.GetMessage.URL(m.MessageID), "")
	assert.Equal(t, 200, r.Status, "get: %s", r.Body)
}

// countingAPI counts the Query calls of a store.
type countingAPI struct {
	*dynamodb.Client
	mu      sync.Mutex
	queries int
}

func (c *countingAPI) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.mu.Lock()
	c.queries++
	c.mu.Unlock()
	return c.Client.Query(ctx, in, opts...)
}

// DynamoDB ends a Query page after 1 MB read, before filters and
// projections: counts must sum every page, and a listing must continue to
// fill its page.
func TestOneMegabytePages(t *testing.T) {
	s := newService(t, options{})
	const n = 7 // 7 × 300 KB: at least three pages
	big := `{"blob":"` + strings.Repeat("x", 300<<10) + `"}`
	for range n {
		s.create(t, "bulk", big)
	}
	p := s.list(t, "limit=5")
	assert.Len(t, p.Messages, 5, "page")
	assert.NotEmpty(t, p.NextCursor, "cursor")
	api := &countingAPI{Client: s.Client}
	store := rezagent.NewStore(api, s.Table, "dev", []byte("k"))
	m, err := store.Metrics(context.Background(), epoch)
	require.NoError(t, err)
	assert.Equal(t, n, m.Counts[rezagent.StatusCreated], "count of created")
	assert.False(t, m.Truncated, "truncated")
	// 4 empty statuses + the recent listing + at least 3 pages of created.
	assert.GreaterOrEqual(t, api.queries, 8, "queries: the count of created did not page")
}
