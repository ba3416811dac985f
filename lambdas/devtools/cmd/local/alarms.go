package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/dynastack/dynastack/lambdas/devtools/alarmeval"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/localqueue"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/metrics"
)

// EnvAlarmPeriod is the local length of a 300 s alarm period (a Go
// duration): every alarm period of the templates is scaled by it, and so
// are the ages alarms compare with periods (an SQS queue's oldest message,
// a stream consumer's iterator age: a message waiting 4 s with 2s here is
// 600 s old to the alarm). A function's Duration stays real time, as its
// timeout is. Default 10s: an alarm of one period answers within seconds.
const EnvAlarmPeriod = "LOCAL_ALARM_PERIOD"

const (
	defaultAlarmPeriod = 10 * time.Second
	// templatePeriod is the period EnvAlarmPeriod maps (every alarm's).
	templatePeriod = 300
	// evaluationsPerPeriod: CloudWatch evaluates an alarm every minute,
	// five times in a 5-minute period.
	evaluationsPerPeriod = 5
)

// MessageAlarmState is the log line of each alarm's state change.
const MessageAlarmState = "alarm state changed"

// alarms collects what CloudWatch would receive in a deployed stage and
// evaluates the templates' alarms against it: the functions' EMF lines
// (it is a writer of the runner's log), and what AWS publishes for the
// pieces the runner emulates: AWS/Lambda for its invocations, AWS/SQS for
// its queues, AWS/ApiGateway for its HTTP front and AWS/DynamoDB for the
// faults of the proxy between the functions and DynamoDB Local.
type alarms struct {
	log   *slog.Logger
	store alarmeval.Store
	eval  *alarmeval.Evaluator
	clock alarmeval.Clock
	// queues are the local queues by their local name (the QueueName the
	// alarms' dimensions resolve to).
	mu     sync.Mutex
	queues map[string]*localqueue.Queue
	// partial is an unfinished log line.
	partial []byte
	// refused counts the EMF lines that break the specification, by
	// error: CloudWatch would drop their metrics, and an alarm on them
	// would never fire (GET /_local/alarms shows them).
	refused map[string]int
}

func newAlarms() (*alarms, error) {
	period := defaultAlarmPeriod
	if v := os.Getenv(EnvAlarmPeriod); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < templatePeriod*time.Millisecond {
			return nil, fmt.Errorf("%s is %q: use a Go duration of at least 300ms, such as 2s (the local length of a 300 s alarm period)", EnvAlarmPeriod, v)
		}
		period = d
	}
	a := &alarms{clock: alarmeval.Clock{Scale: period / templatePeriod}, queues: map[string]*localqueue.Queue{}, refused: map[string]int{}}
	a.eval = &alarmeval.Evaluator{Store: &a.store, Clock: a.clock}
	return a, nil
}

// localName is the local name of a template's resource: what the runner
// calls a function, queue or API, and what an alarm's Ref or GetAtt of it
// resolves to. Tables have their local table names.
func localName(t *cfntables.Template, id string) string { return t.Stack + "-" + id }

// addTemplate reads t's alarms, with their dimensions resolved to the
// local names (tables: the tables the runner created).
func (a *alarms) addTemplate(t *cfntables.Template, tables map[string]string) error {
	res := make(map[string]json.RawMessage, len(t.Resources))
	for id, r := range t.Resources {
		b, err := json.Marshal(struct {
			Type       string
			Properties json.RawMessage
		}{r.Type, r.Properties})
		if err != nil {
			return err
		}
		res[id] = b
	}
	defs, err := alarmeval.FromTemplate(t.Stack, res, func(id, attr string) (string, error) {
		if _, ok := t.Resources[id]; !ok {
			return "", fmt.Errorf("%s is not a resource of %s", id, t.Stack)
		}
		if name, ok := tables[id]; ok && attr == "" {
			return name, nil
		}
		return localName(t, id), nil
	})
	if err != nil {
		return err
	}
	a.eval.Add(defs...)
	return nil
}

// addQueue makes q's metrics published under its name.
func (a *alarms) addQueue(q *localqueue.Queue) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.queues[q.Name] = q
}

// Write reads the runner's log: every EMF line a function writes becomes
// its measurements, as CloudWatch Logs extracts them. A line that breaks
// the specification is dropped, as CloudWatch drops it.
func (a *alarms) Write(p []byte) (int, error) {
	a.mu.Lock()
	buf := append(a.partial, p...)
	i := bytes.LastIndexByte(buf, '\n')
	var full []byte
	if i >= 0 {
		full, a.partial = buf[:i+1], append([]byte(nil), buf[i+1:]...)
	} else {
		a.partial = buf
	}
	a.mu.Unlock()
	for line := range bytes.Lines(full) {
		if !bytes.Contains(line, []byte(`"_aws"`)) {
			continue
		}
		ms, err := metrics.Parse(line)
		if err != nil {
			if !errors.Is(err, metrics.ErrNotEMF) {
				a.mu.Lock()
				a.refused[err.Error()]++
				a.mu.Unlock()
			}
			continue
		}
		for _, m := range ms {
			at := time.UnixMilli(m.Timestamp)
			for _, v := range m.Values {
				a.store.Put(m.Namespace, m.Name, m.Dimensions, v, at)
			}
		}
	}
	return len(p), nil
}

