package stak

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/platform/metrics"
)

// TTL deletions as AWS reports them.
const (
	ttlIdentityType      = "Service"
	ttlIdentityPrincipal = "dynamodb.amazonaws.com"
)

// Consumer is the stream consumer of the inbox table: when a message or a
// read receipt expires it decrements the counters that the item was
// counted in (decisions 4–7). Build it once per execution environment.
type Consumer struct {
	client API
	table  string
	now    func() time.Time
	log    *slog.Logger
}

// NewConsumer builds the consumer from the environment (STAK_INBOX_TABLE;
// DYNASTACK_CURSOR_KEY is not used).
func NewConsumer(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (*Consumer, error) {
	return fn.New(ctx, getenv, ConfigFromEnv, (*Config).SetClient, NewConsumerFromConfig, opts...)
}

// NewConsumerFromConfig builds the consumer from cfg (Table, Client, and
// optionally Now and Logger).
func NewConsumerFromConfig(cfg Config) *Consumer {
	c := &Consumer{client: cfg.Client, table: cfg.Table, now: cfg.Now, log: fn.Logger(contract.StreamConsumer.Name, cfg.Client, cfg.Logger)}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

var _ fn.StreamConsumer = (*Consumer)(nil)

// Handle processes a batch and reports the records that failed by their
// sequence numbers (ReportBatchItemFailures), so Lambda retries from the
// first of them. Every record is attempted even after a failure: records
// are independent, and those that succeeded are skipped on redelivery by
// their dedupe markers. Records that can never succeed (an image this code
// cannot read) are logged and skipped, since failing them would block the
// shard until they age out.
func (c *Consumer) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	resp := events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{}}
	for _, r := range ev.Records {
		if err := c.handle(ctx, r); err != nil {
			c.log.ErrorContext(ctx, "stream record failed", "event_id", r.EventID, "sequence_number", r.Change.SequenceNumber, "error", err.Error())
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: r.Change.SequenceNumber})
		}
	}
	return resp, nil
}

// IsExpiry reports whether r is a TTL deletion. AWS sends REMOVE with the
// DynamoDB service as the user identity; DynamoDB Local sends an event
// name outside INSERT/MODIFY/REMOVE (the Java SDK's
// UNKNOWN_TO_SDK_VERSION) and no identity (decision 5).
func IsExpiry(r events.DynamoDBEventRecord) bool {
	switch events.DynamoDBOperationType(r.EventName) {
	case events.DynamoDBOperationTypeRemove:
		id := r.UserIdentity
		return id != nil && id.Type == ttlIdentityType && id.PrincipalID == ttlIdentityPrincipal
	case events.DynamoDBOperationTypeInsert, events.DynamoDBOperationTypeModify:
		return false
	}
	return r.UserIdentity == nil && r.Change.OldImage != nil && r.Change.NewImage == nil
}

// expired is what the consumer reads of an old image.
type expired struct {
	PK        string // pk and sk: attributevalue matches them whatever the case
	SK        string
	Audiences *struct {
		Audiences struct {
			Kind string `dynamodbav:"kind"`
		} `dynamodbav:"audiences"`
	} `dynamodbav:"audiences"`
	ReadAt   *int64   `dynamodbav:"readat"`
	Taxonomy Taxonomy `dynamodbav:"taxonomy"`
}

