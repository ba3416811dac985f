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
	// Sampled items of its table, Needed of them need it, Example one.
	Sampled, Needed int
	Example         string
}

// Preflight reads up to sample items of each table the migrations scan
// (one budgeted Scan from the start of the table) and says which
// migrations they need (`make migrate … CHECK=1`). It writes nothing. The
// answer is about the sample: a migration not needed there may still be
// needed further on, which the dry run counts exactly.
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
		needs[i] = Need{ID: m.ID, Done: records[i].done()}
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
		case needs[i].Needed > 0:
			fmt.Fprintf(cfg.Out, "%s: NEEDED by %d of %d items sampled, e.g. %s\n", m.ID, needs[i].Needed, needs[i].Sampled, needs[i].Example)
		default:
			fmt.Fprintf(cfg.Out, "%s: not needed by the %d items sampled (%s)\n", m.ID, needs[i].Sampled, m.Description)
		}
	}
	return needs, nil
}
