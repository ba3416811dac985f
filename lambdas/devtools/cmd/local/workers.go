package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	rezagentcontract "github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/kmslocal"
	"github.com/dynastack/dynastack/lambdas/devtools/localqueue"
	"github.com/dynastack/dynastack/lambdas/devtools/localtrace"
	"github.com/dynastack/dynastack/lambdas/devtools/ntfysink"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
)

// Local worker settings, from the runner's own environment.
const (
	// EnvScheduleEvery is the local rate of every schedule (a Go
	// duration): the deployed expressions (daily, every few minutes) are
	// too slow to watch. Default 30s; the first run comes 2 s after start.
	EnvScheduleEvery = "LOCAL_SCHEDULE_EVERY"
	// EnvVisibility overrides the queues' visibility timeout, i.e. how
	// long a failed record waits before its retry (the templates' 180 s
	// is right for Lambda, long for a developer). Default 5s.
	EnvVisibility = "LOCAL_VISIBILITY_TIMEOUT"
	// EnvTableSuffix is added to every table name the runner creates, so
	// that several runners can share one DynamoDB Local (its tests run in
	// parallel against make test's; AWS_ENDPOINT_URL_DYNAMODB names it).
	EnvTableSuffix = "LOCAL_TABLE_SUFFIX"

	defaultScheduleEvery = 30 * time.Second
	defaultVisibility    = 5 * time.Second
	firstRunAfter        = 2 * time.Second
)

// workers runs what the templates run besides HTTP APIs: schedules (on a
// local rate), SNS topics (an awsloop fake speaking SNS's protocol) with
// their SQS subscriptions and the event source mappings behind them (the
// localqueue emulation), and an ntfy-compatible sink.
type workers struct {
	log        *slog.Logger
	sns        *awsloop.SNS
	aws        *awsloop.Fakes   // STS, EC2, RDS, ECS for the Nucleus executor
	events     *awsloop.Events  // EventBridge: the buses of the templates
	kms        *kmslocal.Server // Local KMS: the keys of the templates, by alias
	sink       *ntfysink.Sink
	ntfyURL    string
	every      time.Duration
	visibility time.Duration
	alarms     *alarms

	mu       sync.Mutex
	queues   map[string]*localqueue.Queue // template path + logical id → queue
	mappings []*localqueue.Mapping
	// byService are the event source mappings (queue and stream) by
	// their function's service (POST /_local/mappings/{service}).
	byService map[string]mapping
	jobs      map[string]*localJob // service → job
	// topics deliver a message to the queues subscribed to a topic, by
	// its local ARN: POST /_local/topics publishes as another system
	// would.
	topics map[string]func(body string)
}

type localJob struct {
	service, arn string
	function     string // its local name (alarms.go)
	job          fn.Job
	mu           sync.Mutex // one run at a time, as a developer expects
	last         time.Time
	lastErr      string
	runs         int
}

// newWorkers starts the SNS fake and, unless NTFY_URL is set, serves the
// ntfy sink under base/_local/ntfy.
func newWorkers(log *slog.Logger, base string, al *alarms) (*workers, error) {
	w := &workers{log: log, alarms: al, sns: awsloop.NewSNS(), events: awsloop.NewEvents(), queues: map[string]*localqueue.Queue{}, jobs: map[string]*localJob{}, topics: map[string]func(string){},
		every: defaultScheduleEvery, visibility: defaultVisibility}
	for env, d := range map[string]*time.Duration{EnvScheduleEvery: &w.every, EnvVisibility: &w.visibility} {
		if v := os.Getenv(env); v != "" {
			parsed, err := time.ParseDuration(v)
			if err != nil || parsed <= 0 {
				return nil, fmt.Errorf("%s is %q: use a positive Go duration such as 10s", env, v)
			}
			*d = parsed
		}
	}
	if err := w.sns.Start(); err != nil {
		return nil, err
	}
	if err := w.events.Start(); err != nil {
		_ = w.sns.Close()
		return nil, err
	}
	aws, err := awsloop.StartAll()
	if err != nil {
		_ = w.sns.Close()
		_ = w.events.Close()
		return nil, err
	}
	w.aws = aws
	// A real KMS emulator (local-kms, installed by the Makefile): AgenticPM
	// encrypts integration credentials under its stage key's alias.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if w.kms, err = kmslocal.Start(ctx, kmslocal.Options{}); err != nil {
		w.close()
		return nil, err
	}
	log.Info("local kms started", "endpoint", w.kms.Endpoint, "pid", w.kms.PID())
	w.ntfyURL = os.Getenv(rezagentcontract.EnvNtfyURL)
	if w.ntfyURL == "" {
		w.sink = ntfysink.New("", log.With("component", "ntfy-sink"))
		w.ntfyURL = base + "/_local/ntfy"
	}
	return w, nil
}

