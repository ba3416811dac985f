package awsloop_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/smithy-go"

	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
)

func startEvents(t *testing.T, buses ...string) (*awsloop.Events, *eventbridge.Client) {
	t.Helper()
	fake := awsloop.NewEvents(buses...)
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, e := range out.Entries {
		codes = append(codes, aws.ToString(e.ErrorCode))
	}
	if out.FailedEntryCount != 3 || strings.Join(codes, ",") != ",MalformedDetail,ResourceNotFoundException,InvalidArgument," {
		t.Fatalf("FailedEntryCount %d, codes %q", out.FailedEntryCount, codes)
	}
	evs := fake.Events()
	if len(evs) != 2 || evs[0].Bus != "apm-dev" || evs[1].Bus != "apm-dev" || evs[0].Detail != `{"a":1}` ||
		!evs[0].Time.Equal(at) || evs[0].AccessKeyID != "AKIDPUBLISHER" || evs[0].ID != aws.ToString(out.Entries[0].EventId) {
		t.Errorf("events = %+v", evs)
	}
	calls := fake.CallsOf("PutEvents")
	if len(calls) != 1 || calls[0].SigningName != "events" {
		t.Errorf("calls = %+v", calls)
	}

	// Injected entry failures answer in place; the call itself succeeds.
	fake.FailEntries(1)
	out, err = client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{
		{Source: aws.String("s"), DetailType: aws.String("d"), Detail: aws.String(`{}`)},
		{Source: aws.String("s"), DetailType: aws.String("d"), Detail: aws.String(`{}`)},
	}})
	if err != nil || out.FailedEntryCount != 1 || aws.ToString(out.Entries[0].ErrorCode) != "InternalFailure" || out.Entries[1].EventId == nil {
		t.Errorf("injected failure: %+v %v", out, err)
	}

	// Call-level validation: no entries, more than 10.
	for _, n := range []int{0, 11} {
		entries := make([]types.PutEventsRequestEntry, n)
		for i := range entries {
			entries[i] = types.PutEventsRequestEntry{Source: aws.String("s"), DetailType: aws.String("d"), Detail: aws.String(`{}`)}
		}
		_, err := client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: entries})
		var api smithy.APIError
		if !errors.As(err, &api) || api.ErrorCode() != "ValidationException" {
			t.Errorf("%d entries: %v, want ValidationException", n, err)
		}
	}
}