func (c *Consumer) handle(ctx context.Context, r events.DynamoDBEventRecord) error {
	if !IsExpiry(r) {
		// Inserts, updates, and user deletes: a path that deletes must
		// adjust counters itself (decision 5).
		return nil
	}
	img, err := fn.StreamItem(r.Change.OldImage)
	if err != nil {
		c.log.WarnContext(ctx, "skipping unreadable stream image", "event_id", r.EventID, "error", err.Error())
		return nil
	}
	var doc expired
	if err := attributevalue.UnmarshalMap(img, &doc); err != nil {
		c.log.WarnContext(ctx, "skipping unreadable stream image", "event_id", r.EventID, "error", err.Error())
		return nil
	}
	if !strings.HasPrefix(doc.SK, contract.PrefixMessage) {
		return nil // settings, configs, counters, markers
	}
	p, err := ParsePartition(doc.PK)
	if err != nil {
		c.log.WarnContext(ctx, "skipping message outside a message partition", "event_id", r.EventID, contract.AttrPK, doc.PK)
		return nil
	}
	published, read := 0, 0
	if doc.Audiences != nil {
		// The partition, not audiences.kind, says which counter counted it:
		// it is the key the item was written under.
		published = -1
		if want := map[bool]string{true: AudienceEveryone, false: AudienceUsers}[p.Public()]; doc.Audiences.Audiences.Kind != want {
			c.log.WarnContext(ctx, "audience kind does not match partition", "event_id", r.EventID, contract.AttrPK, doc.PK, "kind", doc.Audiences.Audiences.Kind)
		}
	}
	if doc.ReadAt != nil {
		if p.Public() {
			// The document's "Impossible!": a public message has no readat.
			c.log.WarnContext(ctx, "public message with readat; read count ignored", "event_id", r.EventID, contract.AttrPK, doc.PK)
		} else {
			read = -1
		}
	}
	if published == 0 && read == 0 {
		return nil
	}
	return c.apply(ctx, r, p, doc.Taxonomy.Category, published, read)
}

// errApplied: the record's marker exists, so a delivery before this one
// applied it.
var errApplied = errors.New("stak: stream record already applied")

// errCounterGone: a counter the record would decrement does not exist (its
// user was erased).
var errCounterGone = errors.New("stak: the record's counters are gone")

// apply writes the counter changes of one record together with its dedupe
// marker; a redelivered record fails the marker's condition and changes
// nothing (decision 4).
func (c *Consumer) apply(ctx context.Context, r events.DynamoDBEventRecord, p Partition, category string, published, read int) error {
	eventID := r.EventID
	if eventID == "" {
		eventID = r.EventSourceArn + "/" + r.Change.SequenceNumber
	}
	marker := map[string]types.AttributeValue{
		contract.AttrPK:        &types.AttributeValueMemberS{Value: p.PK()},
		contract.AttrSK:        &types.AttributeValueMemberS{Value: contract.PrefixMarker + eventID},
		contract.AttrKind:      &types.AttributeValueMemberS{Value: kindMarker},
		contract.AttrExpiredAt: &types.AttributeValueMemberN{Value: fmt.Sprint(c.now().Add(MarkerTTL).Unix())},
	}
	store := Store{table: c.table}
	// An expired public message is counted as such in the same
	// transaction as its marker, so the public stats' expired (and ever
	// published) are exactly once under redelivery like the rest.
	expired := 0
	if p.Public() && published < 0 {
		expired = -published
	}
	counters := store.counterUpdates(p, category, published, read, expired)
	var tx ddb.Tx
	tx.Put(ddb.NotExists(contract.AttrPK).TxPut(c.table, marker), errApplied)
	for _, op := range counters {
		// A decrement only changes a counter that exists: one that is gone
		// was erased with its user (the message expired just before the
		// erasure, or the record is replayed after it), and an ADD would
		// make it up again below zero, the uid with it.
		u := op.Item.Update
		u.ConditionExpression = aws.String("attribute_exists(#counterpk)")
		u.ExpressionAttributeNames["#counterpk"] = contract.AttrPK
		tx.Update(u, errCounterGone)
	}
	err := tx.Run(ctx, c.client)
	if errors.Is(err, errApplied) {
		c.log.InfoContext(ctx, "stream record already applied", "event_id", r.EventID)
		return nil
	}
	if errors.Is(err, errCounterGone) {
		c.log.InfoContext(ctx, "stream record's counters are gone (user erased): nothing to decrement", "event_id", r.EventID)
		return nil
	}
	if err == nil {
		metrics.Count(ctx, c.log, contract.Expiries)
	}
	return err
}