// queueOf finds t's local queues by logical id.
func (w *workers) queueOf(t *cfntables.Template) func(string) *localqueue.Queue {
	return func(id string) *localqueue.Queue {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.queues[t.Path+"#"+id]
	}
}

func (w *workers) close() {
	_ = w.sns.Close()
	_ = w.events.Close()
	_ = w.aws.Close()
	if w.kms != nil {
		_ = w.kms.Close()
	}
}

// env is what every local function gets on top of its template
// environment: the SNS, EventBridge, STS, EC2, RDS and ECS fakes, Local
// KMS and the ntfy server.
func (w *workers) env() map[string]string {
	env := w.aws.Env()
	env["AWS_ENDPOINT_URL_SNS"], env[awsloop.EndpointEnv("EventBridge")], env[rezagentcontract.EnvNtfyURL] = w.sns.URL(), w.events.URL(), w.ntfyURL
	env[kmslocal.EnvEndpoint] = w.kms.Endpoint
	return env
}

// addTemplate creates the template's queues and routes its topics to the
// queues subscribed to them.
func (w *workers) addTemplate(t *cfntables.Template) error {
	for _, r := range t.Resources {
		if r.Type != "AWS::KMS::Alias" {
			continue
		}
		var p struct{ AliasName string }
		if err := json.Unmarshal(r.Properties, &p); err != nil || p.AliasName == "" {
			return fmt.Errorf("%w: a KMS alias of %s without a literal AliasName", cfntables.ErrUnsupported, t.Stack)
		}
		c, err := w.kms.Client(context.Background())
		if err != nil {
			return err
		}
		arn, err := kmslocal.EnsureKey(context.Background(), c, p.AliasName)
		if err != nil {
			return err
		}
		w.log.Info("kms key", "alias", p.AliasName, "arn", arn)
	}
	for _, r := range t.Resources {
		if r.Type != "AWS::Events::EventBus" {
			continue
		}
		var p struct{ Name string }
		if err := json.Unmarshal(r.Properties, &p); err != nil || p.Name == "" {
			return fmt.Errorf("%w: an event bus of %s without a literal Name", cfntables.ErrUnsupported, t.Stack)
		}
		w.events.AddBus(p.Name)
	}
	qs, err := t.Queues()
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	ids := make([]string, 0, len(qs))
	for id := range qs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		q := localqueue.NewQueue(localName(t, id), w.visibility)
		w.queues[t.Path+"#"+id] = q
		w.alarms.addQueue(q)
	}
	for _, id := range ids {
		q := qs[id]
		if q.DeadLetterQueue != "" {
			lq := w.queues[t.Path+"#"+id]
			lq.MaxReceiveCount, lq.DLQ = q.MaxReceiveCount, w.queues[t.Path+"#"+q.DeadLetterQueue]
		}
	}
	subs, err := t.QueueSubscriptions()
	if err != nil {
		return err
	}
	byTopic := map[string][]*localqueue.Queue{}
	for _, s := range subs {
		if !s.Raw {
			return fmt.Errorf("%w: subscription of %s to %s without RawMessageDelivery (the local runner delivers raw bodies only)", cfntables.ErrUnsupported, s.Queue, s.Topic)
		}
		byTopic[s.Topic] = append(byTopic[s.Topic], w.queues[t.Path+"#"+s.Queue])
	}
	for topic := range t.TopicRefs() {
		targets := byTopic[topic]
		w.sns.AddTopic(cfntables.LocalARN("sns", topic), func(p awsloop.Publication) {
			for _, q := range targets {
				q.SendTraced(p.Message, p.Attributes, p.TraceHeader)
			}
		})
		w.topics[cfntables.LocalARN("sns", topic)] = func(body string) {
			for _, q := range targets {
				q.Send(body, nil)
			}
		}
	}
	return nil
}

