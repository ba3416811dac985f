package poller_test

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/aws/smithy-go"

	"github.com/dynastack/dynastack/lambdas/devtools/poller"
	"github.com/dynastack/dynastack/lambdas/ops/streamsapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeStream is one shard of records with sequence numbers 1..n, served
// through iterators "at:<index>". It exists only to force the iterator
// errors DynamoDB Streams returns (TestPollerRecoversOnDynamoDBLocal
// provokes a real one); fail[i] is the error of the i-th call (from 1) of
// GetRecords, GetShardIterator failures by type in failIter.
type fakeStream struct {
	n        int
	trimmed  int // records 1..trimmed are gone
	fail     map[int]error
	failIter map[types.ShardIteratorType]error
	gets     int
	iters    []string
}

const fakeARN = "arn:aws:dynamodb:eu-west-1:123456789012:table/t/stream/x"

func seq(i int) string { return fmt.Sprintf("%021d", i) }

func (f *fakeStream) DescribeStream(context.Context, *dynamodbstreams.DescribeStreamInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error) {
	return &dynamodbstreams.DescribeStreamOutput{StreamDescription: &types.StreamDescription{Shards: []types.Shard{{ShardId: aws.String("shard-1")}}}}, nil
}

func (f *fakeStream) GetShardIterator(_ context.Context, in *dynamodbstreams.GetShardIteratorInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	f.iters = append(f.iters, strings.TrimSpace(string(in.ShardIteratorType)+" "+aws.ToString(in.SequenceNumber)))
	if err := f.failIter[in.ShardIteratorType]; err != nil {
		return nil, err
	}
	at := f.trimmed + 1
	switch in.ShardIteratorType {
	case types.ShardIteratorTypeLatest:
		at = f.n + 1
	case types.ShardIteratorTypeAfterSequenceNumber:
		n, _ := strconv.Atoi(aws.ToString(in.SequenceNumber))
		at = n + 1
	}
	return &dynamodbstreams.GetShardIteratorOutput{ShardIterator: aws.String(fmt.Sprint("at:", at))}, nil
}

func (f *fakeStream) GetRecords(_ context.Context, in *dynamodbstreams.GetRecordsInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	f.gets++
	if err := f.fail[f.gets]; err != nil {
		return nil, err
	}
	start, _ := strconv.Atoi(strings.TrimPrefix(aws.ToString(in.ShardIterator), "at:"))
	at := start
	if at <= f.trimmed {
		return nil, &types.TrimmedDataAccessException{Message: aws.String("The operation attempted to read past the oldest stream record in a shard.")}
	}
	out := &dynamodbstreams.GetRecordsOutput{}
	for i := start; i <= f.n && i < start+int(aws.ToInt32(in.Limit)); i++ {
		out.Records = append(out.Records, types.Record{EventName: types.OperationTypeInsert, Dynamodb: &types.StreamRecord{
			SequenceNumber: aws.String(seq(i)), Keys: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: fmt.Sprint(i)}},
		}})
		at = i + 1
	}
	out.NextShardIterator = aws.String(fmt.Sprint("at:", at))
	return out, nil
}

