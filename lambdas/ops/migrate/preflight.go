package migrate

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Need is the pre-flight's verdict on one migration.
type Need struct {
	ID string
	// Done: recorded as done.
	Done bool
	// InProgress: a run started it and stopped before the end (its
	// checkpoint is kept, not done). The sample, read from the start of
	// the table, is then mostly items that run already changed: it says
	// nothing about the rest, so the migration is needed whatever the
	// sample shows.
	InProgress bool
	// Scanned is what the stopped runs scanned so far (InProgress).
	Scanned int
	// Sampled items of its table, Needed of them need it, Example one.
	Sampled, Needed int
	Example         string
}

// Pending tells whether the migration still has to run: not done, and
// either in progress or needed by the sample.
func (n Need) Pending() bool { return !n.Done && (n.InProgress || n.Needed > 0) }

// Preflight reads up to sample items of each table the migrations scan
// (one budgeted Scan from the start of the table) and says which
// migrations they need (`make migrate … CHECK=1`). It writes nothing. The
// answer is about the sample: a migration not needed there may still be
// needed further on, which the dry run counts exactly. A migration a run
// started and did not finish is in progress, so needed, whatever the
// sample shows (that run changed the sample's items first).
func Preflight(ctx context.Context, cfg Config, migs []Migration, sample int) ([]Need, error) {
	cfg.defaults()
	if err := Validate(migs); err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, client: NewBudgeted(cfg.Client, cfg.ReadUnits, cfg.WriteUnits, cfg.Now), keys: map[string][]string{}}
	records, err := r.records(ctx, migs)
	if err != nil {
		return nil, err
	}
	items := map[string][]Item{}
	needs := make([]Need, len(migs))
	for i, m := range migs {
		needs[i] = Need{ID: m.ID, Done: records[i].done(), InProgress: records[i].started() && !records[i].done(), Scanned: records[i].total().Scanned}
		table, _ := r.table(m)
		ks, err := r.keySchema(ctx, table)
		if err != nil {
			return nil, err
		}
		if _, ok := items[table]; !ok {
			var got []Item
			var start Item
			for len(got) < sample {
				out, err := r.client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table), Limit: aws.Int32(int32(min(sample-len(got), 1000))), ExclusiveStartKey: start})
				if err != nil {
					return nil, fmt.Errorf("migrate: pre-flight scan of %s: %w", table, err)
				}
				for _, it := range out.Items {
					if !isRecord(it, ks) {
						got = append(got, it)
					}
				}
				if start = out.LastEvaluatedKey; len(start) == 0 {
					break
				}
			}
			items[table] = got
		}
		for _, it := range items[table] {
			needs[i].Sampled++
			if what, ok := m.Check(it, cfg.Now()); ok {
				if needs[i].Needed == 0 {
					needs[i].Example = describeKey(it, ks) + ": " + what
				}
				needs[i].Needed++
			}
		}
		switch {
		case needs[i].Done:
			fmt.Fprintf(cfg.Out, "%s: done (recorded)\n", m.ID)
		case needs[i].InProgress:
			fmt.Fprintf(cfg.Out, "%s: IN PROGRESS: a run stopped after %d items scanned; run again to finish it (%d of the %d items sampled need it)\n",
				m.ID, needs[i].Scanned, needs[i].Needed, needs[i].Sampled)
		case needs[i].Needed > 0:
			fmt.Fprintf(cfg.Out, "%s: NEEDED by %d of %d items sampled, e.g. %s\n", m.ID, needs[i].Needed, needs[i].Sampled, needs[i].Example)
		default:
			fmt.Fprintf(cfg.Out, "%s: not needed by the %d items sampled (%s)\n", m.ID, needs[i].Sampled, m.Description)
		}
	}
	return needs, nil
}
