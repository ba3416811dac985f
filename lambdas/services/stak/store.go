package stak

import (
	"context"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// API is the part of *dynamodb.Client the service calls.
type API = ddb.API

// Store reads and writes the inbox table.
type Store struct {
	client API
	table  string
	codec  *ddb.CursorCodec
	now    func() time.Time
	newID  func(time.Time) string
	// schemas checks bodies against inbox schemas, keeping the compiled
	// ones of this execution environment.
	schemas BodySchemas
}

// NewStore returns a Store on table. cursorKey signs feed cursors;
// schemas (stakapi.Schemas) checks message bodies against inbox schemas.
func NewStore(client API, table string, cursorKey []byte, schemas BodySchemas) *Store {
	if schemas == nil {
		panic("stak: NewStore without BodySchemas (stakapi.Schemas binds them)")
	}
	return &Store{client: client, table: table, codec: ddb.NewCursorCodec(cursorKey), now: time.Now, newID: newMessageID, schemas: schemas}
}

func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{contract.AttrPK: &types.AttributeValueMemberS{Value: pk}, contract.AttrSK: &types.AttributeValueMemberS{Value: sk}}
}

func withKey(item map[string]types.AttributeValue, pk, sk, kind string) map[string]types.AttributeValue {
	for k, v := range key(pk, sk) {
		item[k] = v
	}
	if kind != "" {
		item[contract.AttrKind] = &types.AttributeValueMemberS{Value: kind}
	}
	return item
}

// get reads one item strongly consistent; nil when absent.
func (s *Store) get(ctx context.Context, pk, sk string) (map[string]types.AttributeValue, error) {
	return ddb.Get(ctx, s.client, s.table, key(pk, sk))
}

// PutTenant creates or replaces a tenant's settings.
func (s *Store) PutTenant(ctx context.Context, ts TenantSettings) (*TenantSettings, error) {
	item, err := attributevalue.MarshalMap(ts)
	if err != nil {
		return nil, fmt.Errorf("stak: marshal settings: %w", err)
	}
	_, err = s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: withKey(item, contract.TenantPK(ts.Tenant), contract.KeySettings, kindSettings)})
	if err != nil {
		return nil, ddb.Wrap("PutItem", err)
	}
	return &ts, nil
}

// Tenant returns a tenant's settings.
func (s *Store) Tenant(ctx context.Context, tenant string) (*TenantSettings, error) {
	item, err := s.get(ctx, contract.TenantPK(tenant), contract.KeySettings)
	if err != nil {
		return nil, err
	}
	if item == nil {
		return nil, ErrTenantNotFound
	}
	var ts TenantSettings
	if err := attributevalue.UnmarshalMap(item, &ts); err != nil {
		return nil, fmt.Errorf("stak: unmarshal settings: %w", err)
	}
	return &ts, nil
}

// PutInbox creates or replaces an inbox config. The tenant must exist; the
// check and the write are one transaction, so an inbox never outlives a
// check that raced with nothing.
func (s *Store) PutInbox(ctx context.Context, ic InboxConfig) (*InboxConfig, error) {
	item, err := attributevalue.MarshalMap(ic)
	if err != nil {
		return nil, fmt.Errorf("stak: marshal inbox: %w", err)
	}
	var tx ddb.Tx
	tx.Check(ddb.Exists(contract.AttrPK).TxCheck(s.table, key(contract.TenantPK(ic.Tenant), contract.KeySettings)), ErrTenantNotFound).
		Put(&types.Put{TableName: aws.String(s.table), Item: withKey(item, contract.TenantPK(ic.Tenant), contract.PrefixInbox+ic.Inbox, kindInbox)}, nil)
	if err := tx.Run(ctx, s.client); err != nil {
		return nil, err
	}
	return &ic, nil
}

