package rezagent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// API is the part of *dynamodb.Client the service calls.
type API = ddb.API

// Store reads and writes the messages of one stage in one table.
type Store struct {
	client     API
	table      string
	stage      string
	codec      *ddb.CursorCodec
	now        func() time.Time
	newID      func() string
	scanBudget int
	// typeIndex: the table has message_type-created_date-index (the
	// stage deploys it and says so in contract.EnvTypeIndex).
	typeIndex bool
}

// NewStore returns a Store on table for stage (the value written to each
// message's stage attribute and listed by default). cursorKey signs list
// cursors.
func NewStore(client API, table, stage string, cursorKey []byte) *Store {
	return &Store{client: client, table: table, stage: stage, codec: ddb.NewCursorCodec(cursorKey),
		now: time.Now, newID: uuid.NewString, scanBudget: DefaultScanBudget}
}

// NewMessage is the input of Create.
type NewMessage struct {
	MessageType string
	CreatedBy   string
	Payload     Payload
	// CorrelationID traces the message across services; "" makes a new one.
	CorrelationID string
}

// Create stores a new message in status created, expiring after Retention.
func (s *Store) Create(ctx context.Context, in NewMessage) (*Message, error) {
	return s.create(ctx, in, s.newID())
}

// create stores in under id; a taken id fails the condition, with the
// stored item in the error (ALL_OLD) for CreateWithID.
func (s *Store) create(ctx context.Context, in NewMessage, id string) (*Message, error) {
	if in.MessageType == "" || in.CreatedBy == "" || in.Payload == nil {
		return nil, fmt.Errorf("%w: message_type, created_by and payload are required", ErrInvalidInput)
	}
	now := s.now()
	ts := Timestamp(now)
	m := &Message{
		Summary: Summary{
			MessageID:     id,
			CreatedDate:   ts,
			CreatedBy:     in.CreatedBy,
			Stage:         s.stage,
			MessageType:   in.MessageType,
			Status:        StatusCreated,
			UpdatedDate:   ts,
			CorrelationID: in.CorrelationID,
			TTL:           now.Add(Retention).Unix(),
		},
		Payload: in.Payload,
	}
	if m.CorrelationID == "" {
		m.CorrelationID = uuid.NewString()
	}
	item, err := attributevalue.MarshalMap(m)
	if err != nil {
		return nil, fmt.Errorf("rezagent: marshal message: %w", err)
	}
	if ddb.ItemSize(item) > MaxMessageBytes {
		return nil, ErrTooLarge
	}
	if err := ddb.Create(ctx, s.client, s.table, item, contract.AttrMessageID); err != nil {
		return nil, storeError("PutItem", err)
	}
	return m, nil
}

func (s *Store) key(id string) (map[string]types.AttributeValue, error) {
	return attributevalue.MarshalMap(map[string]string{contract.AttrMessageID: id})
}

// Get returns the message with id, read strongly consistent so a message is
// visible right after Create returns. An expired message is ErrNotFound
// even while DynamoDB has not deleted it yet.
func (s *Store) Get(ctx context.Context, id string) (*Message, error) {
	key, err := s.key(id)
	if err != nil {
		return nil, err
	}
	item, err := ddb.Get(ctx, s.client, s.table, key)
	if err != nil {
		return nil, storeError("GetItem", err)
	}
	if item == nil || expired(item, s.now()) {
		return nil, ErrNotFound
	}
	return unmarshalMessage(item)
}

// expired reports whether item's ttl has passed. DynamoDB deletes such items
// only eventually (typically within days), so every read checks.
func expired(item map[string]types.AttributeValue, now time.Time) bool {
	n, ok := item[contract.AttrTTL].(*types.AttributeValueMemberN)
	if !ok {
		return false
	}
	ttl, err := strconv.ParseInt(n.Value, 10, 64)
	return err == nil && ttl <= now.Unix()
}

// liveCond is the condition and filter form of !expired: no ttl, or one
// after :now (Unix seconds); its name #ttl.
const liveCond = "(attribute_not_exists(#ttl) OR #ttl > :now)"

// liveMessage is what every status change requires besides its own
// condition: the message exists (without it UpdateItem would create a
// phantom item) and has not expired; names #id and #ttl, value :now.
const liveMessage = "attribute_exists(#id) AND " + liveCond

