package stak_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/poller"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/stak"
)

// poller returns a stream poller on the service's table, positioned at
// the stream's end, delivering to h.
func (s *service) poller(t testing.TB, h fn.StreamHandler) *poller.Poller {
	t.Helper()
	ctx := context.Background()
	arn, err := poller.StreamARN(ctx, s.Client, s.Table)
	require.NoError(t, err, "stream ARN")
	cfg := poller.Config{Client: poller.Streams(s.Client), StreamARN: arn, Handler: h, Start: poller.Latest}
	if !testing.Verbose() {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	p, err := poller.New(cfg)
	require.NoError(t, err, "poller")
	require.NoError(t, p.Sync(ctx), "poller sync")
	return p
}

// removals deletes the given keys as a user would and returns the REMOVE
// records DynamoDB Local streams for them, in Lambda's shape.
func (s *service) removals(t *testing.T, keys ...[2]string) []events.DynamoDBEventRecord {
	t.Helper()
	var got []events.DynamoDBEventRecord
	p := s.poller(t, func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		for _, r := range ev.Records {
			if r.EventName == "REMOVE" {
				got = append(got, r)
			}
		}
		return events.DynamoDBEventResponse{}, nil
	})
	for _, k := range keys {
		_, err := s.Client.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(s.Table), Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: k[0]}, "sk": &types.AttributeValueMemberS{Value: k[1]},
		}})
		require.NoError(t, err, "DeleteItem %v", k)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(got) < len(keys) {
		require.False(t, time.Now().After(deadline), "got %d of %d REMOVE records", len(got), len(keys))
		_, err := p.Poll(context.Background())
		require.NoError(t, err, "poll")
		time.Sleep(50 * time.Millisecond)
	}
	return got
}

// scenario: u1 has a read user message (billing) and a read public message
// (promo); u2 has the same user message unread.
func scenario(t *testing.T, s *service) (um, pm stak.Published) {
	t.Helper()
	s.setup(t)
	um = s.toUsers(t, "hello", "billing", "u1", "u2")
	pm = s.toEveryone(t, "news", "promo")
	for _, id := range []string{um.Header.ID, pm.Header.ID} {
		s.MustRoute(t, 200, contract.MarkRead, "", nil, "acme", "main", "u1", id)
	}
	assert.Equal(t, counts(2, 2), s.stats(t, "u1").Counts, "u1 before")
	return um, pm
}

func (s *service) publicStats(t testing.TB) stak.PublicStats {
	t.Helper()
	var st stak.PublicStats
	s.MustRoute(t, 200, contract.PublicStats, "", &st, "acme", "main")
	return st
}

func handle(t *testing.T, c *stak.Consumer, recs []events.DynamoDBEventRecord) []string {
	t.Helper()
	resp, err := c.Handle(context.Background(), events.DynamoDBEvent{Records: recs})
	require.NoError(t, err, "handle")
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	return failed
}

// TTL-shaped copies of real REMOVE records.
var shapes = map[string]func(events.DynamoDBEventRecord) events.DynamoDBEventRecord{
	"aws": func(r events.DynamoDBEventRecord) events.DynamoDBEventRecord {
		r.UserIdentity = &events.DynamoDBUserIdentity{Type: "Service", PrincipalID: "dynamodb.amazonaws.com"}
		return r
	},
	"local": func(r events.DynamoDBEventRecord) events.DynamoDBEventRecord {
		r.EventName = "UNKNOWN_TO_SDK_VERSION"
		r.UserIdentity = nil
		return r
	},
}