// mapping is an event source mapping POST /_local/mappings/{service}
// enables or disables.
type mapping interface {
	SetEnabled(bool)
	// Source is what it reads (a queue's or a table's local name).
	Source() string
}

type queueMapping struct{ *localqueue.Mapping }

func (q queueMapping) Source() string { return q.Queue.Name }

// addMapping makes m the mapping of service's function.
func (w *workers) addMapping(service string, m mapping) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byService == nil {
		w.byService = map[string]mapping{}
	}
	w.byService[service] = m
}

// addQueueConsumer attaches fn's consumer to the queue its mapping names.
func (w *workers) addQueueConsumer(ctx context.Context, t *cfntables.Template, fn cfntables.Function, ctor fn.QueueConstructor, getenv func(string) string) error {
	ms, err := t.QueueMappings()
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.Function != fn.LogicalID {
			continue
		}
		if !m.ReportBatchItemFailures {
			return fmt.Errorf("%w: mapping of %s to %s without ReportBatchItemFailures", cfntables.ErrUnsupported, m.Queue, fn.LogicalID)
		}
		c, err := ctor(ctx, getenv, ddbrecord.ClientOptions(getenv)...)
		if err != nil {
			return err
		}
		w.mu.Lock()
		local := localName(t, fn.LogicalID)
		handle := func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			start := time.Now()
			resp, err := c.Handle(ctx, ev)
			w.alarms.invocation(local, start, err != nil || ctx.Err() != nil)
			return resp, err
		}
		lm := &localqueue.Mapping{Queue: w.queues[t.Path+"#"+m.Queue], Handler: handle, BatchSize: m.BatchSize,
			MaxConcurrency: m.MaxConcurrency, Timeout: t.Timeout(fn.LogicalID), Logger: w.log.With("function", fn.LogicalID, "service", fn.Service())}
		w.mappings = append(w.mappings, lm)
		w.mu.Unlock()
		w.addMapping(fn.Service(), queueMapping{lm})
		return nil
	}
	return fmt.Errorf("function %s (%s) has no SQS event source mapping", fn.LogicalID, fn.Service())
}

// addJob registers fn's scheduled job, if a schedule of t targets it.
func (w *workers) addJob(ctx context.Context, t *cfntables.Template, fn cfntables.Function, ctor fn.JobConstructor, getenv func(string) string) error {
	ss, err := t.Schedules()
	if err != nil {
		return err
	}
	for _, s := range ss {
		if s.Function != fn.LogicalID {
			continue
		}
		job, err := ctor(ctx, getenv, ddbrecord.ClientOptions(getenv)...)
		if err != nil {
			return err
		}
		w.mu.Lock()
		w.jobs[fn.Service()] = &localJob{service: fn.Service(), function: localName(t, fn.LogicalID), arn: cfntables.LocalARN("scheduler", "schedule/default/"+t.Stack+"-"+s.LogicalID), job: job}
		w.mu.Unlock()
		return nil
	}
	return fmt.Errorf("function %s (%s) has no schedule", fn.LogicalID, fn.Service())
}

// start runs the mappings and the local schedules until ctx ends.
func (w *workers) start(ctx context.Context) {
	for _, m := range w.mappings {
		go m.Run(ctx)
	}
	for _, j := range w.jobs {
		go func() {
			t := time.NewTimer(firstRunAfter)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case now := <-t.C:
					w.run(ctx, j, now)
					t.Reset(w.every)
				}
			}
		}()
	}
}

// run invokes a job for the fire time at (to the second, as Scheduler's).
func (w *workers) run(ctx context.Context, j *localJob, at time.Time) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	ev := fn.ScheduleEvent{ScheduleARN: j.arn, ScheduledTime: at.UTC().Truncate(time.Second), ExecutionID: fmt.Sprintf("local-%d", at.UnixNano()), AttemptNumber: 1}
	start := time.Now()
	// A new trace per run, as Lambda's active tracing starts one for an
	// invocation by EventBridge Scheduler.
	err := fn.JobHandler(j.job, w.log.With("service", j.service))(logx.WithInvocationTrace(ctx, localtrace.New()), ev)
	w.alarms.invocation(j.function, start, err != nil)
	j.last, j.runs, j.lastErr = ev.ScheduledTime, j.runs+1, ""
	if err != nil {
		j.lastErr = err.Error()
	}
	return err
}

