package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/dynastack/dynastack/lambdas/ops/streamsapi"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
)

// Failure is what Lambda sends to a stream event source mapping's
// on-failure destination when it gives up on a batch: where the batch lies
// in the stream, not its records.
type Failure struct {
	RequestContext struct {
		Condition string `json:"condition"` // RetryAttemptsExhausted, RecordAgeExceeded, …
	} `json:"requestContext"`
	Timestamp string    `json:"timestamp"`
	Batch     BatchInfo `json:"DDBStreamBatchInfo"`
}

// BatchInfo locates a batch: shard, first and last sequence number.
type BatchInfo struct {
	ShardID             string `json:"shardId"`
	StartSequenceNumber string `json:"startSequenceNumber"`
	EndSequenceNumber   string `json:"endSequenceNumber"`
	BatchSize           int    `json:"batchSize"`
	StreamArn           string `json:"streamArn"`
}

// ErrTrimmed: the batch's records are past the stream's 24-hour retention;
// only a recount can repair the counters now.
var ErrTrimmed = errors.New("stak-replay: the records are no longer in the stream (past its 24-hour retention); recount the inbox instead")

// maxEmptyPages bounds the empty GetRecords pages read before the
// batch's first record. Pages with records are read until the batch's end
// however many there are: the mapping's filter hands the consumer TTL
// deletions of messages only, so a batch of 100 can span tens of
// thousands of the shard's other records (a page holds up to 1,000).
const maxEmptyPages = 20

// Result is what one replay did.
type Result struct {
	Shard    string   `json:"shard"`
	Records  int      `json:"records"`
	Failed   []string `json:"failed,omitempty"`
	Complete bool     `json:"complete"`
}

// Decode reads on-failure messages, as SQS bodies, one JSON object after
// another.
func Decode(r io.Reader) ([]Failure, error) {
	dec := json.NewDecoder(r)
	var out []Failure
	for {
		var f Failure
		err := dec.Decode(&f)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("stak-replay: not an on-failure message: %w", err)
		}
		b := f.Batch
		if b.StreamArn == "" || b.ShardID == "" || b.StartSequenceNumber == "" || b.EndSequenceNumber == "" {
			return nil, errors.New("stak-replay: the message has no DDBStreamBatchInfo (streamArn, shardId, startSequenceNumber, endSequenceNumber)")
		}
		out = append(out, f)
	}
}

// Replay reads the batch's records again (GetShardIterator
// AT_SEQUENCE_NUMBER, GetRecords up to the end sequence number) and hands
// them to h exactly as Lambda would have. The consumer is idempotent per
// record (its dedupe markers live 48 hours), so a record that did succeed
// in some attempt is not counted twice.
func Replay(ctx context.Context, client streamsapi.API, h fn.StreamHandler, b BatchInfo) (Result, error) {
	res := Result{Shard: b.ShardID}
	it, err := client.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
		StreamArn: aws.String(b.StreamArn), ShardId: aws.String(b.ShardID),
		ShardIteratorType: types.ShardIteratorTypeAtSequenceNumber, SequenceNumber: aws.String(b.StartSequenceNumber),
	})
	if err != nil {
		return res, trimmed(err)
	}
	iter := it.ShardIterator
	var batch []events.DynamoDBEventRecord
	for empty := 0; iter != nil && empty < maxEmptyPages && !res.Complete; {
		out, err := client.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
		if err != nil {
			return res, trimmed(err)
		}
		if len(out.Records) == 0 {
			empty++
		}
		for _, r := range out.Records {
			seq := aws.ToString(r.Dynamodb.SequenceNumber)
			if seqLess(b.EndSequenceNumber, seq) {
				res.Complete = true
				break
			}
			rec, err := streamsapi.EventRecord(r, b.StreamArn)
			if err != nil {
				return res, fmt.Errorf("stak-replay: record %s: %w", seq, err)
			}
			batch = append(batch, rec)
			if seq == b.EndSequenceNumber {
				res.Complete = true
				break
			}
		}
		iter = out.NextShardIterator
		if len(out.Records) == 0 && len(batch) > 0 {
			// An open shard answers empty pages once it is read to its end.
			break
		}
	}
	res.Records = len(batch)
	if len(batch) == 0 {
		return res, fmt.Errorf("stak-replay: no record of %s from %s in the stream", b.ShardID, b.StartSequenceNumber)
	}
	resp, err := h(ctx, events.DynamoDBEvent{Records: batch})
	if err != nil {
		return res, err
	}
	for _, f := range resp.BatchItemFailures {
		res.Failed = append(res.Failed, f.ItemIdentifier)
	}
	return res, nil
}

func trimmed(err error) error {
	var gone *types.TrimmedDataAccessException
	var missing *types.ResourceNotFoundException
	if errors.As(err, &gone) || errors.As(err, &missing) {
		return fmt.Errorf("%w: %v", ErrTrimmed, err)
	}
	return err
}

// seqLess compares DynamoDB Streams sequence numbers: decimal strings of
// up to 40 digits, too long for an integer.
func seqLess(a, b string) bool {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}