func TestConsumerExpiry(t *testing.T) {
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			s := newService(t)
			um, pm := scenario(t, s)
			u1 := "t#acmeU#u1#main"
			assert.Equal(t, stak.PublicCounts{Published: 1, Live: 1}, s.publicStats(t).PublicCounts, "before")
			recs := s.removals(t, [2]string{u1, "m#" + um.Header.ID}, [2]string{u1, "m#" + pm.Header.ID}, [2]string{"t#acmeG#$public#main", "m#" + pm.Header.ID})

			// As delivered, these are user deletes: skipped (decision 5).
			require.Empty(t, handle(t, s.consumer, recs), "failed records")
			assert.Equal(t, counts(2, 2), s.stats(t, "u1").Counts, "u1 after user delete")

			ttl := make([]events.DynamoDBEventRecord, len(recs))
			for i, r := range recs {
				ttl[i] = shape(r)
			}
			// Delivered twice, as after a retried batch: counted once.
			for range 2 {
				require.Empty(t, handle(t, s.consumer, ttl), "failed records")
				st := s.stats(t, "u1")
				assert.Equal(t, counts(0, 0), st.Counts, "u1")
				assert.Equal(t, counts(0, 0), st.Categories["billing"], "u1 billing")
				assert.Equal(t, counts(0, 0), st.Categories["promo"], "u1 promo")
				// u2 loses the public message only.
				assert.Equal(t, counts(1, 0), s.stats(t, "u2").Counts, "u2")
				// The public stats count it expired, once.
				pub := s.publicStats(t)
				assert.Equal(t, stak.PublicCounts{Published: 1, Expired: 1}, pub.PublicCounts, "public")
				assert.Equal(t, stak.PublicCounts{Published: 1, Expired: 1}, pub.Categories["promo"], "public promo")
			}
		})
	}
}

// failing fails the transactions that write the dedupe marker of one event.
type failing struct {
	stak.API
	eventID string
}

func (f *failing) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	for _, it := range in.TransactItems {
		if it.Put == nil {
			continue
		}
		if sk, ok := it.Put.Item["sk"].(*types.AttributeValueMemberS); ok && f.eventID != "" && sk.Value == "e#"+f.eventID {
			return nil, errors.New("injected failure")
		}
	}
	return f.API.TransactWriteItems(ctx, in, opts...)
}

func TestConsumerPartialBatchFailure(t *testing.T) {
	s := newService(t)
	um, pm := scenario(t, s)
	u1 := "t#acmeU#u1#main"
	recs := s.removals(t, [2]string{u1, "m#" + um.Header.ID}, [2]string{u1, "m#" + pm.Header.ID}, [2]string{"t#acmeG#$public#main", "m#" + pm.Header.ID})
	for i := range recs {
		recs[i] = shapes["aws"](recs[i])
	}
	cfg, _ := stak.ConfigFromEnv(func(string) string { return s.Table })
	f := &failing{API: s.Client, eventID: recs[1].EventID}
	cfg.Client = f
	cfg.Logger = slog.New(slog.DiscardHandler)
	c := stak.NewConsumerFromConfig(cfg)

	require.Equal(t, []string{recs[1].Change.SequenceNumber}, handle(t, c, recs), "failures")
	// The user message and the public message expired; the receipt did not.
	assert.Equal(t, counts(0, 1), s.stats(t, "u1").Counts, "u1 partial")

	// Lambda redelivers from the failed record on; the first one again
	// only if the whole batch is retried: either way, counted once.
	f.eventID = ""
	require.Empty(t, handle(t, c, recs), "failed records")
	assert.Equal(t, counts(0, 0), s.stats(t, "u1").Counts, "u1 retried")
	assert.Equal(t, stak.PublicCounts{Published: 1, Expired: 1}, s.publicStats(t).PublicCounts, "public retried")
}