// mount serves the local control routes.
func (w *workers) mount(mux *http.ServeMux) {
	if w.sink != nil {
		mux.Handle("/_local/ntfy/", http.StripPrefix("/_local/ntfy", w.sink))
		mux.Handle("GET /_local/ntfy", w.sink)
	}
	mux.HandleFunc("GET /_local/schedules", func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		out := []map[string]any{}
		for _, j := range w.jobs {
			out = append(out, map[string]any{"service": j.service, "schedule_arn": j.arn, "runs": j.runs, "last_scheduled_time": j.last, "last_error": j.lastErr,
				"run_now": "POST /_local/schedules/" + j.service})
		}
		w.mu.Unlock()
		sort.Slice(out, func(a, b int) bool { return out[a]["service"].(string) < out[b]["service"].(string) })
		api.WriteJSON(rw, http.StatusOK, map[string]any{"every": w.every.String(), "schedules": out})
	})
	mux.HandleFunc("POST /_local/schedules/{service}", func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		j, ok := w.jobs[r.PathValue("service")]
		w.mu.Unlock()
		if !ok {
			api.WriteJSON(rw, http.StatusNotFound, map[string]any{"error": map[string]any{"code": "not_found", "message": fmt.Sprintf("no scheduled service %q: GET /_local/schedules lists them", api.Truncate(r.PathValue("service"), 64))}})
			return
		}
		at := time.Now()
		if err := w.run(r.Context(), j, at); err != nil {
			api.WriteJSON(rw, http.StatusBadGateway, map[string]any{"service": j.service, "scheduled_time": at.UTC().Truncate(time.Second), "error": err.Error()})
			return
		}
		api.WriteJSON(rw, http.StatusOK, map[string]any{"service": j.service, "scheduled_time": at.UTC().Truncate(time.Second)})
	})
	// The sink's next answers fail: {"status":401,"count":40} (an expired
	// token), {"delay":"13s","count":1} (a hung server); {"count":0} drops
	// the failures no request met.
	mux.HandleFunc("POST /_local/ntfy-faults", func(rw http.ResponseWriter, r *http.Request) {
		var in struct {
			Status int    `json:"status"`
			Delay  string `json:"delay"`
			Count  int    `json:"count"`
		}
		err := json.NewDecoder(http.MaxBytesReader(rw, r.Body, 1<<10)).Decode(&in)
		var delay time.Duration
		if err == nil && in.Delay != "" {
			delay, err = time.ParseDuration(in.Delay)
		}
		if err == nil && w.sink != nil && in.Count == 0 {
			w.sink.Clear()
			api.WriteJSON(rw, http.StatusOK, map[string]any{"queued": 0})
			return
		}
		if w.sink == nil || err != nil || in.Count < 1 || in.Count > 1000 || (in.Status != 0 && (in.Status < 400 || in.Status > 599)) || delay < 0 {
			api.WriteJSON(rw, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": "bad_request",
				"message": `send {"status":401,"count":40} or {"delay":"13s","count":1} (status 400-599, count 1-1000; only with the local sink, NTFY_URL unset)`}})
			return
		}
		fs := make([]ntfysink.Fault, in.Count)
		for i := range fs {
			fs[i] = ntfysink.Fault{Status: in.Status, Delay: delay}
		}
		w.sink.FailNext(fs...)
		api.WriteJSON(rw, http.StatusOK, map[string]any{"queued": in.Count})
	})
	// A message on a topic from another publisher than the functions
	// (a body the consumer cannot read: a poison message):
	// {"topic_arn":"arn:aws:sns:…","message":"…"}.
	mux.HandleFunc("POST /_local/topics", func(rw http.ResponseWriter, r *http.Request) {
		var in struct {
			TopicARN string `json:"topic_arn"`
			Message  string `json:"message"`
		}
		err := json.NewDecoder(http.MaxBytesReader(rw, r.Body, 256<<10)).Decode(&in)
		w.mu.Lock()
		deliver, ok := w.topics[in.TopicARN]
		w.mu.Unlock()
		if err != nil || !ok || in.Message == "" {
			api.WriteJSON(rw, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": "bad_request", "message": `send {"topic_arn":"<a topic's local ARN>","message":"<body>"}`}})
			return
		}
		deliver(in.Message)
		api.WriteJSON(rw, http.StatusOK, map[string]any{"published": in.TopicARN})
	})
	// A target account's role that refuses the executor, as a trust
	// policy that no longer names it does: {"role_arn":"arn:aws:iam::…"}.
	mux.HandleFunc("POST /_local/sts/deny", func(rw http.ResponseWriter, r *http.Request) {
		var in struct {
			RoleARN string `json:"role_arn"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(rw, r.Body, 4<<10)).Decode(&in); err != nil || in.RoleARN == "" {
			api.WriteJSON(rw, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": "bad_request", "message": `send {"role_arn":"arn:aws:iam::<account>:role/<name>"}`}})
			return
		}
		w.aws.STS.Deny(in.RoleARN)
		w.log.Warn("sts: AssumeRole of this role is denied from now on", "role_arn", in.RoleARN)
		api.WriteJSON(rw, http.StatusOK, map[string]any{"denied": in.RoleARN})
	})
	mux.HandleFunc("GET /_local/events", func(rw http.ResponseWriter, r *http.Request) {
		api.WriteJSON(rw, http.StatusOK, map[string]any{"events": w.events.Events()})
	})
	// A consumer's event source mapping disabled or enabled, as
	// `aws lambda update-event-source-mapping --no-enabled` (or a
	// function's reserved concurrency set to 0) stops it in AWS: a
	// queue's messages stay and age, and SQS keeps publishing their age;
	// a stream's records wait, and Lambda publishes no IteratorAge until
	// it invokes again. {"enabled":false} on
	// POST /_local/mappings/rezagent-processor (or stak-stream).
	mux.HandleFunc("POST /_local/mappings/{service}", func(rw http.ResponseWriter, r *http.Request) {
		var in struct {
			Enabled *bool `json:"enabled"`
		}
		err := json.NewDecoder(http.MaxBytesReader(rw, r.Body, 1<<10)).Decode(&in)
		w.mu.Lock()
		m, ok := w.byService[r.PathValue("service")]
		names := slices.Sorted(maps.Keys(w.byService))
		w.mu.Unlock()
		if !ok {
			api.WriteJSON(rw, http.StatusNotFound, map[string]any{"error": map[string]any{"code": "not_found", "message": api.Truncate(fmt.Sprintf("no consumer %q with an event source mapping; those with one: %v", r.PathValue("service"), names), 300)}})
			return
		}
		if err != nil || in.Enabled == nil {
			api.WriteJSON(rw, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": "bad_request", "message": `send {"enabled":false} or {"enabled":true}`}})
			return
		}
		m.SetEnabled(*in.Enabled)
		w.log.Warn("event source mapping set", "service", r.PathValue("service"), "source", m.Source(), "enabled", *in.Enabled)
		api.WriteJSON(rw, http.StatusOK, map[string]any{"service": r.PathValue("service"), "source": m.Source(), "enabled": *in.Enabled})
	})
	mux.HandleFunc("GET /_local/queues", func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		out := map[string]int{}
		for _, q := range w.queues {
			out[q.Name] = q.Len()
		}
		w.mu.Unlock()
		api.WriteJSON(rw, http.StatusOK, map[string]any{"visibility_timeout": w.visibility.String(), "depth": out})
	})
}

// describe is the second ready line: what runs besides the APIs and where
// to look.
func (w *workers) describe(base string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.jobs) == 0 && len(w.mappings) == 0 {
		return ""
	}
	names := make([]string, 0, len(w.jobs))
	for n := range w.jobs {
		names = append(names, n)
	}
	sort.Strings(names)
	line := fmt.Sprintf("workers: schedules %v every %s (run one now: curl -XPOST %s/_local/schedules/<service>), %d queue consumer(s), EventBridge events at %s/_local/events", names, w.every, base, len(w.mappings), base)
	if w.sink != nil {
		line += fmt.Sprintf(", notifications at %s/_local/ntfy", base)
	} else {
		line += ", notifications to " + w.ntfyURL
	}
	return line
}
