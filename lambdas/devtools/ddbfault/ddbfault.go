// Package ddbfault is a loopback proxy in front of a DynamoDB endpoint
// (DynamoDB Local) that injects the faults DynamoDB really produces, so
// tests see how functions behave when it throttles, fails or loses an
// answer: every request is forwarded untouched unless a fault is drawn,
// and a drawn fault is answered in DynamoDB's own wire format (JSON 1.0
// error bodies), which the SDK parses and retries as it would in AWS.
package ddbfault

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Fault is what the proxy does to a request it draws.
type Fault string

const (
	// Throttle answers 400 ProvisionedThroughputExceededException, as a
	// table past its on-demand maximum does.
	Throttle Fault = "throttle"
	// ServerError answers 500 InternalServerError.
	ServerError Fault = "5xx"
	// DropAnswer forwards the request, lets DynamoDB apply it, then closes
	// the connection instead of answering: the client cannot tell whether
	// the write happened.
	DropAnswer Fault = "drop"
	// Latency holds the request for the proxy's Delay before forwarding
	// it: a slow dependency, to watch a function's duration reach its
	// timeout.
	Latency Fault = "latency"
	// Garbage answers 200 with a body that is not DynamoDB's JSON: a
	// dependency answering what the client cannot read, which no retry
	// repairs (the function's error is a 500 of its own).
	Garbage Fault = "garbage"
)

// DefaultDelay is Latency's delay when none is given.
const DefaultDelay = time.Second

// Event is a fault the proxy answered, as DynamoDB's CloudWatch metrics
// count it: a throttle (ReadThrottleEvents or WriteThrottleEvents of each
// table and index the request names) or a server error (SystemErrors by
// table and operation).
type Event struct {
	Fault     Fault
	Operation string
	// Write is true for a write operation (a throttle is a write throttle).
	Write bool
	// Tables are the tables the request names; Index the index of a
	// Query or Scan ("" for the table).
	Tables []string
	Index  string
}

// Proxy is a running fault proxy.
type Proxy struct {
	// URL is the endpoint to give the client (AWS_ENDPOINT_URL_DYNAMODB).
	URL string

	srv      *httptest.Server
	mu       sync.Mutex
	fault    Fault
	rate     float64
	next     []planned
	onDrop   func()
	delay    time.Duration
	observe  func(Event)
	requests atomic.Int64
	faults   atomic.Int64
}

// Start runs a proxy forwarding to target (an http:// endpoint) with no
// fault set. Close stops it.
func Start(target string) (*Proxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	p := &Proxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		// The JSON protocol names the operation in X-Amz-Target:
		// DynamoDB_20120810.PutItem.
		_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
		fault := p.draw(op)
		if fault == Throttle || fault == ServerError {
			p.report(fault, op, r)
		}
		switch fault {
		case Garbage:
			p.faults.Add(1)
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			_, _ = w.Write([]byte(`{"Items": [`))
			return
		case Latency:
			p.faults.Add(1)
			select {
			case <-time.After(p.latency()):
			case <-r.Context().Done():
				return
			}
		case Throttle:
			p.faults.Add(1)
			answer(w, http.StatusBadRequest, "ProvisionedThroughputExceededException",
				"The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.")
			return
		case ServerError:
			p.faults.Add(1)
			answer(w, http.StatusInternalServerError, "InternalServerError", "Internal server error")
			return
		case DropAnswer:
			p.faults.Add(1)
			rp.ServeHTTP(discard{header: http.Header{}}, r)
			if f := p.afterDrop(); f != nil {
				f()
			}
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					conn.Close()
					return
				}
			}
			panic(http.ErrAbortHandler)
		}
		rp.ServeHTTP(w, r)
	}))
	p.URL = p.srv.URL
	return p, nil
}

// SetDelay sets Latency's delay.
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = d
}

func (p *Proxy) latency() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.delay <= 0 {
		return DefaultDelay
	}
	return p.delay
}

// Observe calls f with each throttle and server error the proxy answers
// (nil: none), as DynamoDB counts them in its CloudWatch metrics: the
// local runner's alarms read them.
func (p *Proxy) Observe(f func(Event)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.observe = f
}

// report reads the tables a request names (its body is read and put back)
// and passes the event to the observer.
func (p *Proxy) report(fault Fault, op string, r *http.Request) {
	p.mu.Lock()
	f := p.observe
	p.mu.Unlock()
	if f == nil {
		return
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return
	}
	var req struct {
		TableName     string
		IndexName     string
		RequestItems  map[string]json.RawMessage
		TransactItems []map[string]struct{ TableName string }
	}
	_ = json.Unmarshal(body, &req)
	ev := Event{Fault: fault, Operation: op, Write: writes[op], Index: req.IndexName}
	seen := map[string]bool{}
	add := func(t string) {
		if t != "" && !seen[t] {
			seen[t] = true
			ev.Tables = append(ev.Tables, t)
		}
	}
	add(req.TableName)
	for t := range req.RequestItems {
		add(t)
	}
	for _, item := range req.TransactItems {
		for _, x := range item {
			add(x.TableName)
		}
	}
	sort.Strings(ev.Tables)
	f(ev)
}