func TestPollerRepositions(t *testing.T) {
	trimmed := &types.TrimmedDataAccessException{Message: aws.String("trimmed")}
	tests := []struct {
		name string
		f    fakeStream
		// polls is how many polls run; want the records delivered per
		// poll, iters the GetShardIterator calls.
		polls int
		want  string
		iters string
		err   bool // some poll reports an error
	}{{
		name: "trimmed iterator: after the last record, same poll",
		f:    fakeStream{n: 6, fail: map[int]error{2: trimmed}}, polls: 2,
		want: "[[1 2 3] [4 5 6]]", iters: "[TRIM_HORIZON AFTER_SEQUENCE_NUMBER 000000000000000000003]",
	}, {
		name: "expired iterator",
		f:    fakeStream{n: 6, fail: map[int]error{2: &types.ExpiredIteratorException{Message: aws.String("expired")}}}, polls: 2,
		want: "[[1 2 3] [4 5 6]]", iters: "[TRIM_HORIZON AFTER_SEQUENCE_NUMBER 000000000000000000003]",
	}, {
		name: "position refused: trim horizon without redelivery",
		f: fakeStream{n: 6, fail: map[int]error{2: trimmed}, failIter: map[types.ShardIteratorType]error{
			types.ShardIteratorTypeAfterSequenceNumber: trimmed,
		}}, polls: 3,
		want: "[[1 2 3] [4 5 6]]", iters: "[TRIM_HORIZON AFTER_SEQUENCE_NUMBER 000000000000000000003 TRIM_HORIZON]",
	}, {
		name: "nothing handled yet: trim horizon",
		f:    fakeStream{n: 3, fail: map[int]error{1: trimmed}}, polls: 1,
		want: "[[1 2 3]]", iters: "[TRIM_HORIZON TRIM_HORIZON]",
	}, {
		name: "any other error, twice: the next poll repositions",
		f: fakeStream{n: 6, fail: map[int]error{
			2: &types.InternalServerError{Message: aws.String("boom")}, 3: &types.InternalServerError{Message: aws.String("again")},
		}}, polls: 3,
		want: "[[1 2 3] [4 5 6]]", iters: "[TRIM_HORIZON AFTER_SEQUENCE_NUMBER 000000000000000000003 AFTER_SEQUENCE_NUMBER 000000000000000000003]",
		err: true,
	}, {
		name: "shard gone: closed, no error",
		f: fakeStream{n: 3, fail: map[int]error{2: trimmed}, failIter: map[types.ShardIteratorType]error{
			types.ShardIteratorTypeAfterSequenceNumber: &types.ResourceNotFoundException{Message: aws.String("gone")},
		}}, polls: 3,
		want: "[[1 2 3]]", iters: "[TRIM_HORIZON AFTER_SEQUENCE_NUMBER 000000000000000000003]",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.f
			var got [][]string
			p, err := poller.New(poller.Config{
				Client: &f, StreamARN: fakeARN, Start: poller.TrimHorizon, BatchSize: 3, Logger: slog.New(slog.DiscardHandler),
				Handler: func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
					var keys []string
					for _, r := range ev.Records {
						keys = append(keys, r.Change.Keys["pk"].String())
					}
					got = append(got, keys)
					return events.DynamoDBEventResponse{}, nil
				},
			})
			require.NoError(t, err)
			sawErr := false
			for range tt.polls {
				if _, err := p.Poll(context.Background()); err != nil {
					sawErr = true
				}
			}
			assert.Equal(t, tt.want, fmt.Sprint(got), "deliveries")
			assert.Equal(t, tt.iters, fmt.Sprint(f.iters), "GetShardIterator calls")
			assert.Equal(t, tt.err, sawErr, "poll error")
		})
	}
}

// corrupting passes every call to DynamoDB Local, except that once armed
// it damages the next GetRecords iterator, so that DynamoDB Local itself
// refuses it (ValidationException "Invalid ShardIterator"): an iterator
// error that, unlike expiry, retrying never clears.
type corrupting struct {
	streamsapi.API
	arm  bool
	errs []error
}

func (c *corrupting) GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, opts ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	if c.arm {
		c.arm = false
		in = &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(aws.ToString(in.ShardIterator) + "x"), Limit: in.Limit}
	}
	out, err := c.API.GetRecords(ctx, in, opts...)
	if err != nil {
		c.errs = append(c.errs, err)
	}
	return out, err
}

// TestPollerRecoversOnDynamoDBLocal: an iterator DynamoDB Local refuses
// costs one repositioning within the same poll (before, the poller retried
// it until it expired, 15 minutes, or forever), and no record is lost or
// repeated.
func TestPollerRecoversOnDynamoDBLocal(t *testing.T) {
	ctx := context.Background()
	table, client, arn := stakStream(t)
	api := &corrupting{API: poller.Streams(client)}
	var got []string
	p, err := poller.New(poller.Config{
		Client: api, StreamARN: arn, BatchSize: 2, Logger: slog.New(slog.DiscardHandler),
		Handler: func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			for _, r := range ev.Records {
				got = append(got, r.Change.Keys["sk"].String())
			}
			return events.DynamoDBEventResponse{}, nil
		},
	})
	require.NoError(t, err)
	require.NoError(t, p.Sync(ctx))
	put := func(sk string) {
		_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]ddbtypes.AttributeValue{"pk": s("p"), "sk": s(sk)}})
		require.NoError(t, err)
	}
	pollUntil := func(n int) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for len(got) < n && time.Now().Before(deadline) {
			_, err := p.Poll(ctx)
			require.NoError(t, err, "poll")
			time.Sleep(20 * time.Millisecond)
		}
	}
	put("a")
	put("b")
	pollUntil(2)
	// The next read uses a refused iterator, with records after the last
	// one handed over (more than one batch).
	put("c")
	put("d")
	put("e")
	// Only what follows the corruption counts: DynamoDB Local, shared by
	// every package of a make test, once answered TrimmedDataAccessException
	// while the first two records were read (the poller repositioned and
	// went on, as it should; that case has its own test above).
	api.errs = nil
	api.arm = true
	polls := 0
	for len(got) < 5 && polls < 50 {
		_, err := p.Poll(ctx)
		require.NoError(t, err, "poll after trimmed iterator")
		polls++
	}
	var refused smithy.APIError
	require.Len(t, api.errs, 1, "DynamoDB Local errors: want one ValidationException")
	require.ErrorAs(t, api.errs[0], &refused, "DynamoDB Local error: want a ValidationException")
	require.Equal(t, "ValidationException", refused.ErrorCode(), "DynamoDB Local error code")
	assert.Equal(t, []string{"a", "b", "c", "d", "e"}, got, "records: want each once in order")
	assert.LessOrEqual(t, polls, 2, "polls the recovery took")
}
