package agenticpm

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
)

// EventEntry is one entry of EventBridge's PutEvents.
type EventEntry struct {
	EventBusName string
	Source       string
	DetailType   string
	Detail       string
}

// EventResult is PutEvents' answer for one entry, in the order sent: an
// EventId, or an ErrorCode and ErrorMessage.
type EventResult struct {
	EventID      string
	ErrorCode    string
	ErrorMessage string
}

// EventsAPI is what the release needs of EventBridge: PutEvents.
type EventsAPI interface {
	PutEvents(ctx context.Context, entries []EventEntry) ([]EventResult, error)
}

// Events is EventsAPI over the SDK's EventBridge client. Both AgenticPM
// functions release actions (the API's release route, the release job),
// so the client lives in this package, which both link.
type Events struct{ client *eventbridge.Client }

// NewEvents returns EventBridge's PutEvents with cfg (awsconf.For(…,
// eventbridge.ServiceID) in a function).
func NewEvents(cfg aws.Config) *Events { return &Events{client: eventbridge.NewFromConfig(cfg)} }

// PutEvents sends entries (at most 10, 256 KB in all) in one call.
func (e *Events) PutEvents(ctx context.Context, entries []EventEntry) ([]EventResult, error) {
	in := &eventbridge.PutEventsInput{Entries: make([]types.PutEventsRequestEntry, len(entries))}
	for i, en := range entries {
		in.Entries[i] = types.PutEventsRequestEntry{EventBusName: optional(en.EventBusName), Source: optional(en.Source),
			DetailType: optional(en.DetailType), Detail: optional(en.Detail)}
	}
	out, err := e.client.PutEvents(ctx, in)
	if err != nil {
		return nil, err
	}
	results := make([]EventResult, len(out.Entries))
	for i, r := range out.Entries {
		results[i] = EventResult{EventID: aws.ToString(r.EventId), ErrorCode: aws.ToString(r.ErrorCode), ErrorMessage: aws.ToString(r.ErrorMessage)}
	}
	return results, nil
}

// optional is s as an optional member of the SDK's input: nil when
// empty, so that an unset field is left out of the request rather than
// sent as "".
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}
