package poller

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// A filter is one FilterCriteria pattern of an event source mapping, as
// Lambda applies it to each stream record before invoking: a record that
// matches no pattern is dropped (it counts as handled), never delivered.
// The subset of Lambda's pattern syntax the stacks use: equality lists,
// {"prefix": …} and {"exists": …}, nested objects.
type filter map[string]any

func parseFilters(patterns []string) ([]filter, error) {
	var fs []filter
	for _, p := range patterns {
		var f filter
		if err := json.Unmarshal([]byte(p), &f); err != nil {
			return nil, fmt.Errorf("poller: filter pattern %q: %w", p, err)
		}
		fs = append(fs, f)
	}
	return fs, nil
}

// keep reports whether rec matches one of fs (all when there is none).
func keep(fs []filter, rec events.DynamoDBEventRecord) bool {
	if len(fs) == 0 {
		return true
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return false
	}
	var doc map[string]any
	if json.Unmarshal(b, &doc) != nil {
		return false
	}
	for _, f := range fs {
		if matchObject(f, doc) {
			return true
		}
	}
	return false
}

func matchObject(pattern, doc map[string]any) bool {
	for k, want := range pattern {
		got, present := doc[k]
		switch w := want.(type) {
		case map[string]any:
			sub, ok := got.(map[string]any)
			if !ok || !matchObject(w, sub) {
				return false
			}
		case []any:
			if !matchValue(w, got, present) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// matchValue: the value matches one of the rule's entries.
func matchValue(rules []any, got any, present bool) bool {
	for _, r := range rules {
		switch r := r.(type) {
		case map[string]any:
			if p, ok := r["prefix"].(string); ok {
				if s, ok := got.(string); ok && strings.HasPrefix(s, p) {
					return true
				}
			}
			if e, ok := r["exists"].(bool); ok && e == present {
				return true
			}
		default:
			if present && fmt.Sprint(r) == fmt.Sprint(got) {
				return true
			}
		}
	}
	return false
}

// asLambdaSees gives a TTL deletion the shape AWS gives it: DynamoDB Local
// reports one as eventName UNKNOWN_TO_SDK_VERSION without a userIdentity,
// AWS as REMOVE by the DynamoDB service, which is what the mapping's
// filter and the consumer look for.
func asLambdaSees(rec events.DynamoDBEventRecord) events.DynamoDBEventRecord {
	if rec.EventName == "UNKNOWN_TO_SDK_VERSION" && rec.UserIdentity == nil && rec.Change.OldImage != nil && rec.Change.NewImage == nil {
		rec.EventName = "REMOVE"
		rec.UserIdentity = &events.DynamoDBUserIdentity{Type: "Service", PrincipalID: "dynamodb.amazonaws.com"}
	}
	return rec
}
