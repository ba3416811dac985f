// Package ddbrecord records the DynamoDB calls a client makes: which
// operation on which table and index, and the capacity each consumed. It
// asks DynamoDB for that capacity itself (ReturnConsumedCapacity=TOTAL on
// every request that takes it), so the code under measurement runs
// unchanged. Benchmarks report cost with it (`make bench`), tests pin each
// API operation's cost to the minimum its access pattern needs, and the
// recorded (operation, table, index) triples can be checked against the
// grants a function's IAM policy carries.
//
// It is dev-only: Lambda binaries never link it.
package ddbrecord

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// Call is one DynamoDB request, or one table's share of a transaction or
// batch.
type Call struct {
	Operation string // GetItem, Query, TransactWriteItems, …
	Table     string
	Index     string // the IndexName of a Query or Scan, "" otherwise
	// Read and Write are the capacity units DynamoDB reported consuming
	// (RCU and WCU; transactions count double, as they are billed).
	Read, Write float64
	// Err is the request's error; a failed conditional write still
	// consumes write capacity.
	Err error
}

// Recorder collects the calls of every client it instruments. It is safe
// for concurrent use.
type Recorder struct {
	mu    sync.Mutex
	calls []Call
	ops   []string // the operation of each request, in order
}

// Instrument is a dynamodb.Options function: dynamodb.New(opts,
// rec.Instrument), or client.Options() copied with it.
func (r *Recorder) Instrument(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("ddbrecord", r.handle), middleware.After)
	})
}

// Client returns a copy of c whose calls r records.
func (r *Recorder) Client(c *dynamodb.Client) *dynamodb.Client {
	return dynamodb.New(c.Options(), r.Instrument)
}

// Calls returns the calls recorded so far, in order.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// Reset forgets the calls recorded so far.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls, r.ops = nil, nil
}

// Cost is the sum of some calls.
type Cost struct {
	// Requests counts DynamoDB requests (a transaction is one).
	Requests    int
	Read, Write float64
}

func (c Cost) String() string {
	return fmt.Sprintf("%d req, %s RCU, %s WCU", c.Requests, units(c.Read), units(c.Write))
}

func units(f float64) string { return strings.TrimSuffix(fmt.Sprintf("%.1f", f), ".0") }

// Total sums the calls recorded so far.
func (r *Recorder) Total() Cost {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := Cost{Requests: len(r.ops)}
	for _, call := range r.calls {
		c.Read += call.Read
		c.Write += call.Write
	}
	return c
}

// Requests counts the requests recorded so far, of the named operations
// only when any are named.
func (r *Recorder) Requests(ops ...string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, op := range r.ops {
		if len(ops) == 0 || slices.Contains(ops, op) {
			n++
		}
	}
	return n
}

// Capacity is the read and write capacity recorded so far, together.
func (r *Recorder) Capacity() float64 {
	c := r.Total()
	return c.Read + c.Write
}

