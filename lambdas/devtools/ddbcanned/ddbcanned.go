// Package ddbcanned measures the CPU a DynamoDB call costs in process:
// its Transport records a call's HTTP exchanges once (against DynamoDB
// Local) and then answers every repetition with the recorded bytes, so a
// benchmark over it times the caller's own work — routing, validation,
// marshalling, the SDK's serialization and signing — with no network and
// no database in the loop.
//
// Pair benchmarks an API operation through its handler beside the raw SDK
// call doing the same DynamoDB work, both over a canned transport. It is
// dev-only: Lambda binaries never link it.
package ddbcanned

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"
)

// exchange is one recorded answer.
type exchange struct {
	target string // X-Amz-Target of the request, e.g. DynamoDB_20120810.GetItem
	status int
	header http.Header
	body   []byte
	// strs are the quoted strings of the request, for telling apart the
	// answers to requests that were in flight together.
	strs map[string]bool
}

// Transport is an aws.HTTPClient. Recording, it passes requests to next
// and keeps each answer; replaying, it answers the recorded exchanges in
// order, round and round, failing a request whose operation is not the
// one recorded at that place.
type Transport struct {
	next aws.HTTPClient

	mu        sync.Mutex
	recording bool
	tape      []exchange
	pos       int
	served    int // requests answered while replaying
	// Requests in flight while recording; concurrent once they overlapped.
	// A concurrent tape answers each request with the unused exchange of
	// the lap whose request it resembles most, not in order: the order
	// of concurrent requests changes from run to run.
	inflight   int
	concurrent bool
	used       []bool
	// Bytes sent and received while replaying, for per-operation figures.
	reqBytes, respBytes int64
}

// New returns a transport recording through next.
func New(next aws.HTTPClient) *Transport { return &Transport{next: next, recording: true} }

// Replay stops recording; from now on the tape answers.
func (t *Transport) Replay() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.tape) == 0 {
		return fmt.Errorf("ddbcanned: nothing recorded")
	}
	t.recording, t.pos, t.served, t.reqBytes, t.respBytes = false, 0, 0, 0, 0
	return nil
}

// Tape is what a transport recorded: one operation's exchanges, in order.
type Tape struct {
	exchanges  []exchange
	concurrent bool
}

// Len is the number of exchanges.
func (tp Tape) Len() int { return len(tp.exchanges) }

// Record starts a new tape: what was recorded so far is dropped, and from
// now on requests pass to next and their answers are kept. A recording
// transport serves fixtures too; Record before the operation to measure.
func (t *Transport) Record() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.recording, t.tape, t.pos, t.concurrent = true, nil, 0, false
}

// Tape is what t has recorded since New or the last Record.
func (t *Transport) Tape() Tape {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Tape{exchanges: slices.Clone(t.tape), concurrent: t.concurrent}
}

// Play is a transport that replays tape, round and round. An empty tape
// answers every request with an error: the operation it was recorded for
// made no DynamoDB request.
func Play(tape Tape) *Transport {
	return &Transport{tape: tape.exchanges, concurrent: tape.concurrent, used: make([]bool, len(tape.exchanges))}
}

// laps checks that replaying has answered whole tapes only, ops of them:
// an operation that made fewer or more requests than it did recording
// would otherwise be timed on the wrong answers.
func (t *Transport) laps(ops int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.served != ops*len(t.tape) {
		return fmt.Errorf("ddbcanned: %d operations made %d DynamoDB requests; recorded: %d each", ops, t.served, len(t.tape))
	}
	return nil
}

// Calls is how many exchanges the tape holds (one operation's requests).
func (t *Transport) Calls() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.tape)
}

// Bytes is what replaying has sent and received so far.
func (t *Transport) Bytes() (sent, received int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.reqBytes, t.respBytes
}