// StatusChange is the input of SetStatus.
type StatusChange struct {
	To Status
	// ErrorMessage is required for StatusFailed and refused otherwise.
	ErrorMessage string
	// NotificationID (ntfy.sh) may come with StatusCompleted only.
	NotificationID string
}

func (c StatusChange) check() error {
	switch {
	case !c.To.valid() || c.To == StatusCreated:
		return fmt.Errorf("%w: cannot change status to %q", ErrInvalidInput, c.To)
	case c.To == StatusFailed && c.ErrorMessage == "":
		return fmt.Errorf("%w: error_message is required for status failed", ErrInvalidInput)
	case c.To != StatusFailed && c.ErrorMessage != "":
		return fmt.Errorf("%w: error_message is only for status failed", ErrInvalidInput)
	case c.To != StatusCompleted && c.NotificationID != "":
		return fmt.Errorf("%w: notification_id is only for status completed", ErrInvalidInput)
	}
	return nil
}

// SetStatus moves the message to ch.To and returns the updated message.
//
// The write is conditioned on the message existing, being unexpired and
// being in a status from which ch.To is allowed; without attribute_exists,
// UpdateItem would create a phantom item for an unknown id. Two concurrent
// changes therefore cannot both succeed from the same status (completed
// racing failed): the loser gets a TransitionError naming the status it
// found. processing → processing is a redelivery: it restarts
// processing_started_at and increments retry_count, in a second write
// conditioned on the status still being processing, because one update
// expression cannot increment only for some predecessors.
func (s *Store) SetStatus(ctx context.Context, id string, ch StatusChange) (*Message, error) {
	if err := ch.check(); err != nil {
		return nil, err
	}
	now := s.now()
	ts := Timestamp(now)
	token := uuid.NewString()
	var first []Status
	for _, st := range sourcesOf(ch.To) {
		if st != ch.To {
			first = append(first, st)
		}
	}
	e := statusUpdate(ch, ts, token)
	e.Condition = statusIn(e, first)
	m, cur, err := s.apply(ctx, id, e, now)
	if err != nil || m != nil {
		return m, err
	}
	if cur != nil && cur.WriteToken == token {
		// This request's own earlier attempt, whose answer was lost: no
		// status moves to itself, so its retry failed the condition.
		return cur, nil
	}
	if cur != nil && ch.To == StatusProcessing && cur.Status == StatusProcessing {
		// processing → processing counts a redelivery: ADD is not
		// idempotent, so the write's token keeps the SDK's retry of a
		// lost answer from counting it twice.
		key, err := s.key(id)
		if err != nil {
			return nil, err
		}
		retry := statusUpdate(ch, ts, token)
		retry.Update += " ADD #retries :one"
		retry.Condition = "#status = :processing AND (attribute_not_exists(#token) OR #token <> :token)"
		retry.Names["#retries"] = contract.AttrRetryCount
		retry.Values[":one"], retry.Values[":processing"] = ddb.N(1), ddb.S(StatusProcessing)
		if m, cur, err = s.applyIf(ctx, key, retry, now); err != nil || m != nil {
			return m, err
		}
		if cur != nil && cur.WriteToken == token {
			return cur, nil
		}
	}
	if cur == nil {
		return nil, ErrNotFound
	}
	return nil, &TransitionError{From: cur.Status, To: ch.To}
}

// statusUpdate is the update of a status change to ch.To at ts by the
// write of token, without its condition.
func statusUpdate(ch StatusChange, ts, token string) ddb.Expr {
	e := ddb.Expr{
		Update: "SET #status = :to, #updated = :ts, #token = :token",
		Names:  map[string]string{"#status": contract.AttrStatus, "#updated": contract.AttrUpdatedDate, "#token": contract.AttrWriteToken},
		Values: map[string]types.AttributeValue{":to": ddb.S(ch.To), ":ts": ddb.S(ts), ":token": ddb.S(token)},
	}
	switch ch.To {
	case StatusProcessing:
		e.Update += ", #started = :ts"
		e.Names["#started"] = contract.AttrProcessingStartedAt
	case StatusCompleted, StatusFailed:
		e.Update += ", #completed = :ts"
		e.Names["#completed"] = contract.AttrProcessingCompletedAt
	}
	setOutcome(&e, ch)
	return e
}