// String lists requests and capacity per operation, e.g.
// "Query=2(1.5) TransactWriteItems=1(6)".
func (r *Recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, units := map[string]int{}, map[string]float64{}
	for _, op := range r.ops {
		n[op]++
	}
	for _, c := range r.calls {
		units[c.Operation] += c.Read + c.Write
	}
	out := make([]string, 0, len(n))
	for op, k := range n {
		out = append(out, fmt.Sprintf("%s=%d(%g)", op, k, units[op]))
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// Add appends what other recorded to r, so a benchmark can record only
// the measured part of each iteration (Reset other before it, Add after).
func (r *Recorder) Add(other *Recorder) {
	other.mu.Lock()
	calls, ops := slices.Clone(other.calls), slices.Clone(other.ops)
	other.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, calls...)
	r.ops = append(r.ops, ops...)
}

// Key names what a call touched, for grouping and for IAM checks.
type Key struct{ Operation, Table, Index string }

// ByKey sums the calls recorded so far per (operation, table, index).
func (r *Recorder) ByKey() map[Key]Cost {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[Key]Cost{}
	for _, call := range r.calls {
		k := Key{call.Operation, call.Table, call.Index}
		c := out[k]
		c.Requests++
		c.Read += call.Read
		c.Write += call.Write
		out[k] = c
	}
	return out
}

func (r *Recorder) handle(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	params, tables, index, ok := withCapacity(in.Parameters)
	if !ok {
		return next.HandleInitialize(ctx, in)
	}
	in.Parameters = params
	out, md, err := next.HandleInitialize(ctx, in)
	op := awsmiddleware.GetOperationName(ctx)
	read := slices.Contains([]string{"GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"}, op)
	consumed := map[string]float64{}
	if err == nil {
		for _, c := range consumedCapacity(out.Result) {
			if c.TableName != nil && c.CapacityUnits != nil {
				consumed[*c.TableName] += *c.CapacityUnits
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, op)
	for _, t := range tables {
		call := Call{Operation: op, Table: t, Index: index, Err: err}
		if read {
			call.Read = consumed[t]
		} else {
			call.Write = consumed[t]
		}
		r.calls = append(r.calls, call)
	}
	return out, md, err
}

// withCapacity returns a copy of a data-plane input asking for the total
// consumed capacity (unless the caller asked for more), with the tables
// and index it names. The caller's struct is left alone: stores reuse
// inputs across pages.
func withCapacity(params any) (_ any, tables []string, index string, ok bool) {
	const total = types.ReturnConsumedCapacityTotal
	set := func(rcc *types.ReturnConsumedCapacity) {
		if *rcc == "" || *rcc == types.ReturnConsumedCapacityNone {
			*rcc = total
		}
	}
	name := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	switch v := params.(type) {
	case *dynamodb.GetItemInput:
		c := *v
		set(&c.ReturnConsumedCapacity)
		return &c, []string{name(c.TableName)}, "", true
	case *dynamodb.PutItemInput:
		c := *v
		set(&c.ReturnConsumedCapacity)
		return &c, []string{name(c.TableName)}, "", true
	case *dynamodb.UpdateItemInput:
		c := *v
		set(&c.ReturnConsumedCapacity)
		return &c, []string{name(c.TableName)}, "", true
	case *dynamodb.DeleteItemInput:
		c := *v
		set(&c.ReturnConsumedCapacity)
		return &c, []string{name(c.TableName)}, "", true
	case *dynamodb.QueryInput:
		c := *v
		set(&c.ReturnConsumedCapacity)
		return &c, []string{name(c.TableName)}, name(c.IndexName), true
	case *dynamodb.ScanInput:
		c := *v
		set(&c.ReturnConsumedCapacity)
		return &c, []string{name(c.TableName)}, name(c.IndexName), true
	case *dynamodb.TransactWriteItemsInput:
		c := *v
		set(&c.ReturnConsumedCapacity)
		for _, it := range c.TransactItems {
			switch {
			case it.Put != nil:
				tables = append(tables, name(it.Put.TableName))
			case it.Update != nil:
				tables = append(tables, name(it.Update.TableName))
			case it.Delete != nil:
				tables = append(tables, name(it.Delete.TableName))
			case it.ConditionCheck != nil:
				tables = append(tables, name(it.ConditionCheck.TableName))
			}
		}
		return &c, distinct(tables), "", true
	case *dynamodb.TransactGetItemsInput:
		c := *v
		set(&c.ReturnConsumedCapacity)
		for _, it := range c.TransactItems {
			if it.Get != nil {
				tables = append(tables, name(it.Get.TableName))
			}
		}
		return &c, distinct(tables), "", true
	case *dynamodb.BatchGetItemInput:
		c := *v
		set(&c.ReturnConsumedCapacity)
		for t := range c.RequestItems {
			tables = append(tables, t)
		}
		return &c, distinct(tables), "", true
	case *dynamodb.BatchWriteItemInput:
		c := *v
		set(&c.ReturnConsumedCapacity)
		for t := range c.RequestItems {
			tables = append(tables, t)
		}
		return &c, distinct(tables), "", true
	}
	return params, nil, "", false
}

func distinct(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

func consumedCapacity(result any) []types.ConsumedCapacity {
	one := func(c *types.ConsumedCapacity) []types.ConsumedCapacity {
		if c == nil {
			return nil
		}
		return []types.ConsumedCapacity{*c}
	}
	switch v := result.(type) {
	case *dynamodb.GetItemOutput:
		return one(v.ConsumedCapacity)
	case *dynamodb.PutItemOutput:
		return one(v.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		return one(v.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		return one(v.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		return one(v.ConsumedCapacity)
	case *dynamodb.ScanOutput:
		return one(v.ConsumedCapacity)
	case *dynamodb.TransactWriteItemsOutput:
		return v.ConsumedCapacity
	case *dynamodb.TransactGetItemsOutput:
		return v.ConsumedCapacity
	case *dynamodb.BatchGetItemOutput:
		return v.ConsumedCapacity
	case *dynamodb.BatchWriteItemOutput:
		return v.ConsumedCapacity
	}
	return nil
}
