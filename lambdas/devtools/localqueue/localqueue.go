// Package localqueue is dev-only code: an SQS standard queue with a redrive
// policy and a Lambda event source mapping over it, in memory, for the
// local runner and tests. No SQS emulator that speaks today's SDK protocol
// runs offline, so the pipeline's delivery is emulated here with the event
// shape and the retry semantics of the real mapping:
//
//   - records arrive as events.SQSEvent, with MessageId, ReceiptHandle,
//     Body, MD5OfBody, MessageAttributes and their MD5, and the attributes
//     ApproximateReceiveCount, SentTimestamp, SenderId and
//     ApproximateFirstReceiveTimestamp, and AWSTraceHeader for a message
//     sent with a trace header (SNS to SQS passes the publisher's
//     X-Amzn-Trace-Id so; SendMessage's header or system attribute too);
//   - a received message is invisible for the visibility timeout; the
//     mapping deletes the records of a batch that the function did not
//     report in BatchItemFailures (ReportBatchItemFailures), and none of
//     them when the invocation failed or answered an unknown id;
//   - a message received MaxReceiveCount times moves to the dead-letter
//     queue instead of being received again;
//   - at most BatchSize records per invocation, at most MaxConcurrency
//     invocations at once, each with a deadline of the function timeout,
//     and with the trace header of its first record that has one as the
//     invocation's trace (a new trace when none has): a batch of one
//     message continues its message's trace, and fn.QueueBatch gives
//     every record its own message's.
//
// Never import this package from code that runs in Lambda.
package localqueue

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/dynastack/dynastack/lambdas/devtools/localtrace"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
)

// Region is the region in the emulated records and ARNs.
const Region = "us-east-1"

// Queue is one emulated standard queue.
type Queue struct {
	// Name and ARN identify the queue in records.
	Name, ARN string
	// VisibilityTimeout hides a received message from other receives.
	VisibilityTimeout time.Duration
	// MaxReceiveCount and DLQ are the redrive policy; 0 or nil: none.
	MaxReceiveCount int
	DLQ             *Queue

	mu     sync.Mutex
	msgs   []*message
	seq    int
	notify chan struct{}
	now    func() time.Time
}

type message struct {
	id, body, handle string
	trace            string // AWSTraceHeader
	attrs            map[string]string
	sent, first      time.Time
	receives         int
	visibleAt        time.Time
}

// NewQueue returns an empty queue.
func NewQueue(name string, visibility time.Duration) *Queue {
	return &Queue{Name: name, ARN: "arn:aws:sqs:" + Region + ":000000000000:" + name, VisibilityTimeout: visibility,
		notify: make(chan struct{}, 1), now: time.Now}
}

// Send enqueues body with string message attributes and returns its id.
func (q *Queue) Send(body string, attrs map[string]string) string {
	return q.SendTraced(body, attrs, "")
}

// SendTraced is Send of a message that carries the X-Ray trace header
// trace ("" none) as its AWSTraceHeader system attribute.
func (q *Queue) SendTraced(body string, attrs map[string]string, trace string) string {
	q.mu.Lock()
	q.seq++
	m := &message{id: fmt.Sprintf("%08x-1111-4000-8000-%012x", q.seq, time.Now().UnixNano()&0xffffffffffff), body: body, attrs: attrs, trace: trace, sent: q.now()}
	q.msgs = append(q.msgs, m)
	q.mu.Unlock()
	q.wake()
	return m.id
}

func (q *Queue) wake() {
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

// Len is the number of messages in the queue, in flight included.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.msgs)
}

// Stats are what SQS publishes of the queue in CloudWatch:
// ApproximateNumberOfMessagesVisible (messages not in flight) and
// ApproximateAgeOfOldestMessage (how long the oldest message has been in
// the queue, in flight included; 0 when it is empty). A message moved to
// the dead-letter queue is a new message there (Send), so its age starts
// again.
func (q *Queue) Stats() (visible int, oldest time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	for _, m := range q.msgs {
		if !now.Before(m.visibleAt) {
			visible++
		}
		oldest = max(oldest, now.Sub(m.sent))
	}
	return visible, oldest
}

// Bodies lists the bodies of the messages in the queue, oldest first.
func (q *Queue) Bodies() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]string, len(q.msgs))
	for i, m := range q.msgs {
		out[i] = m.body
	}
	return out
}

// receive hands out up to n visible messages as records, moving the ones
// past the redrive maximum to the dead-letter queue first.
func (q *Queue) receive(n int) []events.SQSMessage {
	q.mu.Lock()
	now := q.now()
	var out []events.SQSMessage
	var dead []*message
	kept := q.msgs[:0]
	for _, m := range q.msgs {
		if len(out) == n || now.Before(m.visibleAt) {
			kept = append(kept, m)
			continue
		}
		if q.MaxReceiveCount > 0 && q.DLQ != nil && m.receives >= q.MaxReceiveCount {
			dead = append(dead, m)
			continue
		}
		m.receives++
		if m.first.IsZero() {
			m.first = now
		}
		m.visibleAt = now.Add(q.VisibilityTimeout)
		q.seq++
		m.handle = fmt.Sprintf("%s#%d", m.id, q.seq)
		out = append(out, q.record(m))
		kept = append(kept, m)
	}
	q.msgs = kept
	q.mu.Unlock()
	for _, m := range dead {
		q.DLQ.SendTraced(m.body, m.attrs, m.trace)
	}
	return out
}