// setOutcome adds ch's error message and notification id, where it has
// them, to the SET clause that ends e's update.
func setOutcome(e *ddb.Expr, ch StatusChange) {
	if ch.ErrorMessage != "" {
		e.Update += ", #error = :error"
		e.Names["#error"], e.Values[":error"] = contract.AttrErrorMessage, ddb.S(ch.ErrorMessage)
	}
	if ch.NotificationID != "" {
		e.Update += ", #ntfy = :ntfy"
		e.Names["#ntfy"], e.Values[":ntfy"] = contract.AttrNotificationID, ddb.S(ch.NotificationID)
	}
}

// apply runs e (an update and its condition on the status) on a live
// message. It returns the updated message, or, when the condition refused
// the write, the message as it was (nil if it does not exist or has
// expired), told apart by ReturnValuesOnConditionCheckFailure=ALL_OLD
// without a read beforehand.
func (s *Store) apply(ctx context.Context, id string, e ddb.Expr, now time.Time) (updated, current *Message, err error) {
	key, err := s.key(id)
	if err != nil {
		return nil, nil, err
	}
	return s.applyIf(ctx, key, e, now)
}

// statusIn is the condition "status is one of from" (its name #status),
// its values added to e.
func statusIn(e ddb.Expr, from []Status) string {
	var b strings.Builder
	b.WriteString("#status IN (")
	for i, st := range from {
		p := ":from" + strconv.Itoa(i)
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p)
		e.Values[p] = ddb.S(st)
	}
	b.WriteString(")")
	e.Names["#status"] = contract.AttrStatus
	return b.String()
}

// applyIf is apply with any condition on the status (and lease) in e,
// whose maps it adds to: the message must also exist and be live.
func (s *Store) applyIf(ctx context.Context, key map[string]types.AttributeValue, e ddb.Expr, now time.Time) (updated, current *Message, err error) {
	e.Condition = liveMessage + " AND " + e.Condition
	e.Names["#id"], e.Names["#ttl"] = contract.AttrMessageID, contract.AttrTTL
	e.Values[":now"] = ddb.N(now.Unix())
	item, err := ddb.UpdateExpr(ctx, s.client, s.table, key, e)
	if err == nil {
		m, err := unmarshalMessage(item)
		return m, nil, err
	}
	err = ddb.IfConditionFailed(storeError("UpdateItem", err), func(old *Message) error {
		if old != nil && (old.TTL == 0 || old.TTL > now.Unix()) {
			current = old
		}
		return nil
	})
	return nil, current, err
}

func unmarshalMessage(item map[string]types.AttributeValue) (*Message, error) {
	var m Message
	if err := attributevalue.UnmarshalMap(item, &m); err != nil {
		return nil, fmt.Errorf("rezagent: unmarshal message: %w", err)
	}
	return &m, nil
}

func storeError(op string, err error) error {
	return ddb.WrapAs(op, err, ddb.ErrItemTooLarge, ErrTooLarge)
}

// Query selects a listing.
type Query struct {
	// Status lists one status (status-created_date-index); "" lists the
	// store's stage (stage-created_date-index).
	Status Status
	// Type lists one message type (message_type-created_date-index,
	// where the stage deploys it); not with Status.
	Type string
	// From (inclusive) and To (exclusive) bound created_date; zero is
	// unbounded. Half-open, so "October" is From 10-01, To 11-01.
	From, To time.Time
	// Limit is the page size, 1 to MaxPageSize; 0 means DefaultPageSize.
	Limit int
	// Cursor is the Next of the previous page, "" for the first.
	Cursor string
}

// Page is one page of a listing, newest first.
type Page struct {
	Messages []Summary `json:"messages"`
	// Next is the cursor of the next page, "" when there is none.
	Next string `json:"next_cursor,omitempty"`
}

// pageKey is a position in either index: an index key carries the table
// key too. Part is the index partition value (a stage or a status).
type pageKey struct {
	ID      string `json:"i"`
	Part    string `json:"p"`
	Created string `json:"t"`
}

// listing is a Query resolved to index terms: partName is the partition
// attribute's placeholder in summaryNames.
type listing struct {
	index, partAttr, partName, part string
	from, to                        string // inclusive created_date bounds, "" = open
}

func (l listing) scope() string {
	return "rezagent/" + l.index + "/" + l.part + "/" + l.from + "/" + l.to
}

// summaryProjection is everything but payload, written out; its names
// (summaryNames) also serve each listing's key condition and filter,
// since every attribute those read is among them. Shared by every
// request: never written to.
const summaryProjection = "#id, #created, #by, #stage, #type, #status, #updated, #started, #completed, #error, #retries, #ntfy, #correlation, #ttl"