// Inbox returns an inbox config.
func (s *Store) Inbox(ctx context.Context, tenant, inbox string) (*InboxConfig, error) {
	item, err := s.get(ctx, contract.TenantPK(tenant), contract.PrefixInbox+inbox)
	if err != nil {
		return nil, err
	}
	if item == nil {
		return nil, ErrInboxNotFound
	}
	var ic InboxConfig
	if err := attributevalue.UnmarshalMap(item, &ic); err != nil {
		return nil, fmt.Errorf("stak: unmarshal inbox: %w", err)
	}
	return &ic, nil
}

// Draft is the input of Publish.
type Draft struct {
	HostSystemID *string
	Sender       string
	Audiences    Audiences
	Category     string
	Title        string
	Body         any
	CTAURI       *string
	// Received is when the request reached Stak; zero means now.
	Received time.Time
}

// Published is the result of Publish: the message as stored for the
// public partition or the first recipient, with every recipient listed.
type Published struct {
	Message
	Recipients int `json:"recipients"`
}

// expiry resolves a message's TTL: inbox.ttl[category], inbox.ttl.default,
// tenant.ttl, DefaultTTL; capped at MaxTTL (decision 10).
func (s *Store) expiry(ctx context.Context, ic *InboxConfig, category string) (time.Duration, error) {
	raw := ""
	if category != "" {
		raw = ic.TTL[category]
	}
	if raw == "" {
		raw = ic.TTL["default"]
	}
	if raw == "" {
		ts, err := s.Tenant(ctx, ic.Tenant)
		switch {
		case errors.Is(err, ErrTenantNotFound):
		case err != nil:
			return 0, err
		default:
			raw = ts.TTL
		}
	}
	if raw == "" {
		return DefaultTTL, nil
	}
	d, err := ParseTTL(raw)
	if err != nil {
		// Stored values were validated on write; a bad one (edited by
		// hand) should not block publishing.
		return DefaultTTL, nil
	}
	return min(d, MaxTTL), nil
}