// Do implements aws.HTTPClient.
func (t *Transport) Do(req *http.Request) (*http.Response, error) {
	t.mu.Lock()
	recording := t.recording
	t.mu.Unlock()
	target := req.Header.Get("X-Amz-Target")
	if recording {
		var sent []byte
		if req.Body != nil {
			var err error
			if sent, err = io.ReadAll(req.Body); err != nil {
				return nil, err
			}
			req.Body.Close()
			req.Body = io.NopCloser(bytes.NewReader(sent))
		}
		t.mu.Lock()
		t.inflight++
		t.concurrent = t.concurrent || t.inflight > 1
		t.mu.Unlock()
		resp, err := t.next.Do(req)
		t.mu.Lock()
		t.inflight--
		t.mu.Unlock()
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		t.mu.Lock()
		t.tape = append(t.tape, exchange{target: target, status: resp.StatusCode, header: resp.Header.Clone(), body: body, strs: quoted(sent)})
		t.mu.Unlock()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	// Reading the body is what a real transport does with it.
	var n int64
	var strs map[string]bool
	if t.concurrent {
		sent, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		n, strs = int64(len(sent)), quoted(sent)
	} else {
		var err error
		if n, err = io.Copy(io.Discard, req.Body); err != nil {
			return nil, err
		}
	}
	req.Body.Close()
	t.mu.Lock()
	if len(t.tape) == 0 {
		t.mu.Unlock()
		return nil, fmt.Errorf("ddbcanned: request %s where none was recorded", target)
	}
	t.served++
	ex := t.tape[t.pos]
	if t.concurrent {
		ex = t.tape[t.closest(target, strs)]
	}
	t.pos = (t.pos + 1) % len(t.tape)
	t.reqBytes += n
	t.respBytes += int64(len(ex.body))
	t.mu.Unlock()
	if ex.target != target {
		return nil, fmt.Errorf("ddbcanned: request %s where %s was recorded", target, ex.target)
	}
	return &http.Response{StatusCode: ex.status, Status: http.StatusText(ex.status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: ex.header, Body: io.NopCloser(bytes.NewReader(ex.body)), ContentLength: int64(len(ex.body)), Request: req}, nil
}

// closest marks as used, and returns, the unused exchange of this lap of
// the tape for target whose request shares the most quoted strings with
// strs. t.mu is held.
func (t *Transport) closest(target string, strs map[string]bool) int {
	if t.pos == 0 {
		clear(t.used)
	}
	best, score := -1, -1
	for i, ex := range t.tape {
		if t.used[i] || ex.target != target {
			continue
		}
		n := 0
		for s := range strs {
			if ex.strs[s] {
				n++
			}
		}
		if n > score {
			best, score = i, n
		}
	}
	if best < 0 {
		best = t.pos // no unused exchange for target: the check of the target fails
	}
	t.used[best] = true
	return best
}

// quoted is the set of quoted strings of a JSON text.
func quoted(b []byte) map[string]bool {
	out := map[string]bool{}
	parts := bytes.Split(b, []byte{'"'})
	for i := 1; i < len(parts); i += 2 {
		out[string(parts[i])] = true
	}
	return out
}

// Client is a copy of c whose requests go through a new recording
// transport.
func Client(c *dynamodb.Client) (*dynamodb.Client, *Transport) {
	o := c.Options()
	t := New(o.HTTPClient)
	return dynamodb.New(o, func(o *dynamodb.Options) { o.HTTPClient = t }), t
}

// LambdaCPUShare is the share of a vCPU a 256 MB function gets: Lambda
// gives CPU in proportion to memory, one vCPU at 1,769 MB
// (docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html). CPU-bound
// time at 256 MB is this machine's time divided by it, assuming one of its
// cores is as fast as a Lambda vCPU.
const LambdaCPUShare = 256.0 / 1769.0

// Pair runs b.Run("canned/handler") and b.Run("canned/rawsdk"): each side
// gets a client of base over its own canned transport, makes its operation
// from it and runs it once to record; then each is timed replaying,
// interleaved with the other as in PairTape. Each reports the bytes it
// sent and received per operation, its CPU time per operation, and that
// CPU time at 256 MB.
func Pair(b *testing.B, base *dynamodb.Client, handler, raw func(b *testing.B, c *dynamodb.Client) func()) {
	b.Helper()
	var (
		ops [2]func()
		ts  [2]*Transport
	)
	for i, mk := range []func(b *testing.B, c *dynamodb.Client) func(){handler, raw} {
		c, t := Client(base)
		ops[i] = mk(b, c)
		ops[i]()
		require.NoError(b, t.Replay())
		ts[i] = t
	}
	for me, name := range sides {
		b.Run("canned/"+name, func(b *testing.B) { interleaved(b, ops, ts, me) })
	}
}

var sides = []string{"handler", "rawsdk"}

// PairTape runs b.Run("handler") and b.Run("rawsdk") over one recorded
// tape: each side gets a client of base replaying its own copy of tape and
// makes its operation from it. Each sub-benchmark times its own side in
// Rounds blocks, running the other side's operation, untimed, between
// them: on a shared machine whose load drifts, both sides then meet the
// same load, which sub-benchmarks run one after the other do not. A block
// is long enough for the garbage collections its own allocations cause to
// fall mostly within it.
func PairTape(b *testing.B, base *dynamodb.Client, tape Tape, handler, raw func(b *testing.B, c *dynamodb.Client) func()) {
	b.Helper()
	makes := [2]func(b *testing.B, c *dynamodb.Client) func(){handler, raw}
	for me, name := range sides {
		b.Run(name, func(b *testing.B) {
			var (
				ops [2]func()
				ts  [2]*Transport
			)
			for i, mk := range makes {
				t := Play(tape)
				c := dynamodb.New(base.Options(), func(o *dynamodb.Options) { o.HTTPClient = t })
				ops[i] = mk(b, c)
				ops[i]()
				require.NoError(b, t.laps(1))
				t.mu.Lock()
				t.served, t.pos, t.reqBytes, t.respBytes = 0, 0, 0, 0
				t.mu.Unlock()
				ts[i] = t
			}
			interleaved(b, ops, ts, me)
		})
	}
}

// interleaved times ops[me], replaying on ts[me], in Rounds blocks with
// ops[other] run untimed between them, and reports its figures.
func interleaved(b *testing.B, ops [2]func(), ts [2]*Transport, me int) {
	b.Helper()
	other := 1 - me
	for _, t := range ts {
		t.mu.Lock()
		t.served, t.pos, t.reqBytes, t.respBytes = 0, 0, 0, 0
		t.mu.Unlock()
	}
	b.ReportAllocs()
	b.ResetTimer()
	var cpu time.Duration
	block := max(b.N/Rounds, 1)
	for done := 0; done < b.N; {
		n := min(block, b.N-done)
		b.StopTimer()
		for range n {
			ops[other]()
		}
		b.StartTimer()
		cpu0 := cpuTime()
		for range n {
			ops[me]()
		}
		cpu += cpuTime() - cpu0
		done += n
	}
	b.StopTimer()
	for i, t := range ts {
		require.NoError(b, t.laps(b.N), sides[i])
	}
	report(b, ts[me], cpu)
}

// Rounds is how many blocks Pair and PairTape time each side in. Blocks
// of tens of operations alternate every few milliseconds, so the load of
// other jobs falls on both sides alike. The CPU time is the average over
// all blocks, garbage collections included: the lowest block alone would
// favour the side that allocates less, whose blocks more often hold no
// collection at all (measured: the raw side's best block was 60–75% of its
// average, the handler's 80–90%).
const Rounds = 10

// report reports a side's figures: cpu is the process's CPU time over
// b.N operations replaying on t.
func report(b *testing.B, t *Transport, cpu time.Duration) {
	sent, received := t.Bytes()
	n := float64(b.N)
	// The process's CPU time (user and system, the GC's included) per
	// op: on a shared machine wall time also counts the waits for a
	// core, CPU time only the work.
	b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/op")
	b.ReportMetric(float64(sent)/n, "sentB/op")
	b.ReportMetric(float64(received)/n, "recvB/op")
	b.ReportMetric(float64(t.Calls()), "calls/op")
	b.ReportMetric(float64(cpu.Nanoseconds())/n/LambdaCPUShare/1e3, "µs@256MB/op")
}

// cpuTime is the CPU time the process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
