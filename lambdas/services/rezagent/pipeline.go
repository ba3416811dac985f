package rezagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Notice is what travels through SNS and SQS: a reference to a message,
// never its payload. The table is the truth, and a payload of up to 391 KB
// would not fit SNS's 256 KB message limit.
type Notice struct {
	MessageID string `json:"message_id"`
}

// Sentinel errors of the processor's store operations.
var (
	// ErrFinal: the message is completed or failed; nothing is left to do.
	ErrFinal = errors.New("rezagent: message is already final")
	// ErrBusy: another delivery holds a live lease on the message.
	ErrBusy = errors.New("rezagent: message is being processed by another delivery")
	// ErrLeaseLost: the lease expired and another delivery took the
	// message over; this delivery's outcome is not recorded.
	ErrLeaseLost = errors.New("rezagent: lease lost")
)

// maxLeaseTokenLen bounds the token (an SQS message id and a receive
// count); it counts in the item's update headroom.
const maxLeaseTokenLen = 128

// SNSAPI publishes message to topic with string message attributes: SNS's
// Publish, which is all the pipeline calls of SNS.
type SNSAPI interface {
	Publish(ctx context.Context, topic, message string, attrs map[string]string) error
}

// SNSConstructor builds the SNS client of a function that publishes,
// from its environment. publisher.NewSNS (services/rezagent/publisher) is
// the one the API and the scheduler use: the SDK's SNS client lives there
// so that the processor's bootstrap, which publishes nothing, does not
// link it (docs/functions.md, "Cold start").
type SNSConstructor func(ctx context.Context, getenv func(string) string) (SNSAPI, error)

// Publisher puts messages on the pipeline: one SNS publish, then the
// conditioned move to queued. The API and the scheduler share it.
type Publisher struct {
	sns   SNSAPI
	topic string
	store *Store
}

// NewPublisher publishes to topic and marks messages in store.
func NewPublisher(client SNSAPI, topic string, store *Store) *Publisher {
	return &Publisher{sns: client, topic: topic, store: store}
}

// Publish sends m's notice and moves m to queued. It returns m as it is
// after the call: queued, or in the status the processor already moved it
// to (the publish reached SQS first). A publish error leaves m created, for a
// scheduler run to republish (Store.Stranded).
func (p *Publisher) Publish(ctx context.Context, m *Message) (*Message, error) {
	body, err := json.Marshal(Notice{MessageID: m.MessageID})
	if err != nil {
		return m, err
	}
	attrs := map[string]string{contract.AttrMessageType: m.MessageType}
	// The correlation id travels beside the notice (raw delivery makes it
	// the SQS record's attribute), so the processor logs it before it
	// reads the message; SNS refuses an empty string value.
	if m.CorrelationID != "" {
		attrs[contract.AttrCorrelationID] = m.CorrelationID
	}
	err = p.sns.Publish(ctx, p.topic, string(body), attrs)
	if err != nil {
		return m, fmt.Errorf("rezagent: publish %s: %w", m.MessageID, err)
	}
	if m.Status != StatusCreated {
		return m, nil
	}
	q, err := p.store.SetStatus(ctx, m.MessageID, StatusChange{To: StatusQueued})
	var te *TransitionError
	if errors.As(err, &te) {
		// The processor was faster (queued is optional): report the
		// status it found rather than a stale created.
		found := *m
		found.Status = te.From
		return &found, nil
	}
	if err != nil {
		return m, err
	}
	return q, nil
}

// CreateWithID stores a new message under a caller-derived id. When the id
// exists it returns the stored message and created=false: the caller is a
// retry of the one that created it, and decides what is left to do.
func (s *Store) CreateWithID(ctx context.Context, id string, in NewMessage) (m *Message, created bool, err error) {
	m, err = s.create(ctx, in, id)
	if err == nil {
		return m, true, nil
	}
	var old Message
	if found, uerr := ddb.OldItem(err, &old); uerr != nil {
		return nil, false, uerr
	} else if !found {
		return nil, false, err
	}
	return &old, false, nil
}

