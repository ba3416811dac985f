package cfntables

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Resource types of the worker plumbing.
const (
	TypeTopic              = "AWS::SNS::Topic"
	TypeSubscription       = "AWS::SNS::Subscription"
	TypeQueue              = "AWS::SQS::Queue"
	TypeEventSourceMapping = "AWS::Lambda::EventSourceMapping"
	TypeSchedule           = "AWS::Scheduler::Schedule"
)

// LocalAccount is the account id of local ARNs.
const LocalAccount = "000000000000"

// LocalARN is the ARN a local emulation gives a resource of the template.
func LocalARN(service, logicalID string) string {
	return fmt.Sprintf("arn:aws:%s:us-east-1:%s:%s", service, LocalAccount, logicalID)
}

// TopicRefs maps each topic's logical id to its local ARN (what a Ref to
// an SNS topic resolves to), for Function.Environment.
func (t *Template) TopicRefs() map[string]string {
	out := map[string]string{}
	for _, id := range t.logicalIDs(TypeTopic) {
		out[id] = LocalARN("sns", id)
	}
	return out
}

// LocalRefs is what Function.Environment resolves Refs with locally: the
// tables' names (as Create returned them) and the topics' local ARNs.
func (t *Template) LocalRefs(tables map[string]string) map[string]string {
	refs := t.TopicRefs()
	for id, name := range tables {
		refs[id] = name
	}
	return refs
}

// Queue is an AWS::SQS::Queue as the local emulation needs it.
type Queue struct {
	LogicalID         string
	VisibilityTimeout time.Duration
	// MaxReceiveCount and DeadLetterQueue (a logical id) are the redrive
	// policy; 0 and "" without one.
	MaxReceiveCount int
	DeadLetterQueue string
}

// getAtt decodes {"Fn::GetAtt": [id, attr]}.
func getAtt(raw json.RawMessage) (id, attr string, ok bool) {
	var v struct {
		GetAtt []string `json:"Fn::GetAtt"`
	}
	if json.Unmarshal(raw, &v) != nil || len(v.GetAtt) != 2 {
		return "", "", false
	}
	return v.GetAtt[0], v.GetAtt[1], true
}

func ref(raw json.RawMessage) (string, bool) {
	var v struct{ Ref string }
	if json.Unmarshal(raw, &v) != nil || v.Ref == "" {
		return "", false
	}
	return v.Ref, true
}

// Queues returns the queues of t by logical id.
func (t *Template) Queues() (map[string]Queue, error) {
	out := map[string]Queue{}
	for _, id := range t.logicalIDs(TypeQueue) {
		var p struct {
			VisibilityTimeout *int `json:"VisibilityTimeout"`
			RedrivePolicy     *struct {
				DeadLetterTargetArn json.RawMessage `json:"deadLetterTargetArn"`
				MaxReceiveCount     int             `json:"maxReceiveCount"`
			} `json:"RedrivePolicy"`
		}
		if raw := t.Resources[id].Properties; len(raw) > 0 {
			if err := json.Unmarshal(raw, &p); err != nil {
				return nil, fmt.Errorf("cfntables: queue %s: %w", id, err)
			}
		}
		q := Queue{LogicalID: id, VisibilityTimeout: 30 * time.Second} // SQS's default
		if p.VisibilityTimeout != nil {
			q.VisibilityTimeout = time.Duration(*p.VisibilityTimeout) * time.Second
		}
		if p.RedrivePolicy != nil {
			dlq, attr, ok := getAtt(p.RedrivePolicy.DeadLetterTargetArn)
			if !ok || attr != "Arn" {
				return nil, fmt.Errorf("%w: queue %s: deadLetterTargetArn %s", ErrUnsupported, id, p.RedrivePolicy.DeadLetterTargetArn)
			}
			q.MaxReceiveCount, q.DeadLetterQueue = p.RedrivePolicy.MaxReceiveCount, dlq
		}
		out[id] = q
	}
	return out, nil
}