// Publish stores a message for its audience. A message to users is one
// item per user, each written in one transaction with that user's
// counters (so counts never drift from items); a message to everyone is
// one item in the public partition with the public counters. Recipients
// are written concurrently; on error some may have the message and the
// others not (each user is all or nothing).
func (s *Store) Publish(ctx context.Context, tenant, inbox string, d Draft) (*Published, error) {
	ic, err := s.Inbox(ctx, tenant, inbox)
	if err != nil {
		return nil, err
	}
	if err := s.checkBody(ic, d.Category, d.Body); err != nil {
		return nil, err
	}
	ttl, err := s.expiry(ctx, ic, d.Category)
	if err != nil {
		return nil, err
	}
	now := s.now()
	if d.Received.IsZero() {
		d.Received = now
	}
	m := Message{
		Kind: kindMessage,
		Header: Header{
			ID: s.newID(now), HostSystemID: d.HostSystemID, Sender: d.Sender,
			Audiences: d.Audiences, Received: d.Received.Unix(), Delivered: now.Unix(),
		},
		ExpiredAt: now.Add(ttl).Unix(),
		Taxonomy:  Taxonomy{Category: d.Category},
		Message:   Content{Title: d.Title, Body: d.Body, CTAURI: d.CTAURI},
		Tenant:    tenant,
		Inbox:     inbox,
	}
	if d.Audiences.Kind == AudienceEveryone {
		m.UID = contract.PublicUID
		m.Header.Audiences.UIDs = nil
	}
	// Before any write: a refused publish leaves no recipient with it.
	if err := checkFanOut(m, d.Audiences.UIDs); err != nil {
		return nil, err
	}
	if d.Audiences.Kind == AudienceEveryone {
		if err := s.deliver(ctx, m); err != nil {
			return nil, err
		}
		return &Published{Message: m, Recipients: 0}, nil
	}
	uids := d.Audiences.UIDs
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		sem   = make(chan struct{}, 8)
	)
	for _, uid := range uids {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			cp := m
			cp.UID = uid
			// Each copy names only its recipient: the full list in every
			// copy is quadratic storage and tells every user who else got
			// it.
			cp.Header.Audiences.UIDs = []string{uid}
			if err := s.deliver(ctx, cp); err != nil {
				mu.Lock()
				first = errors.Join(first, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	m.Header.Audiences.UIDs = uids
	return &Published{Message: m, Recipients: len(uids)}, nil
}

// deliver writes one message item with its counters in one transaction.
func (s *Store) deliver(ctx context.Context, m Message) error {
	p := Partition{Tenant: m.Tenant, UID: m.UID, Inbox: m.Inbox}
	item, err := attributevalue.MarshalMap(m)
	if err != nil {
		return fmt.Errorf("stak: marshal message: %w", err)
	}
	var tx ddb.Tx
	tx.Put(ddb.NotExists(contract.AttrPK).TxPut(s.table, withKey(item, p.PK(), contract.PrefixMessage+m.Header.ID, "")), nil)
	counters := s.counterUpdates(p, m.Taxonomy.Category, 1, 0, 0)
	return s.transact(ctx, append(tx, counters...))
}

// counterUpdates adds published, read and expired to p's c#* and, with a
// category, c#<category>. A user's counters always carry read (0 included)
// so stats show it; the public partition has no read count, and only it
// counts expired messages (the public stats: ever published = published +
// expired).
func (s *Store) counterUpdates(p Partition, category string, published, read, expired int) ddb.Tx {
	sks := []string{contract.KeyStatsAll}
	if category != "" {
		sks = append(sks, contract.PrefixStats+category)
	}
	out := make(ddb.Tx, 0, len(sks))
	for _, sk := range sks {
		out.Update(s.counterUpdate(p, sk, published, read, expired), nil)
	}
	return out
}

// counterUpdate adds published, read and expired to one counter item of p.
// A user's counters always get read, the public ones always published,
// so the ADD clause is never empty.
func (s *Store) counterUpdate(p Partition, sk string, published, read, expired int) *types.Update {
	e := counterOwner(p)
	add := ""
	if published != 0 || p.Public() {
		add += ", #published :published"
		e.Names["#published"], e.Values[":published"] = contract.AttrPublished, ddb.N(int64(published))
	}
	if expired != 0 {
		add += ", #expired :expired"
		e.Names["#expired"], e.Values[":expired"] = contract.AttrExpired, ddb.N(int64(expired))
	}
	if !p.Public() {
		add += ", #read :read"
		e.Names["#read"], e.Values[":read"] = contract.AttrRead, ddb.N(int64(read))
	}
	e.Update += " ADD " + add[len(", "):]
	return e.TxUpdate(s.table, key(p.PK(), sk))
}

// counterOwner sets the documented attributes of a stats item, so that an
// ADD creating it leaves a complete item: the SET clause of an update
// written out (ddb.Expr), to which the caller adds its own.
func counterOwner(p Partition) ddb.Expr {
	return ddb.Expr{
		Update: "SET #kind = :kind, #tenant = :tenant, #inbox = :inbox, #uid = :uid",
		Names:  map[string]string{"#kind": contract.AttrKind, "#tenant": contract.AttrTenantKey, "#inbox": contract.AttrInboxKey, "#uid": contract.AttrUID},
		Values: map[string]types.AttributeValue{
			":kind":   &types.AttributeValueMemberS{Value: kindStats},
			":tenant": &types.AttributeValueMemberS{Value: p.Tenant},
			":inbox":  &types.AttributeValueMemberS{Value: p.Inbox},
			":uid":    &types.AttributeValueMemberS{Value: p.UID},
		},
	}
}

// markRead sets readat to now on a user message, only if it exists and
// has none yet.
func markRead(now int64) ddb.Expr {
	return ddb.Expr{
		Update:    "SET #readat = :now",
		Condition: "attribute_exists(#pk) AND attribute_not_exists(#readat)",
		Names:     map[string]string{"#readat": contract.AttrReadAt, "#pk": contract.AttrPK},
		Values:    map[string]types.AttributeValue{":now": ddb.N(now)},
	}
}

// prefixQuery is the key condition of the items of partition pk whose
// sort key begins with prefix, written out.
func prefixQuery(pk, prefix string) ddb.Expr {
	return ddb.Expr{
		KeyCondition: "#pk = :pk AND begins_with(#sk, :prefix)",
		Names:        map[string]string{"#pk": contract.AttrPK, "#sk": contract.AttrSK},
		Values: map[string]types.AttributeValue{
			":pk":     &types.AttributeValueMemberS{Value: pk},
			":prefix": &types.AttributeValueMemberS{Value: prefix},
		},
	}
}

// transactAttempts bounds how often transact retries a transaction that
// lost only to concurrent transactions on the same items (counters are hot
// items: a read-all and a single mark of one user touch the same c#*).
const transactAttempts = 8

// transact runs tx, retrying with jittered backoff while it is cancelled
// for conflicts alone. A failed condition is returned at once: it is an
// answer, not a conflict.
func (s *Store) transact(ctx context.Context, tx ddb.Tx) error {
	for attempt := 1; ; attempt++ {
		err := tx.Run(ctx, s.client)
		if err == nil || attempt == transactAttempts || !errors.Is(err, ddb.ErrConflict) {
			return err
		}
		if err := backoff(ctx, attempt); err != nil {
			return err
		}
	}
}

// backoff sleeps a random time below 10 ms × 2^attempt (at most 640 ms).
func backoff(ctx context.Context, attempt int) error {
	d := time.Duration(mathrand.Int64N(int64(10*time.Millisecond) << min(attempt, 6)))
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func unmarshalMessage(item map[string]types.AttributeValue) (*Message, error) {
	var m Message
	if err := attributevalue.UnmarshalMap(item, &m); err != nil {
		return nil, fmt.Errorf("stak: unmarshal message: %w", err)
	}
	// attributevalue reads numbers inside an any as float64, which rounds
	// 12345678901234567890123; the body is read digit for digit instead.
	if content, ok := item[contract.AttrMessage].(*types.AttributeValueMemberM); ok {
		if body, ok := content.Value[contract.AttrBody]; ok {
			v, err := ddb.FromAttributeValue(body)
			if err != nil {
				return nil, fmt.Errorf("stak: unmarshal message body: %w", err)
			}
			m.Message.Body = v
		}
	}
	return &m, nil
}

// isReceipt: a receipt is the only m# item without a kind (decision 6).
func isReceipt(item map[string]types.AttributeValue) bool {
	_, ok := item[contract.AttrKind]
	return !ok
}

func numberAttr(item map[string]types.AttributeValue, name string) (int64, bool) {
	var n int64
	av, ok := item[name]
	if !ok || attributevalue.Unmarshal(av, &n) != nil {
		return 0, false
	}
	return n, true
}

// live: TTL deletes days late, so an item past expiredat is treated as
// gone everywhere (decision 13).
func (s *Store) live(item map[string]types.AttributeValue) bool {
	exp, ok := numberAttr(item, contract.AttrExpiredAt)
	return item != nil && ok && exp > s.now().Unix()
}

// MarkRead marks a message read for uid and returns it with its readat.
// changed is false when it was already read; either way read is counted
// once. A user message gets readat set; a public message gets a read
// receipt in the user's partition. Both happen in one transaction with the
// read counters, conditioned so that an unknown id writes nothing
// (decision 11).
//
// The inbox is read only when neither partition has the message, to tell
// an unknown inbox from an unknown message: a message exists only in an
// inbox that does, so a found one proves it without the extra GetItem.
func (s *Store) MarkRead(ctx context.Context, tenant, inbox, uid, id string) (m *Message, changed bool, err error) {
	up := Partition{Tenant: tenant, UID: uid, Inbox: inbox}
	sk := contract.PrefixMessage + id
	item, err := s.get(ctx, up.PK(), sk)
	if err != nil {
		return nil, false, err
	}
	if item != nil && s.live(item) && !isReceipt(item) {
		return s.markUserMessage(ctx, up, item)
	}
	pub, err := s.get(ctx, contract.PublicPK(tenant, inbox), sk)
	if err != nil {
		return nil, false, err
	}
	if !s.live(pub) {
		if _, err := s.Inbox(ctx, tenant, inbox); err != nil {
			return nil, false, err
		}
		return nil, false, ErrMessageNotFound
	}
	if m, err = unmarshalMessage(pub); err != nil {
		return nil, false, err
	}
	if item != nil && isReceipt(item) {
		readAt, _ := numberAttr(item, contract.AttrReadAt)
		m.ReadAt = &readAt
		return m, false, nil
	}
	return s.markPublicMessage(ctx, up, m)
}

// errMarked: a concurrent mark read the message first (or it expired
// away); the mark reports what is stored now.
var errMarked = errors.New("stak: message marked meanwhile")

func (s *Store) markUserMessage(ctx context.Context, up Partition, item map[string]types.AttributeValue) (*Message, bool, error) {
	m, err := unmarshalMessage(item)
	if err != nil {
		return nil, false, err
	}
	if m.ReadAt != nil {
		return m, false, nil
	}
	now := s.now().Unix()
	counters := s.counterUpdates(up, m.Taxonomy.Category, 0, 1, 0)
	var tx ddb.Tx
	tx.Update(markRead(now).TxUpdate(s.table, key(up.PK(), contract.PrefixMessage+m.Header.ID)), errMarked)
	err = s.transact(ctx, append(tx, counters...))
	if errors.Is(err, errMarked) {
		// A concurrent mark won (or the item expired away): report what
		// is stored now.
		item, err := s.get(ctx, up.PK(), contract.PrefixMessage+m.Header.ID)
		if err != nil {
			return nil, false, err
		}
		if !s.live(item) {
			return nil, false, ErrMessageNotFound
		}
		m, err = unmarshalMessage(item)
		return m, false, err
	}
	if err != nil {
		return nil, false, err
	}
	m.ReadAt = &now
	return m, true, nil
}

func (s *Store) markPublicMessage(ctx context.Context, up Partition, m *Message) (*Message, bool, error) {
	now := s.now().Unix()
	sk := contract.PrefixMessage + m.Header.ID
	rc, err := ddb.MarshalItem(receipt{PK: up.PK(), SK: sk, ReadAt: now, ExpiredAt: m.ExpiredAt, Taxonomy: m.Taxonomy}, contract.AttrPK, contract.AttrSK)
	if err != nil {
		return nil, false, fmt.Errorf("stak: marshal receipt: %w", err)
	}
	counters := s.counterUpdates(up, m.Taxonomy.Category, 0, 1, 0)
	var tx ddb.Tx
	tx.Check(ddb.Exists(contract.AttrPK).TxCheck(s.table, key(contract.PublicPK(up.Tenant, up.Inbox), sk)), ErrMessageNotFound).
		Put(ddb.NotExists(contract.AttrPK).TxPut(s.table, rc), errMarked)
	switch err := s.transact(ctx, append(tx, counters...)); {
	case errors.Is(err, errMarked):
		item, err := s.get(ctx, up.PK(), sk)
		if err != nil {
			return nil, false, err
		}
		readAt, _ := numberAttr(item, contract.AttrReadAt)
		m.ReadAt = &readAt
		return m, false, nil
	case err != nil:
		return nil, false, err
	}
	m.ReadAt = &now
	return m, true, nil
}

// Counts are the counters of one stats item.
type Counts struct {
	Published int64 `dynamodbav:"published" json:"published"`
	Read      int64 `dynamodbav:"read" json:"read"`
	// Unread is Published − Read, never below 0 (counters are estimates,
	// decision 14).
	Unread int64 `dynamodbav:"-" json:"unread"`
}

// Stats are a user's estimated counts in one inbox: user messages and
// public messages together, as the merged feed shows them.
type Stats struct {
	Tenant string `json:"tenant_key"`
	Inbox  string `json:"inbox_key"`
	UID    string `json:"uid"`
	Counts
	// Categories holds the same counts per taxonomy category.
	Categories map[string]Counts `json:"categories"`
}

// Stats returns uid's counters merged with the public ones: published is
// user plus public messages, read counts reads of both (receipts count in
// the user's partition).
func (s *Store) Stats(ctx context.Context, tenant, inbox, uid string) (*Stats, error) {
	if _, err := s.Inbox(ctx, tenant, inbox); err != nil {
		return nil, err
	}
	st := &Stats{Tenant: tenant, Inbox: inbox, UID: uid, Categories: map[string]Counts{}}
	for _, pk := range []string{contract.UserPK(tenant, uid, inbox), contract.PublicPK(tenant, inbox)} {
		err := s.counters(ctx, pk, func(cat string, item map[string]types.AttributeValue) error {
			var c Counts
			if err := attributevalue.UnmarshalMap(item, &c); err != nil {
				return fmt.Errorf("stak: unmarshal stats: %w", err)
			}
			if cat == "" {
				st.Published += c.Published
				st.Read += c.Read
				return nil
			}
			sum := st.Categories[cat]
			sum.Published += c.Published
			sum.Read += c.Read
			st.Categories[cat] = sum
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	st.Unread = max(0, st.Published-st.Read)
	for cat, c := range st.Categories {
		c.Unread = max(0, c.Published-c.Read)
		st.Categories[cat] = c
	}
	return st, nil
}

// PublicCounts are the counters of an inbox's public partition (design
// document 002: "all messages ever published count, expired messages
// count").
type PublicCounts struct {
	// Published counts broadcasts ever published: Live + Expired.
	Published int64 `json:"published"`
	// Expired counts those the stream consumer saw expire.
	Expired int64 `json:"expired"`
	// Live counts those not yet expired (deleted by TTL).
	Live int64 `json:"live"`
}

// PublicStats are an inbox's public counters, in all and per category.
type PublicStats struct {
	Tenant string `json:"tenant_key"`
	Inbox  string `json:"inbox_key"`
	PublicCounts
	Categories map[string]PublicCounts `json:"categories"`
}

// PublicStats reads the public partition's counters. The stored published
// is the live count (a user's stats add it to theirs, and the consumer
// takes one off when a broadcast expires, in the same transaction as it
// adds one to expired), so ever published is the sum of the two.
func (s *Store) PublicStats(ctx context.Context, tenant, inbox string) (*PublicStats, error) {
	if _, err := s.Inbox(ctx, tenant, inbox); err != nil {
		return nil, err
	}
	st := &PublicStats{Tenant: tenant, Inbox: inbox, Categories: map[string]PublicCounts{}}
	err := s.counters(ctx, contract.PublicPK(tenant, inbox), func(cat string, item map[string]types.AttributeValue) error {
		var c struct {
			Live    int64 `dynamodbav:"published"`
			Expired int64 `dynamodbav:"expired"`
		}
		if err := attributevalue.UnmarshalMap(item, &c); err != nil {
			return fmt.Errorf("stak: unmarshal stats: %w", err)
		}
		counts := PublicCounts{Published: c.Live + c.Expired, Expired: c.Expired, Live: c.Live}
		if cat == "" {
			st.PublicCounts = counts
		} else {
			st.Categories[cat] = counts
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// counters reads the counter items of partition pk, strongly consistent,
// and hands each to f with its category ("" for the inbox's total).
func (s *Store) counters(ctx context.Context, pk string, f func(category string, item map[string]types.AttributeValue) error) error {
	in := prefixQuery(pk, contract.PrefixStats).Query(s.table)
	in.ConsistentRead = aws.Bool(true)
	for item, err := range ddb.All(ctx, s.client, in) {
		if err != nil {
			return err
		}
		sk, _ := item[contract.AttrSK].(*types.AttributeValueMemberS)
		cat := ""
		if sk != nil && sk.Value != contract.KeyStatsAll {
			cat = sk.Value[len(contract.PrefixStats):]
		}
		if err := f(cat, item); err != nil {
			return err
		}
	}
	return nil
}