var summaryNames = map[string]string{
	"#id": contract.AttrMessageID, "#created": contract.AttrCreatedDate, "#by": contract.AttrCreatedBy, "#stage": contract.AttrStage, "#type": contract.AttrMessageType, "#status": contract.AttrStatus,
	"#updated": contract.AttrUpdatedDate, "#started": contract.AttrProcessingStartedAt, "#completed": contract.AttrProcessingCompletedAt,
	"#error": contract.AttrErrorMessage, "#retries": contract.AttrRetryCount, "#ntfy": contract.AttrNotificationID, "#correlation": contract.AttrCorrelationID, "#ttl": contract.AttrTTL,
}

// ceilMicro rounds t up to the microsecond grid of Timestamp, so that
// comparing stored timestamps with the rounded bound is exact.
func ceilMicro(t time.Time) time.Time {
	if r := t.Truncate(time.Microsecond); !r.Equal(t) {
		return r.Add(time.Microsecond)
	}
	return t
}

func (s *Store) resolve(q Query) (listing, error) {
	l := listing{index: contract.IndexStageCreatedDate, partAttr: contract.AttrStage, partName: "#stage", part: s.stage}
	switch {
	case q.Status != "" && q.Type != "":
		return l, fmt.Errorf("%w: list by status or by message type, not both", ErrInvalidInput)
	case q.Status != "":
		if !q.Status.valid() {
			return l, fmt.Errorf("%w: unknown status %q", ErrInvalidInput, q.Status)
		}
		l = listing{index: contract.IndexStatusCreatedDate, partAttr: contract.AttrStatus, partName: "#status", part: string(q.Status)}
	case q.Type != "":
		if !s.typeIndex {
			return l, ErrNoTypeIndex
		}
		l = listing{index: contract.IndexMessageTypeCreatedDate, partAttr: contract.AttrMessageType, partName: "#type", part: q.Type}
	}
	if !q.From.IsZero() && !q.To.IsZero() && !q.From.Before(q.To) {
		return l, fmt.Errorf("%w: from must be before to", ErrInvalidInput)
	}
	if !q.From.IsZero() {
		l.from = Timestamp(ceilMicro(q.From))
	}
	if !q.To.IsZero() {
		// The largest timestamp before To: BETWEEN and <= are inclusive.
		l.to = Timestamp(ceilMicro(q.To).Add(-time.Microsecond))
	}
	return l, nil
}

// List returns a page of the stage's messages, or of one status, newest
// first, without payloads.
//
// Expired messages are skipped with a filter, and DynamoDB applies Limit
// before the filter: a single Query could return a short or empty page
// while more remain. List therefore queries on until the page is full or
// the index range is exhausted, reading at most the scan budget
// (DefaultScanBudget items). Only when that budget runs out (a long run of
// expired messages awaiting deletion) is a page short; its cursor then
// points after the last item read, so no message is skipped or repeated.
//
// The indexes are GSIs, so listings are eventually consistent.
func (s *Store) List(ctx context.Context, q Query) (*Page, error) {
	limit := q.Limit
	if limit == 0 {
		limit = DefaultPageSize
	}
	if limit < 1 || limit > MaxPageSize {
		return nil, fmt.Errorf("%w: limit must be 1 to %d", ErrInvalidInput, MaxPageSize)
	}
	l, err := s.resolve(q)
	if err != nil {
		return nil, err
	}
	e := ddb.Expr{
		KeyCondition: l.partName + " = :part", Filter: liveCond, Projection: summaryProjection, Names: summaryNames,
		Values: map[string]types.AttributeValue{":part": ddb.S(l.part), ":now": ddb.N(s.now().Unix())},
	}
	switch {
	case l.from != "" && l.to != "":
		e.KeyCondition += " AND #created BETWEEN :from AND :to"
	case l.from != "":
		e.KeyCondition += " AND #created >= :from"
	case l.to != "":
		e.KeyCondition += " AND #created <= :to"
	}
	if l.from != "" {
		e.Values[":from"] = ddb.S(l.from)
	}
	if l.to != "" {
		e.Values[":to"] = ddb.S(l.to)
	}
	in := e.Query(s.table)
	in.IndexName, in.ScanIndexForward = aws.String(l.index), aws.Bool(false)
	page, err := ddb.Query[Summary, pageKey]{
		Input: in,
		// Later rounds double their Limit, since a filtered-out round
		// suggests more expired items follow; the budget bounds what one
		// page reads.
		Pager:    ddb.Pager{Size: limit, Grow: true, Budget: s.scanBudget},
		Codec:    s.codec,
		Scope:    l.scope(),
		Check:    l.check,
		StartKey: l.startKey,
		KeyOf:    l.keyOf,
	}.Page(ctx, s.client, q.Cursor)
	if err != nil {
		return nil, err
	}
	return &Page{Messages: page.Items, Next: page.Next}, nil
}

