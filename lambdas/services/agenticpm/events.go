package agenticpm

import "context"

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

// EventsAPI is what the release needs of EventBridge: PutEvents. The
// SDK's client is bound in services/agenticpm/eventbus, which only the
// functions that release link.
type EventsAPI interface {
	PutEvents(ctx context.Context, entries []EventEntry) ([]EventResult, error)
}
