package awsloop_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/smithy-go"

	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func startEvents(t *testing.T, buses ...string) (*awsloop.Events, *eventbridge.Client) {
	t.Helper()
	fake := awsloop.NewEvents(buses...)
	require.NoError(t, fake.Start())
	t.Cleanup(func() { _ = fake.Close() })
	client := eventbridge.NewFromConfig(awsloop.Config("AKIDPUBLISHER"), func(o *eventbridge.Options) {
		o.BaseEndpoint = aws.String(fake.URL())
	})
	return fake, client
}

// PutEvents as the SDK sends it (awsJson1_1, X-Amz-Target
// AWSEvents.PutEvents, signed for "events"): accepted entries get ids and
// are kept with their bus, invalid ones fail in place.
func TestPutEvents(t *testing.T) {
	fake, client := startEvents(t, "apm-dev")
	ctx := context.Background()
	at := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	out, err := client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{
		{Source: aws.String("dynastack.agenticpm"), DetailType: aws.String("Released"), Detail: aws.String(`{"a":1}`),
			EventBusName: aws.String("apm-dev"), Time: aws.Time(at), Resources: []string{"arn:x"}},
		{Source: aws.String("s"), DetailType: aws.String("d"), Detail: aws.String(`[1]`), EventBusName: aws.String("apm-dev")},
		{Source: aws.String("s"), DetailType: aws.String("d"), Detail: aws.String(`{}`), EventBusName: aws.String("nope")},
		{DetailType: aws.String("d"), Detail: aws.String(`{}`)},
		{Source: aws.String("s"), DetailType: aws.String("d"), Detail: aws.String(`{}`),
			EventBusName: aws.String("arn:aws:events:us-east-1:111122223333:event-bus/apm-dev")},
	}})
	require.NoError(t, err)
	var codes []string
	for _, e := range out.Entries {
		codes = append(codes, aws.ToString(e.ErrorCode))
	}
	require.Equal(t, int32(3), out.FailedEntryCount, "FailedEntryCount")
	require.Equal(t, []string{"", "MalformedDetail", "ResourceNotFoundException", "InvalidArgument", ""}, codes, "error codes")
	evs := fake.Events()
	if assert.Len(t, evs, 2, "events") {
		assert.Equal(t, "apm-dev", evs[0].Bus, "first event's bus")
		assert.Equal(t, "apm-dev", evs[1].Bus, "second event's bus")
		assert.Equal(t, `{"a":1}`, evs[0].Detail, "first event's detail")
		assert.WithinDuration(t, at, evs[0].Time, 0, "first event's time")
		assert.Equal(t, "AKIDPUBLISHER", evs[0].AccessKeyID, "first event's publisher")
		assert.Equal(t, aws.ToString(out.Entries[0].EventId), evs[0].ID, "first event's id")
	}
	calls := fake.CallsOf("PutEvents")
	if assert.Len(t, calls, 1, "PutEvents calls") {
		assert.Equal(t, "events", calls[0].SigningName, "signing name")
	}

	// Injected entry failures answer in place; the call itself succeeds.
	fake.FailEntries(1)
	out, err = client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{
		{Source: aws.String("s"), DetailType: aws.String("d"), Detail: aws.String(`{}`)},
		{Source: aws.String("s"), DetailType: aws.String("d"), Detail: aws.String(`{}`)},
	}})
	if assert.NoError(t, err, "injected failure") {
		assert.Equal(t, int32(1), out.FailedEntryCount, "injected failure: FailedEntryCount")
		assert.Equal(t, "InternalFailure", aws.ToString(out.Entries[0].ErrorCode), "injected failure: first entry")
		assert.NotNil(t, out.Entries[1].EventId, "injected failure: second entry's id")
	}

	// Call-level validation: no entries, more than 10.
	for _, n := range []int{0, 11} {
		entries := make([]types.PutEventsRequestEntry, n)
		for i := range entries {
			entries[i] = types.PutEventsRequestEntry{Source: aws.String("s"), DetailType: aws.String("d"), Detail: aws.String(`{}`)}
		}
		_, err := client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: entries})
		var api smithy.APIError
		if assert.ErrorAs(t, err, &api, "%d entries", n) {
			assert.Equal(t, "ValidationException", api.ErrorCode(), "%d entries", n)
		}
	}
}