// check keeps a cursor, which the MAC binds to l's scope, inside l's
// partition and range even if it were forged.
func (l listing) check(k pageKey) error {
	if k.Part != l.part || k.ID == "" || k.Created == "" || (l.from != "" && k.Created < l.from) || (l.to != "" && k.Created > l.to) {
		return ddb.ErrInvalidCursor
	}
	return nil
}

// startKey and keyOf convert by hand: the partition attribute differs
// between the two indexes while the cursor's json stays the same.
func (l listing) startKey(k pageKey) (map[string]types.AttributeValue, error) {
	return attributevalue.MarshalMap(map[string]string{contract.AttrMessageID: k.ID, l.partAttr: k.Part, contract.AttrCreatedDate: k.Created})
}

// keyOf reads a position from an item of the page, which carries the
// index key and the table key, as a LastEvaluatedKey does.
func (l listing) keyOf(item map[string]types.AttributeValue) (pageKey, error) {
	var k map[string]string
	if err := attributevalue.UnmarshalMap(item, &k); err != nil {
		return pageKey{}, fmt.Errorf("rezagent: unmarshal page key: %w", err)
	}
	return pageKey{ID: k[contract.AttrMessageID], Part: k[l.partAttr], Created: k[contract.AttrCreatedDate]}, nil
}

// Metrics summarises the messages created since a time.
type Metrics struct {
	Stage string `json:"stage"`
	Since string `json:"since"`
	// Counts has every status, by the messages' current status.
	Counts map[Status]int `json:"counts"`
	Total  int            `json:"total"`
	// SuccessRate is completed / (completed + failed); nil (JSON null)
	// when neither occurred, which is "no data", not 0 %.
	SuccessRate *float64 `json:"success_rate"`
	// Recent are the stage's newest messages (any age), at most
	// RecentCount.
	Recent []Summary `json:"recent"`
	// MessageType is the type the metrics are limited to (?message_type=),
	// "" for all.
	MessageType string `json:"message_type,omitempty"`
	// ByType counts the unexpired messages of each documented type
	// created since, where the stage deploys the type index (the
	// document's "type distribution"); absent otherwise.
	ByType map[string]int `json:"by_type,omitempty"`
	// Truncated means a count stopped at its page bound: the counts are
	// lower bounds.
	Truncated bool `json:"truncated,omitempty"`
}

// Metrics counts the unexpired messages created at or after since, by
// status, and lists the newest RecentCount messages.
//
// Each count is a Query on status-created_date-index with Select=COUNT over
// every page: it reads, and pays for, every matching item (COUNT saves
// transfer, not read capacity), so the cost grows with the window. The five
// counts and the recent listing run concurrently.
//
// Where the stage has the type index, ByType counts each documented type
// with a COUNT Query of its partition.
func (s *Store) Metrics(ctx context.Context, since time.Time) (*Metrics, error) {
	now := s.now()
	from := Timestamp(ceilMicro(since))
	m := &Metrics{Stage: s.stage, Since: from, Counts: make(map[Status]int, len(Statuses))}
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		errs      []error
		truncated bool
	)
	for _, st := range Statuses {
		wg.Go(func() {
			n, complete, err := s.count(ctx, s.byStatus, contract.AttrStatus, string(st), from, now)
			mu.Lock()
			defer mu.Unlock()
			m.Counts[st] = n
			truncated = truncated || !complete
			errs = append(errs, err)
		})
	}
	if s.typeIndex {
		m.ByType = make(map[string]int, len(notificationTypes))
		for typ := range notificationTypes {
			wg.Go(func() {
				n, complete, err := s.count(ctx, s.byType, contract.AttrMessageType, typ, from, now)
				mu.Lock()
				defer mu.Unlock()
				m.ByType[typ] = n
				truncated = truncated || !complete
				errs = append(errs, err)
			})
		}
	}
	wg.Go(func() {
		p, err := s.List(ctx, Query{Limit: RecentCount})
		mu.Lock()
		defer mu.Unlock()
		if p != nil {
			m.Recent = p.Messages
		}
		errs = append(errs, err)
	})
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	m.finish(truncated)
	return m, nil
}

