package agenticpm

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/dynastack/dynastack/lambdas/platform/awsrpc"
)

// EventEntry is one entry of EventBridge's PutEvents.
type EventEntry struct {
	EventBusName string `json:"EventBusName,omitempty"`
	Source       string `json:"Source,omitempty"`
	DetailType   string `json:"DetailType,omitempty"`
	Detail       string `json:"Detail,omitempty"`
}

// EventResult is PutEvents' answer for one entry, in the order sent: an
// EventId, or an ErrorCode and ErrorMessage.
type EventResult struct {
	EventID      string `json:"EventId"`
	ErrorCode    string `json:"ErrorCode"`
	ErrorMessage string `json:"ErrorMessage"`
}

// EventsAPI is what the release needs of EventBridge: PutEvents.
type EventsAPI interface {
	PutEvents(ctx context.Context, entries []EventEntry) ([]EventResult, error)
}

// Events is EventsAPI over platform/awsrpc: the SDK's EventBridge client
// ran its package initialiser (about 0.5 ms) in every start of the API
// and the release job, for one operation (docs/functions.md, "Cold
// start").
type Events struct{ client *awsrpc.Client }

// NewEvents returns EventBridge's PutEvents with cfg (awsconf.For(…,
// awsrpc.EventBridge.ID) in a function).
func NewEvents(cfg aws.Config) *Events { return &Events{client: awsrpc.New(awsrpc.EventBridge, cfg)} }

// PutEvents sends entries (at most 10, 256 KB in all) in one call.
func (e *Events) PutEvents(ctx context.Context, entries []EventEntry) ([]EventResult, error) {
	var out struct{ Entries []EventResult }
	err := e.client.JSON(ctx, "PutEvents", map[string]any{"Entries": entries}, &out)
	return out.Entries, err
}