// invocation publishes AWS/Lambda's Invocations, Errors and Duration of
// one invocation of function (its local name); failed is a function
// error (a crash, a timeout, an error returned to Lambda).
func (a *alarms) invocation(function string, start time.Time, failed bool) {
	now := time.Now()
	dims := map[string]string{"FunctionName": function}
	a.store.Put("AWS/Lambda", "Invocations", dims, 1, now)
	a.store.Put("AWS/Lambda", "Errors", dims, b2f(failed), now)
	a.store.Put("AWS/Lambda", "Duration", dims, float64(now.Sub(start))/float64(time.Millisecond), now)
}

// throttled publishes AWS/Lambda's Throttles of one refused invocation.
func (a *alarms) throttled(function string) {
	a.store.Put("AWS/Lambda", "Throttles", map[string]string{"FunctionName": function}, 1, time.Now())
}

// iteratorAge publishes AWS/Lambda's IteratorAge of a stream batch: how
// old its last record is, in scaled milliseconds.
func (a *alarms) iteratorAge(function string, age time.Duration) {
	a.store.Put("AWS/Lambda", "IteratorAge", map[string]string{"FunctionName": function}, a.scaled(age).Seconds()*1000, time.Now())
}

// scaled is a local duration in alarm time.
func (a *alarms) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * float64(time.Second) / float64(a.clock.Scale))
}

// request publishes AWS/ApiGateway's Count, 4xx, 5xx and Latency of one
// request to the API apiID (its local name).
func (a *alarms) request(apiID string, status int, latency time.Duration) {
	now := time.Now()
	dims := map[string]string{"ApiId": apiID}
	a.store.Put("AWS/ApiGateway", "Count", dims, 1, now)
	a.store.Put("AWS/ApiGateway", "4xx", dims, b2f(status >= 400 && status < 500), now)
	a.store.Put("AWS/ApiGateway", "5xx", dims, b2f(status >= 500), now)
	a.store.Put("AWS/ApiGateway", "Latency", dims, float64(latency)/float64(time.Millisecond), now)
}

// dynamo publishes what DynamoDB counts of a fault the proxy answered: a
// throttle is a read or write throttle event of each table (and of the
// index a Query or Scan names), a server error a SystemErrors of each
// table and the operation.
func (a *alarms) dynamo(ev ddbfault.Event) {
	now := time.Now()
	for _, table := range ev.Tables {
		switch ev.Fault {
		case ddbfault.Throttle:
			name := "ReadThrottleEvents"
			if ev.Write {
				name = "WriteThrottleEvents"
			}
			dims := map[string]string{"TableName": table}
			if ev.Index != "" {
				dims["GlobalSecondaryIndexName"] = ev.Index
			}
			a.store.Put("AWS/DynamoDB", name, dims, 1, now)
		case ddbfault.ServerError:
			a.store.Put("AWS/DynamoDB", "SystemErrors", map[string]string{"TableName": table, "Operation": ev.Operation}, 1, now)
		}
	}
}

// sample publishes AWS/SQS's metrics of every queue, as SQS does each
// minute.
func (a *alarms) sample(now time.Time) {
	a.mu.Lock()
	qs := make([]*localqueue.Queue, 0, len(a.queues))
	for _, q := range a.queues {
		qs = append(qs, q)
	}
	a.mu.Unlock()
	for _, q := range qs {
		visible, oldest := q.Stats()
		dims := map[string]string{"QueueName": q.Name}
		a.store.Put("AWS/SQS", "ApproximateNumberOfMessagesVisible", dims, float64(visible), now)
		a.store.Put("AWS/SQS", "ApproximateAgeOfOldestMessage", dims, a.scaled(oldest).Seconds(), now)
	}
}

// run samples the queues and evaluates every alarm evaluationsPerPeriod
// times a period until ctx ends, logging each state change.
func (a *alarms) run(ctx context.Context) {
	every := a.clock.Period(templatePeriod) / evaluationsPerPeriod
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			a.sample(now)
			for _, tr := range a.eval.Evaluate(now) {
				a.log.Info(MessageAlarmState, "alarm", tr.Alarm.Name, "kind", tr.Alarm.Kind(), "from", tr.From, "to", tr.To, "reason", tr.Reason)
			}
			// The longest alarm reads 3 periods; keep a few more.
			a.store.Prune(now.Add(-10 * a.clock.Period(templatePeriod)))
		}
	}
}

// alarmJSON is one alarm of GET /_local/alarms.
type alarmJSON struct {
	Name        string                `json:"name"`
	Stack       string                `json:"stack"`
	LogicalID   string                `json:"logical_id"`
	Kind        string                `json:"kind"`
	Description string                `json:"description"`
	State       string                `json:"state"`
	Since       *time.Time            `json:"since,omitempty"`
	Reason      string                `json:"reason"`
	Datapoints  []alarmeval.Datapoint `json:"last_datapoints"`
}