// Subscription is an SNS subscription of a queue to a topic.
type Subscription struct {
	Topic, Queue string // logical ids
	Raw          bool   // RawMessageDelivery
}

// QueueSubscriptions returns the sqs-protocol subscriptions of t.
func (t *Template) QueueSubscriptions() ([]Subscription, error) {
	var out []Subscription
	for _, id := range t.logicalIDs(TypeSubscription) {
		var p struct {
			Protocol           string          `json:"Protocol"`
			TopicArn           json.RawMessage `json:"TopicArn"`
			Endpoint           json.RawMessage `json:"Endpoint"`
			RawMessageDelivery bool            `json:"RawMessageDelivery"`
		}
		if err := json.Unmarshal(t.Resources[id].Properties, &p); err != nil {
			return nil, fmt.Errorf("cfntables: subscription %s: %w", id, err)
		}
		if p.Protocol != "sqs" {
			continue
		}
		topic, ok1 := ref(p.TopicArn)
		queue, attr, ok2 := getAtt(p.Endpoint)
		if !ok1 || !ok2 || attr != "Arn" {
			return nil, fmt.Errorf("%w: subscription %s: topic %s, endpoint %s", ErrUnsupported, id, p.TopicArn, p.Endpoint)
		}
		out = append(out, Subscription{Topic: topic, Queue: queue, Raw: p.RawMessageDelivery})
	}
	return out, nil
}

// QueueMapping is an event source mapping from a queue to a function.
type QueueMapping struct {
	Function, Queue         string // logical ids
	BatchSize               int
	MaxConcurrency          int
	ReportBatchItemFailures bool
}

// QueueMappings returns the SQS event source mappings of t.
func (t *Template) QueueMappings() ([]QueueMapping, error) {
	var out []QueueMapping
	for _, id := range t.logicalIDs(TypeEventSourceMapping) {
		var p struct {
			FunctionName   json.RawMessage `json:"FunctionName"`
			EventSourceArn json.RawMessage `json:"EventSourceArn"`
			BatchSize      int             `json:"BatchSize"`
			ScalingConfig  struct {
				MaximumConcurrency int `json:"MaximumConcurrency"`
			} `json:"ScalingConfig"`
			FunctionResponseTypes []string `json:"FunctionResponseTypes"`
		}
		if err := json.Unmarshal(t.Resources[id].Properties, &p); err != nil {
			return nil, fmt.Errorf("cfntables: event source mapping %s: %w", id, err)
		}
		src, attr, ok := getAtt(p.EventSourceArn)
		if !ok || attr != "Arn" || t.Resources[src].Type != TypeQueue {
			continue // a stream mapping, read elsewhere
		}
		fn, ok := t.FunctionOf(p.FunctionName)
		if !ok {
			return nil, fmt.Errorf("%w: event source mapping %s: FunctionName %s", ErrUnsupported, id, p.FunctionName)
		}
		m := QueueMapping{Function: fn, Queue: src, BatchSize: p.BatchSize, MaxConcurrency: p.ScalingConfig.MaximumConcurrency}
		if m.BatchSize == 0 {
			m.BatchSize = 10 // SQS mappings' default
		}
		for _, rt := range p.FunctionResponseTypes {
			m.ReportBatchItemFailures = m.ReportBatchItemFailures || rt == "ReportBatchItemFailures"
		}
		out = append(out, m)
	}
	return out, nil
}

// Schedule is an EventBridge Scheduler schedule invoking a function.
type Schedule struct {
	LogicalID  string
	Function   string // logical id of the target
	Expression string
	TimeZone   string
	Input      string
}