func TestConsumerIgnores(t *testing.T) {
	s := newService(t)
	s.setup(t)
	s.toUsers(t, "hello", "billing", "u1")
	// Settings, configs and counters are not messages; a REMOVE of them
	// shaped as a TTL deletion changes nothing.
	recs := s.removals(t, [2]string{"t#acmeU#u1#main", "c#billing"}, [2]string{"t#acme", "st#tenant_settings"})
	for i := range recs {
		recs[i] = shapes["aws"](recs[i])
	}
	// And an image that is not a message partition is skipped, not failed
	// (it would block the shard forever).
	bad := shapes["aws"](recs[0])
	bad.Change.OldImage = map[string]events.DynamoDBAttributeValue{"pk": events.NewStringAttribute("garbage"), "sk": events.NewStringAttribute("m#x"), "audiences": events.NewMapAttribute(map[string]events.DynamoDBAttributeValue{})}
	bad.EventID = "bad"
	require.Empty(t, handle(t, s.consumer, append(recs, bad)), "failed records")
	assert.Equal(t, int64(1), s.stats(t, "u1").Published, "u1 published")
	assert.Equal(t, 3, s.Count(t), "items: inbox, message, c#*")
}

// TestRealTTLExpiry lets DynamoDB Local delete expired items itself; in our
// runs it did so within seconds, with eventName UNKNOWN_TO_SDK_VERSION and
// no userIdentity. The poller feeds the consumer exactly as Lambda would.
func TestRealTTLExpiry(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for DynamoDB Local's TTL sweep")
	}
	s := newService(t)
	p := s.poller(t, s.consumer.Handle)
	// Published almost 7 days ago into an inbox with a 7-day TTL: the items
	// expire a few seconds from now. Already-expired items could be swept
	// by DynamoDB Local while the scenario still reads them.
	s.clock.Set(time.Now().Add(-7*24*time.Hour + 5*time.Second))
	scenario(t, s)
	time.Sleep(time.Until(s.clock.Now().Add(7*24*time.Hour + time.Second)))
	s.clock.Set(time.Now())

	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := p.Poll(context.Background())
		require.NoError(t, err, "poll")
		u1, u2 := s.stats(t, "u1"), s.stats(t, "u2")
		if u1.Published == 0 && u1.Read == 0 && u2.Published == 0 && u2.Read == 0 {
			break
		}
		require.False(t, time.Now().After(deadline), "after 60s: u1 %+v u2 %+v", u1.Counts, u2.Counts)
		time.Sleep(500 * time.Millisecond)
	}
	out, err := s.Client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(s.Table)})
	require.NoError(t, err, "scan")
	markers := 0
	for _, it := range out.Items {
		sk := it["sk"].(*types.AttributeValueMemberS).Value
		assert.False(t, strings.HasPrefix(sk, "m#"), "expired item %s still stored", sk)
		if strings.HasPrefix(sk, "e#") {
			markers++
		}
	}
	// user message ×2, receipt, public message
	assert.Equal(t, 4, markers, "dedupe markers")
}

// TestConsumerAfterErasure: TTL deletes a message of a user just before
// the user is erased, and the consumer gets the expiry after the erasure
// (or a replay hands it over again). Its decrement must not make up the
// user's counters again (below zero, with the uid: personal data back in
// the table) nor leave a marker in the erased partition.
func TestConsumerAfterErasure(t *testing.T) {
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			s := newService(t)
			um, _ := scenario(t, s)
			u1 := contract.UserPK("acme", "u1", "main")
			recs := s.removals(t, [2]string{u1, "m#" + um.Header.ID})
			u2 := s.stats(t, "u2")
			res, err := stak.NewEraser(s.Client, s.Table).EraseUser(t.Context(), "acme", "u1")
			require.NoError(t, err)
			require.True(t, res.Done(), "erased")
			require.Empty(t, s.partitionItems(t, u1), "u1's partition after the erasure")

			ttl := make([]events.DynamoDBEventRecord, len(recs))
			for i, r := range recs {
				ttl[i] = shape(r)
			}
			for range 2 { // delivered, then replayed
				require.Empty(t, handle(t, s.consumer, ttl), "failed records")
				assert.Empty(t, s.partitionItems(t, u1), "nothing of u1 made up again")
			}
			assert.Equal(t, u2, s.stats(t, "u2"), "u2 untouched")
		})
	}
}