// mount serves GET /_local/alarms: every alarm's state, reason and last
// datapoints.
func (a *alarms) mount(mux *http.ServeMux) {
	mux.HandleFunc("GET /_local/alarms", func(w http.ResponseWriter, r *http.Request) {
		out := []alarmJSON{}
		for _, s := range a.eval.Statuses() {
			j := alarmJSON{Name: s.Def.Name, Stack: s.Def.Stack, LogicalID: s.Def.LogicalID, Kind: s.Def.Kind(), Description: s.Def.Description,
				State: s.State, Reason: s.Reason, Datapoints: s.Datapoints}
			if !s.Since.IsZero() {
				since := s.Since.UTC()
				j.Since = &since
			}
			out = append(out, j)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		a.mu.Lock()
		refused := maps.Clone(a.refused)
		a.mu.Unlock()
		api.WriteJSON(w, http.StatusOK, map[string]any{"period": a.clock.Period(templatePeriod).String(), "alarms": out, "refused_emf_lines": refused})
	})
}

// apiMetrics wraps an API's handler: each request is published as API
// Gateway's metrics of the API.
func (a *alarms) apiMetrics(apiID string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() { a.request(apiID, sw.code(), time.Since(start)) }()
		h.ServeHTTP(sw, r)
	})
}

// statusWriter remembers the status a handler answered.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) code() int {
	if s.status == 0 {
		// A handler that panicked or wrote nothing: API Gateway answers 500.
		return http.StatusInternalServerError
	}
	return s.status
}

// apiOf is the logical id of t's HTTP API ("" without one).
func apiOf(t *cfntables.Template) string {
	var ids []string
	for id, r := range t.Resources {
		if r.Type == "AWS::ApiGatewayV2::Api" {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// mountFaults serves POST /_local/faults: {"faults":"throttle:1"} sets the
// fault proxy's fault as FAULTS does at start, {"faults":"latency:1:12s",
// "next":3} gives the next 3 requests that fault whatever the rate, and
// {"faults":""} clears both, so a session or a test can turn a fault on
// and off; "on":"PutItem" keeps the next ones to that DynamoDB operation
// (the stream consumer's polls and other calls pass).
func mountFaults(mux *http.ServeMux, proxy *ddbfault.Proxy, log *slog.Logger) {
	mux.HandleFunc("POST /_local/faults", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Faults *string `json:"faults"`
			Next   int     `json:"next"`
			On     string  `json:"on"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<10)).Decode(&in); err != nil || in.Faults == nil || in.Next < 0 || in.Next > 10000 {
			api.WriteJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": "bad_request", "message": `send {"faults":"<fault>:<rate>"}, e.g. {"faults":"throttle:0.2"}, {"faults":"latency:1:12s","next":3} (the next 3 requests, at most 10000), or {"faults":""} to clear`}})
			return
		}
		fault, rate, delay := ddbfault.Fault(""), 0.0, time.Duration(0)
		if *in.Faults != "" {
			var err error
			if fault, rate, delay, err = ddbfault.ParseSpec(*in.Faults); err != nil {
				api.WriteJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": "bad_request", "message": api.Truncate(err.Error(), 300)}})
				return
			}
		}
		proxy.SetDelay(delay)
		switch {
		case fault == "":
			proxy.Set("", 0)
			proxy.Clear()
		case in.Next > 0:
			proxy.NextOn(in.On, fault, in.Next)
		default:
			proxy.Set(fault, rate)
		}
		log.Warn("fault proxy set", "fault", fault, "rate", rate, "next", in.Next, "on", in.On, "delay", delay.String())
		api.WriteJSON(w, http.StatusOK, map[string]any{"fault": fault, "rate": rate, "next": in.Next})
	})
}

// withConcurrency is Lambda's reserved concurrency in front of an HTTP
// function: at most limit invocations at once (0: no limit); one more is
// throttled (AWS/Lambda Throttles), and API Gateway answers its client
// 500 Internal Server Error, as it does for a throttled Lambda
// integration.
func withConcurrency(limit int, function string, al *alarms, log *slog.Logger, h http.Handler) http.Handler {
	if limit <= 0 {
		return h
	}
	sem := make(chan struct{}, limit)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case sem <- struct{}{}:
			defer func() { <-sem }()
			h.ServeHTTP(w, r)
		default:
			al.throttled(function)
			log.Warn("Rate Exceeded: reserved concurrency reached", "function", function, "reserved_concurrency", limit, "method", r.Method, "path", r.URL.Path)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"message":"Internal Server Error"}`))
		}
	})
}

// reservedConcurrency is a function's ReservedConcurrentExecutions in its
// template (0 without one).
func reservedConcurrency(t *cfntables.Template, logicalID string) int {
	var p struct {
		ReservedConcurrentExecutions int
	}
	if r, ok := t.Resources[logicalID]; ok {
		_ = json.Unmarshal(r.Properties, &p)
	}
	return p.ReservedConcurrentExecutions
}
