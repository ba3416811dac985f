package awsloop

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
)

// maxSNSMessageBytes is SNS's message limit (256 KiB, attributes included;
// the body alone is checked here).
const maxSNSMessageBytes = 256 << 10

// Publication is one message SNS accepted.
type Publication struct {
	MessageID  string
	TopicARN   string
	Message    string
	Attributes map[string]string // MessageAttributes' string values by name
	// TraceHeader is the publish request's X-Amzn-Trace-Id, which SNS
	// passes to a subscribed queue as the message's AWSTraceHeader
	// system attribute (the topic has active tracing in every stage).
	TraceHeader string
}

// SNS is a fake SNS serving Publish. Each topic is registered with AddTopic
// and a deliver function: SNS's fan-out to the topic's subscriptions, which
// for a raw-delivery SQS subscription is "enqueue the body". Publishing to
// an unknown topic is NotFound, as AWS answers.
type SNS struct {
	*Server
	mu     sync.Mutex
	topics map[string]func(Publication)
	fail   map[string]int // topic → publishes still to refuse (tests of a failing SNS)
	seq    int
}

// NewSNS returns an SNS fake (not started) without topics.
func NewSNS() *SNS {
	s := &SNS{Server: NewServer(SNSService), topics: map[string]func(Publication){}, fail: map[string]int{}}
	s.Handle("Publish", s.publish)
	return s
}

// AddTopic registers topicARN; deliver receives every accepted publish.
func (s *SNS) AddTopic(topicARN string, deliver func(Publication)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.topics[topicARN] = deliver
}

// FailNext makes the next n publishes to topicARN answer InternalError
// (HTTP 500), which the SDK retries and then returns.
func (s *SNS) FailNext(topicARN string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[topicARN] = n
}

type publishResult struct {
	MessageID string `xml:"MessageId"`
}

func (s *SNS) publish(c *Call) (any, error) {
	topic, msg := c.Get("TopicArn"), c.Get("Message")
	switch {
	case topic == "" && c.Get("TargetArn") == "" && c.Get("PhoneNumber") == "":
		return nil, ClientError("InvalidParameter", "Invalid parameter: TopicArn or TargetArn Reason: no value for required parameter")
	case topic == "":
		return nil, ClientError("InvalidParameter", "Invalid parameter: this fake publishes to topics only")
	case !c.Params.Has("Message"):
		return nil, ClientError("ValidationError", "1 validation error detected: Value null at 'message' failed to satisfy constraint: Member must not be null")
	case msg == "":
		return nil, ClientError("InvalidParameter", "Invalid parameter: Empty message")
	case len(msg) > maxSNSMessageBytes:
		return nil, ClientError("InvalidParameter", "Invalid parameter: Message too long")
	}
	s.mu.Lock()
	deliver, ok := s.topics[topic]
	failing := s.fail[topic] > 0
	if failing {
		s.fail[topic]--
	}
	s.seq++
	id := fmt.Sprintf("%08x-0000-4000-8000-%012x", s.seq, s.seq)
	s.mu.Unlock()
	if failing {
		return nil, &Error{Status: http.StatusInternalServerError, Code: "InternalError", Message: "injected failure"}
	}
	if !ok {
		return nil, &Error{Status: http.StatusNotFound, Code: "NotFound", Message: "Topic does not exist"}
	}
	deliver(Publication{MessageID: id, TopicARN: topic, Message: msg, Attributes: messageAttributes(c), TraceHeader: c.TraceHeader})
	return publishResult{MessageID: id}, nil
}

// messageAttributes decodes MessageAttributes.entry.N.{Name,Value.DataType,
// Value.StringValue}, SNS's query serialization of the map.
func messageAttributes(c *Call) map[string]string {
	out := map[string]string{}
	var keys []string
	for k := range c.Params {
		if strings.HasPrefix(k, "MessageAttributes.entry.") && strings.HasSuffix(k, ".Name") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		prefix := strings.TrimSuffix(k, ".Name")
		out[c.Get(k)] = c.Get(prefix + ".Value.StringValue")
	}
	return out
}