// Stranded lists up to limit live messages still created (stored, never
// published, or the publish failed) that were created before cutoff,
// oldest first.
func (s *Store) Stranded(ctx context.Context, cutoff time.Time, limit int) ([]Summary, error) {
	now := s.now()
	page, err := ddb.Pager{Size: limit, Grow: true, Budget: s.scanBudget}.Fill(ctx, s.client, s.byStatus(ddb.Expr{
		KeyCondition: "#status = :created AND #created < :cutoff", Filter: liveCond,
		Names: map[string]string{"#status": contract.AttrStatus, "#created": contract.AttrCreatedDate, "#ttl": contract.AttrTTL},
		Values: map[string]types.AttributeValue{":created": ddb.S(StatusCreated), ":cutoff": ddb.S(Timestamp(cutoff)),
			":now": ddb.N(now.Unix())},
	}))
	if err != nil {
		return nil, storeError("Query", err)
	}
	var out []Summary
	if err := attributevalue.UnmarshalListOfMaps(page.Items, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Claim moves the message into processing for one delivery, which holds
// it until leaseUntil. From created or queued it is the first attempt; from
// processing with an expired (or released) lease it is a retry and counts
// in retry_count. It answers ErrNotFound (no such live message), ErrFinal
// (completed or failed), or ErrBusy (a live lease of another delivery):
// the conditions make concurrent deliveries of one message claim it once.
// With ErrFinal and ErrBusy it also returns the message as found.
func (s *Store) Claim(ctx context.Context, id, token string, leaseUntil time.Time) (*Message, error) {
	if token == "" || len(token) > maxLeaseTokenLen {
		return nil, fmt.Errorf("%w: lease token must be 1-%d bytes", ErrInvalidInput, maxLeaseTokenLen)
	}
	key, err := s.key(id)
	if err != nil {
		return nil, err
	}
	now := s.now()
	ts := Timestamp(now)
	claim := func() ddb.Expr {
		return ddb.Expr{
			Update: "SET #status = :processing, #updated = :ts, #started = :ts, #leaseToken = :token, #lease = :until",
			Names: map[string]string{"#status": contract.AttrStatus, "#updated": contract.AttrUpdatedDate, "#started": contract.AttrProcessingStartedAt,
				"#leaseToken": contract.AttrLeaseToken, "#lease": contract.AttrLeaseUntil},
			Values: map[string]types.AttributeValue{":processing": ddb.S(StatusProcessing), ":ts": ddb.S(ts), ":token": ddb.S(token),
				":until": ddb.N(leaseUntil.UnixMilli())},
		}
	}
	first := claim()
	first.Condition = statusIn(first, []Status{StatusCreated, StatusQueued})
	m, cur, err := s.applyIf(ctx, key, first, now)
	if err != nil || m != nil {
		return m, err
	}
	// The claim is this delivery's own when the item holds its token: the
	// SDK retried a claim that DynamoDB applied and whose answer was lost.
	// Standing down then would leave the message processing until the
	// lease ends (a redelivery would find the lease held as well).
	mine := func(cur *Message) bool {
		return cur != nil && cur.Status == StatusProcessing && cur.LeaseToken == token
	}
	if mine(cur) {
		return cur, nil
	}
	if cur != nil && cur.Status == StatusProcessing && cur.LeaseUntil <= now.UnixMilli() {
		// A retry: the lease ran out (or was released).
		retry := claim()
		retry.Update += " ADD #retries :one"
		retry.Condition = "#status = :processing AND (attribute_not_exists(#lease) OR #lease <= :nowms)"
		retry.Names["#retries"] = contract.AttrRetryCount
		retry.Values[":one"], retry.Values[":nowms"] = ddb.N(1), ddb.N(now.UnixMilli())
		if m, cur, err = s.applyIf(ctx, key, retry, now); err != nil || m != nil {
			return m, err
		}
		if mine(cur) {
			return cur, nil
		}
	}
	switch {
	case cur == nil:
		return nil, ErrNotFound
	case cur.Status == StatusCompleted || cur.Status == StatusFailed:
		return cur, ErrFinal
	default:
		return cur, ErrBusy // cur.LeaseToken names the holder
	}
}

// Finish records the outcome of the delivery holding token: completed
// (with ntfy's notification id) or failed (with the error message). The
// lease goes with it. ErrLeaseLost: another delivery holds the message.
func (s *Store) Finish(ctx context.Context, id, token string, ch StatusChange) (*Message, error) {
	if err := ch.check(); err != nil {
		return nil, err
	}
	if ch.To != StatusCompleted && ch.To != StatusFailed {
		return nil, fmt.Errorf("%w: Finish takes completed or failed, not %q", ErrInvalidInput, ch.To)
	}
	key, err := s.key(id)
	if err != nil {
		return nil, err
	}
	now := s.now()
	ts := Timestamp(now)
	e := holds(token)
	e.Update = "SET #status = :to, #updated = :ts, #completed = :ts"
	e.Names["#updated"], e.Names["#completed"] = contract.AttrUpdatedDate, contract.AttrProcessingCompletedAt
	e.Values[":to"], e.Values[":ts"] = ddb.S(ch.To), ddb.S(ts)
	setOutcome(&e, ch)
	e.Update += " REMOVE #leaseToken, #lease"
	e.Names["#lease"] = contract.AttrLeaseUntil
	m, cur, err := s.applyIf(ctx, key, e, now)
	if err != nil || m != nil {
		return m, err
	}
	if cur == nil {
		return nil, ErrNotFound
	}
	return nil, ErrLeaseLost
}

// Release gives up the lease of token without an outcome, so the next
// delivery of the message (SQS's retry) can claim it at once.
func (s *Store) Release(ctx context.Context, id, token string) error {
	key, err := s.key(id)
	if err != nil {
		return err
	}
	now := s.now()
	e := holds(token)
	e.Update = "REMOVE #lease, #leaseToken SET #updated = :ts"
	e.Names["#lease"], e.Names["#updated"] = contract.AttrLeaseUntil, contract.AttrUpdatedDate
	e.Values[":ts"] = ddb.S(Timestamp(now))
	m, cur, err := s.applyIf(ctx, key, e, now)
	switch {
	case err != nil || m != nil:
		return err
	case cur == nil:
		return ErrNotFound
	}
	return ErrLeaseLost
}

// holds is the condition that the delivery of token holds the message's
// lease, to which the caller adds its update.
func holds(token string) ddb.Expr {
	return ddb.Expr{
		Condition: "#status = :processing AND #leaseToken = :token",
		Names:     map[string]string{"#status": contract.AttrStatus, "#leaseToken": contract.AttrLeaseToken},
		Values:    map[string]types.AttributeValue{":processing": ddb.S(StatusProcessing), ":token": ddb.S(token)},
	}
}
