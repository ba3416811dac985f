// Queue functions: the contract between an SQS event source mapping with
// ReportBatchItemFailures and the Go function it invokes: a consumer
// handles each record on its own and reports the ones to retry, so one
// failing record never makes SQS redeliver the rest of its batch.
//
// SQS delivers at least once: the same record can arrive again (after a
// visibility timeout, or twice in one batch), and a record that failed
// arrives again until its receive count reaches the queue's redrive
// maximum, after which SQS moves it to the dead-letter queue. Consumers
// therefore make their effect idempotent and read ReceiveCount to know the
// last attempt.

package fn

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/aws/aws-lambda-go/events"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
)

// Outcome is what a consumer did with one record.
type Outcome int

const (
	// Done deletes the record: handled, or nothing more to do.
	Done Outcome = iota
	// Retry reports the record as a batch item failure: SQS delivers it
	// again after the visibility timeout, or moves it to the dead-letter
	// queue once its receive count reaches the redrive maximum.
	Retry
)

// QueueRecordHandler handles one record.
type QueueRecordHandler func(ctx context.Context, rec events.SQSMessage) Outcome

// QueueConsumer is what a queue-driven function builds once per execution
// environment.
type QueueConsumer interface {
	Handle(context.Context, events.SQSEvent) (events.SQSEventResponse, error)
}

// QueueConstructor builds a consumer from its function's environment.
type QueueConstructor func(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (QueueConsumer, error)

// QueueBatch runs h on every record of ev, at most parallel at a time, and
// reports the records to retry. It never returns an error: an invocation
// error would make SQS redeliver the whole batch, successes included.
//
// Each record is handled in the trace its message carries (SQS's
// AWSTraceHeader system attribute, which SNS and SendMessage set from the
// sender's X-Amzn-Trace-Id): its lines log that trace id, and its AWS calls
// send that header. In Lambda the invocation has a trace of its own, which
// X-Ray links to the messages' (one invocation, a batch of several
// traces); the message's is the one that joins the sender's lines.
func QueueBatch(ctx context.Context, ev events.SQSEvent, parallel int, h QueueRecordHandler) events.SQSEventResponse {
	if parallel < 1 {
		parallel = 1
	}
	outcomes := make([]Outcome, len(ev.Records))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, rec := range ev.Records {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			outcomes[i] = h(logx.WithTrace(ctx, rec.Attributes[logx.AWSTraceHeader]), rec)
		}()
	}
	wg.Wait()
	var resp events.SQSEventResponse
	for i, o := range outcomes {
		if o == Retry {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: ev.Records[i].MessageId})
		}
	}
	return resp
}

// ReceiveCount is how many times SQS has handed out rec, this delivery
// included (the ApproximateReceiveCount attribute; 1 when absent).
func ReceiveCount(rec events.SQSMessage) int {
	n, err := strconv.Atoi(rec.Attributes["ApproximateReceiveCount"])
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// String names an outcome in logs.
func (o Outcome) String() string {
	switch o {
	case Done:
		return "done"
	case Retry:
		return "retry"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}