func (q *Queue) record(m *message) events.SQSMessage {
	sum := md5.Sum([]byte(m.body))
	rec := events.SQSMessage{
		MessageId: m.id, ReceiptHandle: m.handle, Body: m.body, Md5OfBody: hex.EncodeToString(sum[:]),
		Attributes: map[string]string{
			"ApproximateReceiveCount":          strconv.Itoa(m.receives),
			"SentTimestamp":                    strconv.FormatInt(m.sent.UnixMilli(), 10),
			"SenderId":                         "AIDAIENQZJOLO23YVJ4VO",
			"ApproximateFirstReceiveTimestamp": strconv.FormatInt(m.first.UnixMilli(), 10),
		},
		MessageAttributes: map[string]events.SQSMessageAttribute{},
		EventSource:       "aws:sqs", EventSourceARN: q.ARN, AWSRegion: Region,
	}
	if m.trace != "" {
		rec.Attributes[logx.AWSTraceHeader] = m.trace
	}
	for k, v := range m.attrs {
		rec.MessageAttributes[k] = events.SQSMessageAttribute{StringValue: &v, DataType: "String"}
	}
	if len(m.attrs) > 0 {
		rec.Md5OfMessageAttributes = attributesMD5(m.attrs)
	}
	return rec
}

// attributesMD5 is SQS's digest of string message attributes: per name in
// order, length-prefixed name, data type, transport type 1, and value.
func attributesMD5(attrs map[string]string) string {
	names := make([]string, 0, len(attrs))
	for k := range attrs {
		names = append(names, k)
	}
	sort.Strings(names)
	var b bytes.Buffer
	put := func(s string) {
		_ = binary.Write(&b, binary.BigEndian, uint32(len(s)))
		b.WriteString(s)
	}
	for _, n := range names {
		put(n)
		put("String")
		b.WriteByte(1)
		put(attrs[n])
	}
	sum := md5.Sum(b.Bytes())
	return hex.EncodeToString(sum[:])
}

// delete removes the message received with handle (a stale handle, from
// a receive before the latest, deletes nothing, as in SQS after a
// redelivery).
func (q *Queue) delete(handle string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, m := range q.msgs {
		if m.handle == handle {
			q.msgs = append(q.msgs[:i], q.msgs[i+1:]...)
			return
		}
	}
}

// nextVisible is how long until some message becomes visible (0: now;
// -1: the queue is empty).
func (q *Queue) nextVisible() time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.msgs) == 0 {
		return -1
	}
	now := q.now()
	next := time.Duration(-1)
	for _, m := range q.msgs {
		d := max(m.visibleAt.Sub(now), 0)
		if next < 0 || d < next {
			next = d
		}
	}
	return next
}

// Handler is a function behind the mapping.
type Handler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// Mapping is an emulated event source mapping with ReportBatchItemFailures.
type Mapping struct {
	Queue          *Queue
	Handler        Handler
	BatchSize      int
	MaxConcurrency int
	// Timeout is the function timeout: each invocation's deadline.
	Timeout time.Duration
	Logger  *slog.Logger
	// disabled is UpdateEventSourceMapping's Enabled=false: the mapping
	// stops receiving (invocations in flight finish), the messages wait
	// in the queue and age, as SQS keeps them for a disabled mapping.
	disabled atomic.Bool
}

// SetEnabled enables or disables the mapping, as
// `aws lambda update-event-source-mapping --enabled|--no-enabled` does.
func (m *Mapping) SetEnabled(on bool) {
	m.disabled.Store(!on)
	if on {
		m.Queue.wake()
	}
}

// Enabled is whether the mapping receives.
func (m *Mapping) Enabled() bool { return !m.disabled.Load() }

// Run polls until ctx ends.
func (m *Mapping) Run(ctx context.Context) {
	sem := make(chan struct{}, max(m.MaxConcurrency, 1))
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		wait := m.Queue.nextVisible()
		if m.disabled.Load() {
			// Nothing is received; SetEnabled(true) wakes the loop.
			wait = time.Second
		}
		if wait == 0 {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			batch := m.Queue.receive(max(m.BatchSize, 1))
			if len(batch) == 0 {
				<-sem
				continue
			}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				m.invoke(ctx, batch)
			}()
			continue
		}
		if wait < 0 || wait > time.Second {
			wait = time.Second
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-m.Queue.notify:
		case <-t.C:
		}
		t.Stop()
	}
}

// invoke delivers one batch and deletes what succeeded.
func (m *Mapping) invoke(ctx context.Context, batch []events.SQSMessage) {
	timeout := m.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	trace := ""
	for _, r := range batch {
		if trace = r.Attributes[logx.AWSTraceHeader]; trace != "" {
			break
		}
	}
	ictx, cancel := context.WithTimeout(logx.WithInvocationTrace(ctx, localtrace.Or(trace)), timeout)
	resp, err := m.Handler(ictx, events.SQSEvent{Records: batch})
	cancel()
	failed := map[string]bool{}
	switch {
	case err != nil:
		m.log().Warn("invocation failed; the whole batch is retried", "queue", m.Queue.Name, "records", len(batch), "error", err.Error())
		return
	default:
		ids := map[string]bool{}
		for _, r := range batch {
			ids[r.MessageId] = true
		}
		for _, f := range resp.BatchItemFailures {
			if !ids[f.ItemIdentifier] {
				m.log().Warn("batch item failure names no record of the batch; the whole batch is retried", "queue", m.Queue.Name, "id", f.ItemIdentifier)
				return
			}
			failed[f.ItemIdentifier] = true
		}
	}
	for _, r := range batch {
		if !failed[r.MessageId] {
			m.Queue.delete(r.ReceiptHandle)
		}
	}
}

func (m *Mapping) log() *slog.Logger {
	if m.Logger != nil {
		return m.Logger
	}
	return slog.Default()
}