// Schedules returns the schedules of t that target a function of t.
func (t *Template) Schedules() ([]Schedule, error) {
	var out []Schedule
	for _, id := range t.logicalIDs(TypeSchedule) {
		var p struct {
			ScheduleExpression         string `json:"ScheduleExpression"`
			ScheduleExpressionTimezone string `json:"ScheduleExpressionTimezone"`
			Target                     struct {
				Arn   json.RawMessage `json:"Arn"`
				Input string          `json:"Input"`
			} `json:"Target"`
		}
		if err := json.Unmarshal(t.Resources[id].Properties, &p); err != nil {
			return nil, fmt.Errorf("cfntables: schedule %s: %w", id, err)
		}
		fn, ok := t.FunctionOf(p.Target.Arn)
		if !ok {
			continue
		}
		out = append(out, Schedule{LogicalID: id, Function: fn, Expression: p.ScheduleExpression, TimeZone: p.ScheduleExpressionTimezone, Input: p.Target.Input})
	}
	return out, nil
}

// Resource types between an invoker and its function.
const (
	TypeAlias   = "AWS::Lambda::Alias"
	TypeVersion = "AWS::Lambda::Version"
)

// FunctionOf is the logical id of the function an invoker's reference
// names (an event source mapping's FunctionName, a schedule's target Arn,
// an integration's URI): a Ref or Fn::GetAtt Arn of the function itself,
// or a Ref of one of its aliases or versions (AWS::Lambda::Alias and
// AWS::Lambda::Version name their function in FunctionName), followed to
// the function. A qualified name as CDK writes it for an alias,
// <function name>:<alias> from the alias's ARN ({"Fn::Join": ["",
// [{"Fn::Select": [6, {"Fn::Split": [":", {"Ref": alias}]}]}, ":live"]]},
// what an event source mapping of an alias names), is followed the same
// way. false when the reference leads to no function of t.
func (t *Template) FunctionOf(raw json.RawMessage) (string, bool) {
	for range 6 { // a qualified name, its ARN, alias or version, the function
		if inner, ok := qualifiedName(raw); ok {
			raw = inner
			continue
		}
		id, ok := ref(raw)
		if !ok {
			var attr string
			if id, attr, ok = getAtt(raw); !ok || attr != "Arn" {
				return "", false
			}
		}
		r, ok := t.Resources[id]
		if !ok {
			return "", false
		}
		switch r.Type {
		case TypeFunction:
			return id, true
		case TypeAlias, TypeVersion:
			var p struct {
				FunctionName json.RawMessage `json:"FunctionName"`
			}
			if json.Unmarshal(r.Properties, &p) != nil {
				return "", false
			}
			raw = p.FunctionName
		default:
			return "", false
		}
	}
	return "", false
}

// qualifiedName unwraps {"Fn::Join": ["", [x, ":<qualifier>"]]} and
// {"Fn::Select": [n, {"Fn::Split": [":", x]}]} to x.
func qualifiedName(raw json.RawMessage) (json.RawMessage, bool) {
	var v struct {
		Join   []json.RawMessage `json:"Fn::Join"`
		Select []json.RawMessage `json:"Fn::Select"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	if len(v.Join) == 2 {
		var sep string
		var parts []json.RawMessage
		var qualifier string
		if json.Unmarshal(v.Join[0], &sep) == nil && sep == "" && json.Unmarshal(v.Join[1], &parts) == nil &&
			len(parts) == 2 && json.Unmarshal(parts[1], &qualifier) == nil && strings.HasPrefix(qualifier, ":") {
			return parts[0], true
		}
	}
	if len(v.Select) == 2 {
		var split struct {
			Split []json.RawMessage `json:"Fn::Split"`
		}
		var sep string
		if json.Unmarshal(v.Select[1], &split) == nil && len(split.Split) == 2 &&
			json.Unmarshal(split.Split[0], &sep) == nil && sep == ":" {
			return split.Split[1], true
		}
	}
	return nil, false
}

// Timeout is the function's timeout (Lambda's default, 3 s, when unset).
func (t *Template) Timeout(function string) time.Duration {
	var p struct {
		Timeout int `json:"Timeout"`
	}
	_ = json.Unmarshal(t.Resources[function].Properties, &p)
	if p.Timeout == 0 {
		return 3 * time.Second
	}
	return time.Duration(p.Timeout) * time.Second
}
