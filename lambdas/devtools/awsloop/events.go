package awsloop

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Limits of PutEvents, as the API reference states them.
const (
	MaxPutEventsEntries = 10
	// MaxPutEventsBytes bounds the entries of one call, each counted as
	// the UTF-8 bytes of Source, DetailType, Detail and Resources, plus 14
	// when Time is set (the reference's size calculation).
	MaxPutEventsBytes = 256 << 10
)

// Events is a fake EventBridge serving PutEvents: entries are checked as
// the API reference constrains them, a failed entry answers with its
// ErrorCode and ErrorMessage in place (PutEvents fails entries, not the
// call), and accepted events are kept per bus in arrival order.
type Events struct {
	*Server
	mu          sync.Mutex
	buses       map[string]bool
	events      []Event
	failEntries int
	n           int
}

// Event is one accepted PutEvents entry.
type Event struct {
	ID         string
	Bus        string // the bus name, also when the entry named it by ARN
	Source     string
	DetailType string
	Detail     string
	Resources  []string
	Time       time.Time // the entry's Time, or arrival
	// AccessKeyID signed the call that put it.
	AccessKeyID string
}

// NewEvents returns a fake (not started) that knows the bus "default" and
// the named buses.
func NewEvents(buses ...string) *Events {
	e := &Events{Server: NewServer(EventsService), buses: map[string]bool{"default": true}}
	for _, b := range buses {
		e.buses[b] = true
	}
	e.Handle("PutEvents", e.putEvents)
	return e
}

// AddBus creates a bus by name.
func (e *Events) AddBus(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.buses[name] = true
}

// FailEntries makes the next n entries fail with ErrorCode
// InternalFailure, as EventBridge fails entries it could not accept: the
// call succeeds with FailedEntryCount set, which the SDK does not retry.
func (e *Events) FailEntries(n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failEntries = n
}

// Events returns the accepted events in arrival order: the newest
// DefaultKeep.
func (e *Events) Events() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return newest(e.events, DefaultKeep)
}

type putEventsEntry struct {
	Source       *string  `json:"Source"`
	DetailType   *string  `json:"DetailType"`
	Detail       *string  `json:"Detail"`
	EventBusName *string  `json:"EventBusName"`
	Resources    []string `json:"Resources"`
	Time         *float64 `json:"Time"` // epoch seconds (awsJson timestamps)
	TraceHeader  *string  `json:"TraceHeader"`
}

type putEventsResultEntry struct {
	EventID      string `json:"EventId,omitempty"`
	ErrorCode    string `json:"ErrorCode,omitempty"`
	ErrorMessage string `json:"ErrorMessage,omitempty"`
}

func (e *Events) putEvents(c *Call) (any, error) {
	var in struct {
		Entries    []putEventsEntry `json:"Entries"`
		EndpointID *string          `json:"EndpointId"`
	}
	if err := c.Decode(&in); err != nil {
		return nil, err
	}
	switch {
	case in.Entries == nil:
		return nil, eventsValidation("null", "entries", "Member must not be null")
	case len(in.Entries) < 1 || len(in.Entries) > MaxPutEventsEntries:
		return nil, eventsValidation(fmt.Sprint(len(in.Entries), " entries"), "entries",
			fmt.Sprintf("Member must have length less than or equal to %d and greater than or equal to 1", MaxPutEventsEntries))
	}
	size := 0
	for _, en := range in.Entries {
		size += len(aws.ToString(en.Source)) + len(aws.ToString(en.DetailType)) + len(aws.ToString(en.Detail))
		for _, r := range en.Resources {
			size += len(r)
		}
		if en.Time != nil {
			size += 14
		}
	}
	if size > MaxPutEventsBytes {
		return nil, ClientError("ValidationException", "Total size of the entries in the request is over the limit.")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	out := struct {
		FailedEntryCount int                    `json:"FailedEntryCount"`
		Entries          []putEventsResultEntry `json:"Entries"`
	}{Entries: make([]putEventsResultEntry, len(in.Entries))}
	for i, en := range in.Entries {
		bus, code, msg := e.check(en)
		if code == "" && e.failEntries > 0 {
			e.failEntries--
			code, msg = "InternalFailure", "Internal service error."
		}
		if code != "" {
			out.FailedEntryCount++
			out.Entries[i] = putEventsResultEntry{ErrorCode: code, ErrorMessage: msg}
			continue
		}
		e.n++
		id := fmt.Sprintf("%08x-%04x-4%03x-8000-%012x", e.n, e.n>>16&0xffff, e.n&0xfff, time.Now().UnixNano()&0xffffffffffff)
		at := c.At
		if en.Time != nil {
			at = time.Unix(0, int64(*en.Time*1e9)).UTC()
		}
		e.events = keepNewest(e.events, Event{ID: id, Bus: bus, Source: *en.Source, DetailType: *en.DetailType, Detail: *en.Detail,
			Resources: en.Resources, Time: at, AccessKeyID: c.AccessKeyID}, DefaultKeep)
		out.Entries[i] = putEventsResultEntry{EventID: id}
	}
	return out, nil
}

// check applies the per-entry rules: Source, DetailType and Detail are
// required, Detail is a JSON object, and the bus (name or ARN; default
// when absent) exists. It returns the bus name, or an error code and
// message for the entry.
func (e *Events) check(en putEventsEntry) (bus, code, msg string) {
	invalid := func(param, reason string) (string, string, string) {
		return "", "InvalidArgument", fmt.Sprintf("Parameter %s is not valid. Reason: %s", param, reason)
	}
	switch {
	case aws.ToString(en.Source) == "":
		return invalid("Source", "Source is a required argument.")
	case aws.ToString(en.DetailType) == "":
		return invalid("DetailType", "DetailType is a required argument.")
	case aws.ToString(en.Detail) == "":
		return invalid("Detail", "Detail is a required argument.")
	case !utf8.ValidString(*en.Detail) || !isJSONObject(*en.Detail):
		return "", "MalformedDetail", "Detail is malformed."
	}
	bus = aws.ToString(en.EventBusName)
	if bus == "" {
		bus = "default"
	}
	if i := strings.LastIndex(bus, ":event-bus/"); strings.HasPrefix(bus, "arn:") && i >= 0 {
		bus = bus[i+len(":event-bus/"):]
	}
	if !e.buses[bus] {
		return "", "ResourceNotFoundException", fmt.Sprintf("Event bus %s does not exist.", bus)
	}
	return bus, "", ""
}

func isJSONObject(s string) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal([]byte(s), &m) == nil && m != nil
}

func eventsValidation(value, member, constraint string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "ValidationException",
		Message: fmt.Sprintf("1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: %s", value, member, constraint)}
}
