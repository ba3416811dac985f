package testenv

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// Meter counts the DynamoDB requests of a client and the capacity DynamoDB
// reports for them: the figures a worker's doc page compares with the
// minimum its access pattern needs. It asks every request for
// ReturnConsumedCapacity TOTAL, which changes nothing else.
type Meter struct {
	mu       sync.Mutex
	requests map[string]int
	capacity map[string]float64
}

// MeteredClient returns a client for the test endpoint whose requests m
// counts.
func MeteredClient(t testing.TB, m *Meter) *dynamodb.Client {
	t.Helper()
	return dynamodb.New(Client(t).Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			return st.Initialize.Add(middleware.InitializeMiddlewareFunc("dynastack-meter", m.handle), middleware.After)
		})
	})
}

func (m *Meter) handle(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	total := types.ReturnConsumedCapacityTotal
	switch p := in.Parameters.(type) {
	case *dynamodb.GetItemInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.PutItemInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.UpdateItemInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.DeleteItemInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.QueryInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.ScanInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.TransactWriteItemsInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.TransactGetItemsInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.BatchGetItemInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.BatchWriteItemInput:
		p.ReturnConsumedCapacity = total
	}
	out, md, err := next.HandleInitialize(ctx, in)
	var used []types.ConsumedCapacity
	switch r := out.Result.(type) {
	case *dynamodb.GetItemOutput:
		used = one(r.ConsumedCapacity)
	case *dynamodb.PutItemOutput:
		used = one(r.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		used = one(r.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		used = one(r.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		used = one(r.ConsumedCapacity)
	case *dynamodb.ScanOutput:
		used = one(r.ConsumedCapacity)
	case *dynamodb.TransactWriteItemsOutput:
		used = r.ConsumedCapacity
	case *dynamodb.TransactGetItemsOutput:
		used = r.ConsumedCapacity
	case *dynamodb.BatchGetItemOutput:
		used = r.ConsumedCapacity
	case *dynamodb.BatchWriteItemOutput:
		used = r.ConsumedCapacity
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.requests == nil {
		m.requests, m.capacity = map[string]int{}, map[string]float64{}
	}
	op := middleware.GetOperationName(ctx)
	m.requests[op]++
	for _, c := range used {
		m.capacity[op] += aws.ToFloat64(c.CapacityUnits)
	}
	return out, md, err
}

func one(c *types.ConsumedCapacity) []types.ConsumedCapacity {
	if c == nil {
		return nil
	}
	return []types.ConsumedCapacity{*c}
}

// Reset forgets what was counted.
func (m *Meter) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests, m.capacity = nil, nil
}

// Requests returns the number of requests sent, in all or of the named
// operations.
func (m *Meter) Requests(ops ...string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for op, c := range m.requests {
		if len(ops) == 0 || slices.Contains(ops, op) {
			n += c
		}
	}
	return n
}

// Capacity returns the capacity units DynamoDB reported (reads and writes).
func (m *Meter) Capacity() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	total := 0.0
	for _, c := range m.capacity {
		total += c
	}
	return total
}

// String lists requests and capacity per operation, e.g.
// "Query=2(1.5) TransactWriteItems=1(6)".
func (m *Meter) String() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	ops := make([]string, 0, len(m.requests))
	for op, n := range m.requests {
		ops = append(ops, fmt.Sprintf("%s=%d(%g)", op, n, m.capacity[op]))
	}
	sort.Strings(ops)
	return strings.Join(ops, " ")
}

// Add adds what other counted to m, so a benchmark can meter only the
// measured part of each iteration (Reset other before it, Add after).
func (m *Meter) Add(other *Meter) {
	other.mu.Lock()
	reqs, capa := maps.Clone(other.requests), maps.Clone(other.capacity)
	other.mu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.requests == nil {
		m.requests, m.capacity = map[string]int{}, map[string]float64{}
	}
	for op, n := range reqs {
		m.requests[op] += n
	}
	for op, c := range capa {
		m.capacity[op] += c
	}
}