// finish derives the total and the success rate from the counts.
func (m *Metrics) finish(truncated bool) {
	for _, n := range m.Counts {
		m.Total += n
	}
	if done := m.Counts[StatusCompleted] + m.Counts[StatusFailed]; done > 0 {
		rate := float64(m.Counts[StatusCompleted]) / float64(done)
		m.SuccessRate = &rate
	}
	m.Truncated = truncated
}

// TypeMetrics are the Metrics of one message type (it needs the type
// index, ErrNoTypeIndex otherwise): the type's partition since, read once
// with status projected and tallied by status, beside its newest
// messages.
func (s *Store) TypeMetrics(ctx context.Context, since time.Time, typ string) (*Metrics, error) {
	if !s.typeIndex {
		return nil, ErrNoTypeIndex
	}
	now := s.now()
	from := Timestamp(ceilMicro(since))
	m := &Metrics{Stage: s.stage, Since: from, MessageType: typ, Counts: make(map[Status]int, len(Statuses))}
	for _, st := range Statuses {
		m.Counts[st] = 0
	}
	e := createdSince(contract.AttrMessageType, typ, from, now)
	e.Projection = "#status"
	e.Names["#status"] = contract.AttrStatus
	in := s.byType(e)
	truncated := true
	for range maxCountPages {
		out, err := s.client.Query(ctx, in)
		if err != nil {
			return nil, storeError("Query", err)
		}
		for _, item := range out.Items {
			var st struct {
				Status Status `dynamodbav:"status"`
			}
			if err := attributevalue.UnmarshalMap(item, &st); err == nil && st.Status.valid() {
				m.Counts[st.Status]++
			}
		}
		if in.ExclusiveStartKey = out.LastEvaluatedKey; len(in.ExclusiveStartKey) == 0 {
			truncated = false
			break
		}
	}
	p, err := s.List(ctx, Query{Type: typ, Limit: RecentCount})
	if err != nil {
		return nil, err
	}
	m.Recent = p.Messages
	m.finish(truncated)
	return m, nil
}

// count sums Count over every page of one index partition (attr = value,
// created at or after from; query makes the index's Query), up to
// maxCountPages; one page's Count undercounts past 1 MB of items.
// complete is false when the bound stopped it.
func (s *Store) count(ctx context.Context, query func(ddb.Expr) *dynamodb.QueryInput, attr, value, from string, now time.Time) (n int, complete bool, err error) {
	in := query(createdSince(attr, value, from, now))
	in.Select = types.SelectCount
	for range maxCountPages {
		out, err := s.client.Query(ctx, in)
		if err != nil {
			return 0, false, storeError("Query", err)
		}
		n += int(out.Count)
		if in.ExclusiveStartKey = out.LastEvaluatedKey; len(in.ExclusiveStartKey) == 0 {
			return n, true, nil
		}
	}
	return n, false, nil
}

// createdSince is the key condition of an index partition (attr = value) from
// created_date from on, and the filter of the live messages.
func createdSince(attr, value, from string, now time.Time) ddb.Expr {
	return ddb.Expr{
		KeyCondition: "#part = :part AND #created >= :from", Filter: liveCond,
		Names:  map[string]string{"#part": attr, "#created": contract.AttrCreatedDate, "#ttl": contract.AttrTTL},
		Values: map[string]types.AttributeValue{":part": ddb.S(value), ":from": ddb.S(from), ":now": ddb.N(now.Unix())},
	}
}

// byType is the Query of message_type-created_date-index with e's key
// condition, filter and projection.
func (s *Store) byType(e ddb.Expr) *dynamodb.QueryInput {
	in := e.Query(s.table)
	in.IndexName = aws.String(contract.IndexMessageTypeCreatedDate)
	return in
}

// byStatus is the Query of status-created_date-index with e's key
// condition, filter and projection.
func (s *Store) byStatus(e ddb.Expr) *dynamodb.QueryInput {
	in := e.Query(s.table)
	in.IndexName = aws.String(contract.IndexStatusCreatedDate)
	return in
}
