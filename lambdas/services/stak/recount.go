package stak

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// RecountAttempts bounds the passes over one partition: a pass that finds
// a counter moved between its read and its write counts again.
const RecountAttempts = 20

// CounterChange is one counter item a recount rewrote.
type CounterChange struct {
	// Partition is "user" or "public".
	Partition string `json:"partition"`
	// Category is "" for the partition's total (c#*).
	Category string `json:"category,omitempty"`
	Before   Counts `json:"before"`
	After    Counts `json:"after"`
}

// Recount is the report of a recount.
type Recount struct {
	Tenant string `json:"tenant_key"`
	Inbox  string `json:"inbox_key"`
	UID    string `json:"uid,omitempty"`
	// Changes lists every counter written; empty when all were right.
	Changes []CounterChange `json:"changes"`
	// Examined counts the message and receipt items read.
	Examined int `json:"examined"`
	// Attempts counts passes over the partitions (more than one per
	// partition when publishes or marks raced with the recount).
	Attempts int `json:"attempts"`
	// Unsettled names the counters ("user/*", "public/<category>") that
	// moved under every one of RecountAttempts passes and were left as they
	// were: run the recount again. Empty when the recount is complete.
	Unsettled []string `json:"unsettled"`
}

// Recount recomputes the inbox's public counters and, when uid is not
// empty, uid's counters from the items present, and rewrites those that
// differ. Use it after stream records were lost (docs/schemas/stak.md,
// "Runbook: recount").
//
// Each partition is one pass: read its counters, then count its items,
// then write every differing counter conditioned on the value read. Every
// other writer changes an item and its counters in one transaction, so a
// write racing with the pass either is in both reads or moves a counter
// and fails the condition; the pass then starts over. Items are counted
// until TTL deletes them, expired or not, because the stream consumer
// decrements when the deletion happens.
func (s *Store) Recount(ctx context.Context, tenant, inbox, uid string) (*Recount, error) {
	if _, err := s.Inbox(ctx, tenant, inbox); err != nil {
		return nil, err
	}
	res := &Recount{Tenant: tenant, Inbox: inbox, UID: uid, Changes: []CounterChange{}, Unsettled: []string{}}
	parts := []Partition{{Tenant: tenant, UID: contract.PublicUID, Inbox: inbox}}
	if uid != "" {
		parts = append(parts, Partition{Tenant: tenant, UID: uid, Inbox: inbox})
	}
	for _, p := range parts {
		if err := s.recountPartition(ctx, p, res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// stored is a counter item as read, with which attributes it has.
type stored struct {
	exists           bool
	published, read  int64
	hasPubl, hasRead bool
}

func (s *Store) recountPartition(ctx context.Context, p Partition, res *Recount) error {
	name := map[bool]string{true: "public", false: "user"}[p.Public()]
	// pending limits a retry to the counters whose write lost a race; nil
	// means all of them.
	var pending map[string]bool
	for attempt := 1; attempt <= RecountAttempts; attempt++ {
		res.Attempts++
		current, err := s.readCounters(ctx, p)
		if err != nil {
			return err
		}
		want, n, err := s.countItems(ctx, p)
		if err != nil {
			return err
		}
		res.Examined += n
		lost := map[string]bool{}
		for _, sk := range counterKeys(current, want) {
			cur, w := current[sk], want[sk]
			// A missing attribute reads as 0, as Stats reads it.
			same := cur.published == w.Published && (p.Public() || cur.read == w.Read)
			if pending != nil && !pending[sk] || same || !cur.exists && w.Published == 0 && w.Read == 0 {
				// Settled, right already, or absent and zero: writing it
				// would create an item nothing counts in.
				continue
			}
			err := s.counterSet(ctx, p, sk, cur, w)
			if errors.Is(err, errCounterMoved) {
				lost[sk] = true
				continue
			}
			if err != nil {
				return err
			}
			c := CounterChange{Partition: name, Category: strings.TrimPrefix(sk, contract.PrefixStats),
				Before: Counts{Published: cur.published, Read: cur.read, Unread: max(0, cur.published-cur.read)},
				After:  Counts{Published: w.Published, Read: w.Read, Unread: max(0, w.Published-w.Read)}}
			if sk == contract.KeyStatsAll {
				c.Category = ""
			}
			if p.Public() {
				c.Before.Read, c.Before.Unread, c.After.Read, c.After.Unread = 0, 0, 0, 0
			}
			res.Changes = append(res.Changes, c)
		}
		if len(lost) == 0 {
			return nil
		}
		pending = lost
		if err := backoff(ctx, attempt); err != nil {
			return err
		}
	}
	for sk := range pending {
		res.Unsettled = append(res.Unsettled, name+"/"+strings.TrimPrefix(sk, contract.PrefixStats))
	}
	sort.Strings(res.Unsettled)
	return nil
}

// readCounters reads every c# item of p, strongly consistent.
func (s *Store) readCounters(ctx context.Context, p Partition) (map[string]stored, error) {
	out := map[string]stored{}
	err := s.queryAll(ctx, prefixQuery(p.PK(), contract.PrefixStats), func(item map[string]types.AttributeValue) error {
		var c stored
		c.exists = true
		c.published, c.hasPubl = numberAttr(item, contract.AttrPublished)
		c.read, c.hasRead = numberAttr(item, contract.AttrRead)
		out[sortKey(item)] = c
		return nil
	})
	return out, err
}

// countItems counts p's messages and receipts, present ones (expired or
// not): published counts messages, read counts user messages with readat
// and receipts. It returns the counts per counter key and the items read.
func (s *Store) countItems(ctx context.Context, p Partition) (map[string]Counts, int, error) {
	return s.countItemsUpTo(ctx, p, 0)
}

// countItemsUpTo is countItems stopping with errTooLarge after limit
// items (0: no limit), for the drift check's bounded reads.
func (s *Store) countItemsUpTo(ctx context.Context, p Partition, limit int) (map[string]Counts, int, error) {
	want := map[string]Counts{contract.KeyStatsAll: {}}
	n := 0
	// Only what a count reads of a message or receipt (#sk is the key
	// condition's).
	q := prefixQuery(p.PK(), contract.PrefixMessage)
	q.Projection = "#sk, #kind, #readat, #taxonomy"
	q.Names["#kind"], q.Names["#readat"], q.Names["#taxonomy"] = contract.AttrKind, contract.AttrReadAt, contract.AttrTaxonomy
	page := int32(0)
	if limit > 0 {
		page = int32(limit + 1)
	}
	err := s.queryPages(ctx, q, page, func(item map[string]types.AttributeValue) error {
		n++
		if limit > 0 && n > limit {
			return errTooLarge
		}
		var doc struct {
			Kind     string   `dynamodbav:"kind"`
			ReadAt   *int64   `dynamodbav:"readat"`
			Taxonomy Taxonomy `dynamodbav:"taxonomy"`
		}
		if err := attributevalue.UnmarshalMap(item, &doc); err != nil {
			return fmt.Errorf("stak: unmarshal %s: %w", sortKey(item), err)
		}
		var d Counts
		if doc.Kind != "" {
			d.Published = 1
		}
		if !p.Public() && (doc.Kind == "" || doc.ReadAt != nil) {
			d.Read = 1
		}
		sks := []string{contract.KeyStatsAll}
		if c := doc.Taxonomy.Category; c != "" {
			sks = append(sks, contract.PrefixStats+c)
		}
		for _, sk := range sks {
			c := want[sk]
			c.Published += d.Published
			c.Read += d.Read
			want[sk] = c
		}
		return nil
	})
	return want, n, err
}

// queryAll reads every item of the query q (prefixQuery, perhaps with a
// projection), strongly consistent.
func (s *Store) queryAll(ctx context.Context, q ddb.Expr, each func(map[string]types.AttributeValue) error) error {
	return s.queryPages(ctx, q, 0, each)
}

// queryPages is queryAll reading at most page items per request (0:
// DynamoDB's 1 MB), so a caller that stops early read no more than that.
func (s *Store) queryPages(ctx context.Context, q ddb.Expr, page int32, each func(map[string]types.AttributeValue) error) error {
	in := q.Query(s.table)
	in.ConsistentRead = aws.Bool(true)
	if page > 0 {
		in.Limit = aws.Int32(page)
	}
	for item, err := range ddb.All(ctx, s.client, in) {
		if err == nil {
			err = each(item)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// counterKeys lists the counter keys of either map, c#* first.
func counterKeys(current map[string]stored, want map[string]Counts) []string {
	seen := map[string]bool{}
	var keys []string
	for sk := range current {
		seen[sk] = true
		keys = append(keys, sk)
	}
	for sk := range want {
		if !seen[sk] {
			keys = append(keys, sk)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i] == contract.KeyStatsAll || keys[j] != contract.KeyStatsAll && keys[i] < keys[j]
	})
	return keys
}

// counterSet writes w into one counter item if it still holds cur: equal
// values, or the attribute absent where cur had none, or no item at all.
// Each counter is its own conditional write: it depends only on its own
// value, so one that lost a race does not undo the others.
func (s *Store) counterSet(ctx context.Context, p Partition, sk string, cur stored, w Counts) error {
	e := counterOwner(p)
	e.Update += ", #published = :published"
	e.Names["#published"], e.Values[":published"] = contract.AttrPublished, ddb.N(w.Published)
	if !p.Public() {
		e.Update += ", #read = :read"
		e.Names["#read"], e.Values[":read"] = contract.AttrRead, ddb.N(w.Read)
	}
	e.Names["#pk"] = contract.AttrPK
	if !cur.exists {
		e.Condition = "attribute_not_exists(#pk)"
	} else {
		e.Condition = "attribute_exists(#pk) AND " + held(e, contract.AttrPublished, cur.hasPubl, cur.published) + " AND " + held(e, contract.AttrRead, cur.hasRead, cur.read)
	}
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: key(p.PK(), sk),
		UpdateExpression: aws.String(e.Update), ConditionExpression: aws.String(e.Condition),
		ExpressionAttributeNames: e.Names, ExpressionAttributeValues: e.Values,
	})
	return ddb.WrapCond("UpdateItem", err, errCounterMoved)
}

// errCounterMoved: a counter changed between the recount's read and its
// write; the recount reads it again.
var errCounterMoved = errors.New("stak: counter changed during recount")

// held is "attribute name still has the value read" (absent when it was),
// its name and value added to e.
func held(e ddb.Expr, name string, has bool, v int64) string {
	e.Names["#"+name] = name
	if !has {
		return "attribute_not_exists(#" + name + ")"
	}
	e.Values[":was"+name] = ddb.N(v)
	return "#" + name + " = :was" + name
}