// Set makes the proxy answer a share rate (0 to 1) of the requests from
// now on with fault; rate 0 forwards everything.
func (p *Proxy) Set(fault Fault, rate float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fault, p.rate = fault, rate
}

// planned is a fault for the next request of an operation ("" any).
type planned struct {
	op    string
	fault Fault
}

// Next makes the next n requests meet fault, whatever the rate says: the
// test of one write whose answer is lost.
func (p *Proxy) Next(fault Fault, n int) { p.NextOn("", fault, n) }

// AnyWrite, given to NextOn as the operation, matches every write:
// PutItem, UpdateItem, DeleteItem, TransactWriteItems, BatchWriteItem.
const AnyWrite = "*write"

var writes = map[string]bool{"PutItem": true, "UpdateItem": true, "DeleteItem": true, "TransactWriteItems": true, "BatchWriteItem": true}

// NextOn is Next for requests of one DynamoDB operation only ("PutItem",
// "TransactWriteItems", …, or AnyWrite); requests of other operations
// pass.
func (p *Proxy) NextOn(op string, fault Fault, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range n {
		p.next = append(p.next, planned{op, fault})
	}
}

// AfterDrop runs f after each write whose answer the proxy drops, once
// DynamoDB applied it and before the client learns the connection closed:
// the moment another request's write can land between the lost answer and
// the SDK's retry. nil removes it.
func (p *Proxy) AfterDrop(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onDrop = f
}

func (p *Proxy) afterDrop() func() {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.onDrop
}

// Clear drops the faults planned by Next and NextOn that no request met.
func (p *Proxy) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next = nil
}

// Requests is how many requests reached the proxy, Faults how many of them
// it answered with a fault.
func (p *Proxy) Requests() int { return int(p.requests.Load()) }

// Faults is how many requests the proxy answered with a fault.
func (p *Proxy) Faults() int { return int(p.faults.Load()) }

// Close stops the proxy.
func (p *Proxy) Close() { p.srv.Close() }

func (p *Proxy) draw(op string) Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.next) > 0 && (p.next[0].op == "" || p.next[0].op == op || p.next[0].op == AnyWrite && writes[op]) {
		f := p.next[0].fault
		p.next = p.next[1:]
		return f
	}
	if p.rate > 0 && rand.Float64() < p.rate {
		return p.fault
	}
	return ""
}

// answer writes a DynamoDB (JSON 1.0 protocol) error.
func answer(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("x-amzn-RequestId", "ddbfault")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`{"__type":"com.amazonaws.dynamodb.v20120810#` + code + `","message":"` + msg + `"}`))
}

// discard is where a dropped answer goes.
type discard struct{ header http.Header }

func (d discard) Header() http.Header         { return d.header }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) WriteHeader(int)             {}

// EnvFaults is the variable that turns faults on for a whole `make dev`
// session: "<fault>:<rate>", e.g. "throttle:0.2", "5xx:1", "drop:0.05" or
// "garbage:0.1",
// and "latency:<rate>:<delay>" ("latency:0.1:9s"; the delay defaults to
// DefaultDelay).
const EnvFaults = "FAULTS"

// Parse reads an EnvFaults value, naming the value and the fix of a bad
// one.
func Parse(v string) (Fault, float64, error) {
	f, r, _, err := ParseSpec(v)
	return f, r, err
}

// ParseSpec is Parse with Latency's delay (0 for other faults).
func ParseSpec(v string) (Fault, float64, time.Duration, error) {
	name, rest, ok := strings.Cut(v, ":")
	f := Fault(name)
	rate, delay, hasDelay := strings.Cut(rest, ":")
	r, err := strconv.ParseFloat(rate, 64)
	var d time.Duration
	if hasDelay && f == Latency {
		var derr error
		if d, derr = time.ParseDuration(delay); derr != nil || d <= 0 {
			err = fmt.Errorf("delay %q", delay)
		}
	}
	if !ok || err != nil || r < 0 || r > 1 || (f != Throttle && f != ServerError && f != DropAnswer && f != Latency && f != Garbage) || (hasDelay && f != Latency) {
		return "", 0, 0, fmt.Errorf("%s=%q: write <fault>:<rate> with a fault of %s, %s, %s, %s or %s and a rate from 0 to 1, e.g. throttle:0.2 (latency:<rate>:<delay>, e.g. latency:0.1:9s)",
			EnvFaults, v, Throttle, ServerError, DropAnswer, Garbage, Latency)
	}
	return f, r, d, nil
}
