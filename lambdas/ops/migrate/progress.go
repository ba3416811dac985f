package migrate

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// progress prints one line every ProgressEvery while a migration runs:
// items scanned of the table's (approximate) count, the rate, the ETA and
// the capacity used per second against the budget.
type progress struct {
	r       *runner
	id      string
	total   int64 // DescribeTable's ItemCount: updated about every 6 hours
	done    atomic.Int64
	started time.Time
	base    int64
}

func newProgress(r *runner, id, table string, segs []segment) *progress {
	p := &progress{r: r, id: id, started: r.cfg.Now()}
	for _, s := range segs {
		p.base += int64(s.Scanned)
	}
	p.done.Store(p.base)
	if out, err := r.client.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(table)}); err == nil {
		p.total = aws.ToInt64(out.Table.ItemCount)
	}
	return p
}

func (p *progress) scanned() { p.done.Add(1) }

// Line is the progress line as of now.
func (p *progress) Line() string {
	done := p.done.Load()
	el := p.r.cfg.Now().Sub(p.started)
	rate := 0.0
	if el > 0 {
		rate = float64(done-p.base) / el.Seconds()
	}
	u := p.r.client.Usage()
	of, eta := "?", "?"
	if p.total > 0 {
		of = fmt.Sprintf("≈%d (%d%%)", p.total, min(100, done*100/p.total))
		if rate > 0 {
			eta = (time.Duration(float64(max(p.total-done, 0))/rate) * time.Second).Round(time.Second).String()
		}
	}
	secs := max(el.Seconds(), 0.001)
	return fmt.Sprintf("%s: scanned %d of %s, %.0f items/s, ETA %s; %.1f RCU/s of %.0f, %.1f WCU/s of %.0f, %d throttles",
		p.id, done, of, rate, eta, u.ReadUnits/secs, p.r.cfg.ReadUnits, u.WriteUnits/secs, p.r.cfg.WriteUnits, u.Throttles)
}

// start prints lines until the returned stop is called, then a last one.
func (p *progress) start(ctx context.Context) (stop func()) {
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(p.r.cfg.ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				fmt.Fprintln(p.r.cfg.Progress, p.Line())
			}
		}
	}()
	return func() {
		close(quit)
		<-finished
		fmt.Fprintln(p.r.cfg.Progress, p.Line())
	}
}
