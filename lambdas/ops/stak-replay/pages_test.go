package main

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/lambdas/ops/streamsapi"
)

// pagedShard is a shard of n records, 1,000 a page, as GetRecords pages a
// busy table's stream: sequence numbers 100000…, each page's iterator the
// index of its first record.
type pagedShard struct {
	streamsapi.API
	n int
}

func seqOf(i int) string { return strconv.Itoa(100000 + i) }

func (p pagedShard) GetShardIterator(_ context.Context, in *dynamodbstreams.GetShardIteratorInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	i, _ := strconv.Atoi(aws.ToString(in.SequenceNumber))
	return &dynamodbstreams.GetShardIteratorOutput{ShardIterator: aws.String(strconv.Itoa(i - 100000))}, nil
}

func (p pagedShard) GetRecords(_ context.Context, in *dynamodbstreams.GetRecordsInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	from, _ := strconv.Atoi(aws.ToString(in.ShardIterator))
	out := &dynamodbstreams.GetRecordsOutput{}
	for i := from; i < min(from+1000, p.n); i++ {
		out.Records = append(out.Records, types.Record{EventID: aws.String(fmt.Sprint("e", i)), EventName: types.OperationTypeModify,
			Dynamodb: &types.StreamRecord{SequenceNumber: aws.String(seqOf(i))}})
	}
	if to := min(from+1000, p.n); to < p.n {
		out.NextShardIterator = aws.String(strconv.Itoa(to))
	}
	return out, nil
}

// TestReplayOfASparseBatch: the mapping's filter hands the consumer TTL
// deletions of messages only, so a batch of 100 of them can span tens of
// thousands of other records of its shard on a busy table. The replay
// reads up to the batch's end however many pages that takes, and never
// reports a batch it read only part of as replayed.
func TestReplayOfASparseBatch(t *testing.T) {
	const n = 60_000 // 60 pages
	var got []events.DynamoDBEventRecord
	h := func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		got = append(got, ev.Records...)
		return events.DynamoDBEventResponse{}, nil
	}
	b := BatchInfo{StreamArn: "arn:aws:dynamodb:eu-west-1:1:table/t/stream/s", ShardID: "shardId-1",
		StartSequenceNumber: seqOf(10), EndSequenceNumber: seqOf(n - 10), BatchSize: 100}
	res, err := Replay(context.Background(), pagedShard{n: n}, h, b)
	require.NoError(t, err)
	assert.True(t, res.Complete, "read to the batch's end")
	require.NotEmpty(t, got)
	assert.Equal(t, seqOf(n-10), got[len(got)-1].Change.SequenceNumber, "the batch's last record handed over")
	assert.Equal(t, n-19, res.Records, "every record from start to end")
}

// TestIncompleteReplayFails: a replay that could not read to the batch's
// end makes the command fail, so the operator keeps the message.
func TestIncompleteReplayFails(t *testing.T) {
	assert.Error(t, check([]Result{{Shard: "shardId-1", Records: 5, Complete: false}}), "incomplete")
	assert.Error(t, check([]Result{{Shard: "shardId-1", Records: 5, Complete: true, Failed: []string{"1"}}}), "failed again")
	assert.NoError(t, check([]Result{{Shard: "shardId-1", Records: 5, Complete: true}}), "replayed")
}
