package migrate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// The checkpoint item of a migration lives in the migration's own table
// under the partition key value RecordPrefix+<id> (and, in a table with a
// sort key, the sort key value RecordSort): no service names such a key,
// no index holds it (it has no index attribute), and every scan of the
// engine passes over it.
const (
	RecordPrefix = "MIGRATION#"
	RecordSort   = "MIGRATION"
)

// The checkpoint's own attributes (the engine's, not a service's: no
// contract names them).
const (
	attrMigID    = "mig_id"
	attrState    = "mig_state"
	attrSegments = "mig_segments"
	attrRun      = "mig_run"
	attrLease    = "mig_lease"
	attrStarted  = "mig_started"
	attrFinished = "mig_finished"
	attrSegment  = "mig_seg_"

	stateRunning = "running"
	stateDone    = "done"
)

// segment is one parallel scan segment's checkpoint: where its scan
// stands (the last key done; nil at the start) and what it did so far.
type segment struct {
	Start    Item `dynamodbav:"-"` // kept as the map it is (marshalSegment)
	Done     bool `dynamodbav:"done"`
	Scanned  int  `dynamodbav:"scanned"`
	Needed   int  `dynamodbav:"needed"`
	Changed  int  `dynamodbav:"changed"`
	Skipped  int  `dynamodbav:"skipped"`
	Reported int  `dynamodbav:"reported"`
}

func (s segment) counts() Counts {
	return Counts{Scanned: s.Scanned, Needed: s.Needed, Changed: s.Changed, Skipped: s.Skipped, Reported: s.Reported}
}

// record is a migration's checkpoint as read.
type record struct {
	State    string
	Finished string
	Run      string
	Lease    int64
	Segments []segment
}

func (r record) done() bool { return r.State == stateDone }

// started: a run claimed the migration (its checkpoint exists).
func (r record) started() bool { return r.State != "" }

func (r record) total() Counts {
	var c Counts
	for _, s := range r.Segments {
		c.add(s.counts())
	}
	return c
}

func decodeRecord(item Item) (record, error) {
	var r record
	str := func(a string) string {
		if v, ok := item[a].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	r.State, r.Finished, r.Run = str(attrState), str(attrFinished), str(attrRun)
	if v, ok := item[attrLease].(*types.AttributeValueMemberN); ok {
		r.Lease, _ = strconv.ParseInt(v.Value, 10, 64)
	}
	n := 0
	if v, ok := item[attrSegments].(*types.AttributeValueMemberN); ok {
		n, _ = strconv.Atoi(v.Value)
	}
	r.Segments = make([]segment, n)
	for i := range r.Segments {
		if av, ok := item[attrSegment+strconv.Itoa(i)]; ok {
			if err := unmarshalSegment(av, &r.Segments[i]); err != nil {
				return r, fmt.Errorf("migrate: checkpoint segment %d: %w", i, err)
			}
		}
	}
	return r, nil
}

type runner struct {
	cfg    Config
	client *Budgeted
	mu     sync.Mutex
	keys   map[string][]string // table → key attributes, partition key first
}

// keySchema returns the table's key attributes, partition key first.
func (r *runner) keySchema(ctx context.Context, table string) ([]string, error) {
	r.mu.Lock()
	k, ok := r.keys[table]
	r.mu.Unlock()
	if ok {
		return k, nil
	}
	out, err := r.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		return nil, fmt.Errorf("migrate: describe table %s: %w", table, err)
	}
	for _, ks := range out.Table.KeySchema {
		if ks.KeyType == types.KeyTypeHash {
			k = append([]string{aws.ToString(ks.AttributeName)}, k...)
		} else {
			k = append(k, aws.ToString(ks.AttributeName))
		}
	}
	r.mu.Lock()
	r.keys[table] = k
	r.mu.Unlock()
	return k, nil
}

func (r *runner) table(m Migration) (string, error) {
	t := r.cfg.Tables[m.Table.Env]
	if t == "" {
		return "", fmt.Errorf("migrate: %s: no table name for %s (%s)", m.ID, m.Table.BaseName, m.Table.Env)
	}
	return t, nil
}

// recordKey is the checkpoint item's key in a table with keys ks.
func recordKey(ks []string, id string) Item {
	k := Item{ks[0]: ddb.S(RecordPrefix + id)}
	if len(ks) > 1 {
		k[ks[1]] = ddb.S(RecordSort)
	}
	return k
}

// isRecord: the item is one of the engine's checkpoints.
func isRecord(item Item, ks []string) bool {
	v, ok := item[ks[0]].(*types.AttributeValueMemberS)
	return ok && len(v.Value) > len(RecordPrefix) && v.Value[:len(RecordPrefix)] == RecordPrefix
}

func (r *runner) records(ctx context.Context, migs []Migration) ([]record, error) {
	out := make([]record, len(migs))
	for i, m := range migs {
		table, err := r.table(m)
		if err != nil {
			return nil, err
		}
		ks, err := r.keySchema(ctx, table)
		if err != nil {
			return nil, err
		}
		got, err := r.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: recordKey(ks, m.ID), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return nil, fmt.Errorf("migrate: read the record of %s: %w", m.ID, err)
		}
		if out[i], err = decodeRecord(got.Item); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// claim takes the migration's lease (creating its checkpoint, or taking
// over one whose lease ran out) and returns its segments.
func (r *runner) claim(ctx context.Context, table string, ks []string, m Migration, run string) (record, error) {
	now := r.cfg.Now()
	item, err := ddb.UpdateExpr(ctx, r.client, table, recordKey(ks, m.ID), ddb.Expr{
		Update: "SET #run = :run, #lease = :lease, #id = :id, #segs = if_not_exists(#segs, :segs)," +
			" #started = if_not_exists(#started, :now), #state = if_not_exists(#state, :running)",
		Condition: "(attribute_not_exists(#run) OR #lease < :nowms) AND (attribute_not_exists(#state) OR #state <> :done)",
		Names: map[string]string{"#run": attrRun, "#lease": attrLease, "#id": attrMigID, "#segs": attrSegments,
			"#started": attrStarted, "#state": attrState},
		Values: Item{":run": ddb.S(run), ":lease": ddb.N(now.Add(r.cfg.Lease).UnixMilli()), ":id": ddb.S(m.ID),
			":segs": ddb.N(r.cfg.Segments), ":now": ddb.S(ddb.SortableTime(now)), ":running": ddb.S(stateRunning),
			":nowms": ddb.N(now.UnixMilli()), ":done": ddb.S(stateDone)},
	})
	if ddb.IsConditionFailed(err) {
		old, _ := ddb.FailedItem(err)
		rec, _ := decodeRecord(old)
		if rec.done() {
			return rec, fmt.Errorf("migrate: %s was recorded done by another run", m.ID)
		}
		return rec, fmt.Errorf("%w: %s is held by run %s until %s (a killed run's lease runs out then; run again after it)",
			ErrHeld, m.ID, rec.Run, time.UnixMilli(rec.Lease).UTC().Format(time.RFC3339))
	}
	if err != nil {
		return record{}, fmt.Errorf("migrate: claim %s: %w", m.ID, err)
	}
	return decodeRecord(item)
}

// save writes one segment's checkpoint and renews the lease, if the run
// still holds it.
func (r *runner) save(ctx context.Context, table string, ks []string, m Migration, run string, i int, s segment) error {
	av, err := marshalSegment(s)
	if err != nil {
		return err
	}
	_, err = ddb.UpdateExpr(ctx, r.client, table, recordKey(ks, m.ID), ddb.Expr{
		Update: "SET #seg = :seg, #lease = :lease", Condition: "#run = :run",
		Names:  map[string]string{"#seg": attrSegment + strconv.Itoa(i), "#lease": attrLease, "#run": attrRun},
		Values: Item{":seg": av, ":lease": ddb.N(r.cfg.Now().Add(r.cfg.Lease).UnixMilli()), ":run": ddb.S(run)},
	})
	if ddb.IsConditionFailed(err) {
		return fmt.Errorf("%w: %s: this run lost its lease (it paused longer than %s); run again", ErrHeld, m.ID, r.cfg.Lease)
	}
	return err
}

// finish records the migration done, or releases the lease of a stopped
// run so the next one need not wait for it.
func (r *runner) finish(ctx context.Context, table string, ks []string, m Migration, run string, done bool) error {
	x := ddb.Expr{Update: "REMOVE #run, #lease", Condition: "#run = :run",
		Names: map[string]string{"#run": attrRun, "#lease": attrLease}, Values: Item{":run": ddb.S(run)}}
	if done {
		x.Update = "SET #state = :done, #finished = :now REMOVE #run, #lease"
		x.Names["#state"], x.Names["#finished"] = attrState, attrFinished
		x.Values[":done"], x.Values[":now"] = ddb.S(stateDone), ddb.S(ddb.SortableTime(r.cfg.Now()))
	}
	_, err := ddb.UpdateExpr(ctx, r.client, table, recordKey(ks, m.ID), x)
	return err
}

// run runs one migration (or its dry run) to its end, or until ctx ends.
func (r *runner) run(ctx context.Context, m Migration) (Result, error) {
	res := Result{ID: m.ID}
	start := r.cfg.Now()
	before := r.client.Usage()
	measure := func() {
		u := r.client.Usage()
		res.Usage = Usage{ReadUnits: u.ReadUnits - before.ReadUnits, WriteUnits: u.WriteUnits - before.WriteUnits, Throttles: u.Throttles - before.Throttles}
		res.Took = r.cfg.Now().Sub(start)
	}
	table, err := r.table(m)
	if err != nil {
		return res, err
	}
	ks, err := r.keySchema(ctx, table)
	if err != nil {
		return res, err
	}
	env := &Env{Client: r.client, Table: table, Tables: r.cfg.Tables, Stage: r.cfg.Stage, Now: r.cfg.Now,
		report: &lockedWriter{w: r.cfg.Out}, keys: ks}
	var segs []segment
	run := newToken()
	if r.cfg.DryRun {
		segs = make([]segment, r.cfg.Segments)
	} else {
		rec, err := r.claim(ctx, table, ks, m, run)
		if err != nil {
			return res, err
		}
		segs = rec.Segments
		if resumed := rec.total(); resumed.Scanned > 0 {
			fmt.Fprintf(r.cfg.Out, "%s: resuming after %d items scanned\n", m.ID, resumed.Scanned)
		}
	}
	p := newProgress(r, m.ID, table, segs)
	stopProgress := p.start(ctx)

	var wg sync.WaitGroup
	errs := make([]error, len(segs))
	var samples sampleList
	samples.max = r.cfg.Samples
	for i := range segs {
		if segs[i].Done {
			continue
		}
		wg.Go(func() {
			errs[i] = r.segment(ctx, env, m, ks, run, i, len(segs), &segs[i], p, &samples)
		})
	}
	wg.Wait()
	stopProgress()
	for i := range segs {
		res.Counts.add(segs[i].counts())
	}
	res.Samples = samples.list
	err = errors.Join(errs...)
	allDone := true
	for _, s := range segs {
		allDone = allDone && s.Done
	}
	if !r.cfg.DryRun {
		// A stopped run still records where it stands and lets go of the
		// lease: the cancelled context must not stop that.
		fctx := context.WithoutCancel(ctx)
		if ferr := r.finish(fctx, table, ks, m, run, err == nil && allDone); ferr != nil && err == nil {
			err = ferr
		}
	}
	measure()
	r.summary(res, err, allDone)
	if err == nil && !allDone {
		err = ctx.Err()
	}
	return res, err
}

// segment scans one segment from its checkpoint, applying the migration
// to each item that needs it and saving the checkpoint after each page,
// after an item when half the lease went by since the last save, and
// when stopped (the key of the last item done, so a resumed run starts
// right after it: no item is seen as new twice).
func (r *runner) segment(ctx context.Context, env *Env, m Migration, ks []string, run string, i, n int, s *segment, p *progress, samples *sampleList) error {
	wctx := context.WithoutCancel(ctx) // an item's write is never torn
	lastSave := r.cfg.Now()
	save := func() error {
		if r.cfg.DryRun {
			return nil
		}
		err := r.save(wctx, env.Table, ks, m, run, i, *s)
		if err == nil {
			lastSave = r.cfg.Now()
		}
		return err
	}
	for {
		if ctx.Err() != nil {
			return save()
		}
		out, err := r.client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(env.Table), Segment: aws.Int32(int32(i)),
			TotalSegments: aws.Int32(int32(n)), Limit: aws.Int32(r.cfg.PageSize), ExclusiveStartKey: s.Start, ConsistentRead: aws.Bool(true)})
		if err != nil {
			if ctx.Err() != nil {
				return save()
			}
			return errors.Join(fmt.Errorf("migrate: %s: scan segment %d: %w", m.ID, i, err), save())
		}
		for _, item := range out.Items {
			if ctx.Err() != nil {
				return save()
			}
			if isRecord(item, ks) {
				s.Start = keyOf(item, ks)
				continue
			}
			s.Scanned++
			p.scanned()
			if what, needed := m.Check(item, r.cfg.Now()); needed {
				s.Needed++
				if r.cfg.DryRun {
					samples.add(describeKey(item, ks) + ": " + what)
				} else {
					o, err := r.apply(wctx, env, m, ks, item)
					if err != nil {
						s.Scanned--
						s.Needed--
						return errors.Join(fmt.Errorf("migrate: %s: %s: %w", m.ID, describeKey(item, ks), err), save())
					}
					switch o {
					case Changed:
						s.Changed++
					case Skipped:
						s.Skipped++
					case Reported:
						s.Reported++
					}
				}
			}
			s.Start = keyOf(item, ks)
			// A page paced by the budget (big items, a throttled table) can
			// take longer than the lease: save, which renews it, half way
			// through, or another run takes the migration over while this
			// one still applies it (two runs, two budgets).
			if !r.cfg.DryRun && r.cfg.Now().Sub(lastSave) > r.cfg.Lease/2 {
				if err := save(); err != nil {
					return err
				}
			}
			if r.cfg.AfterItem != nil {
				r.cfg.AfterItem()
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			s.Done, s.Start = true, nil
			return save()
		}
		s.Start = out.LastEvaluatedKey
		if err := save(); err != nil {
			return err
		}
	}
}

// maxRereads bounds how often one item is read again after its write's
// condition failed.
const maxRereads = 5

// apply applies m to item. When its condition fails (Skipped), the item
// changed since the scan read it: a concurrent writer, or another run. It
// is read again (consistently) and, while it still needs the migration,
// applied again; it counts as Skipped only when it no longer needs it (or
// is gone). Otherwise a migration recorded done, which never runs again,
// would leave behind every item the live API touched while it ran. An
// item that keeps changing under it stops the run (resumed at it).
func (r *runner) apply(ctx context.Context, env *Env, m Migration, ks []string, item Item) (Outcome, error) {
	o, err := m.Apply(ctx, env, item)
	for range maxRereads {
		if err != nil || o != Skipped {
			return o, err
		}
		got, gerr := r.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(env.Table), Key: keyOf(item, ks), ConsistentRead: aws.Bool(true)})
		if gerr != nil {
			return 0, fmt.Errorf("read again after its condition failed: %w", gerr)
		}
		if len(got.Item) == 0 {
			return Skipped, nil // deleted meanwhile
		}
		if _, needed := m.Check(got.Item, r.cfg.Now()); !needed {
			return Skipped, nil // another writer or run did it
		}
		item = got.Item
		o, err = m.Apply(ctx, env, item)
	}
	if err == nil && o == Skipped {
		return 0, fmt.Errorf("changed %d times while being migrated: run again (the run resumes at it)", maxRereads+1)
	}
	return o, err
}

func keyOf(item Item, ks []string) Item {
	k := make(Item, len(ks))
	for _, a := range ks {
		k[a] = item[a]
	}
	return k
}

type sampleList struct {
	mu   sync.Mutex
	max  int
	list []string
}

func (s *sampleList) add(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.list) < s.max {
		s.list = append(s.list, line)
	}
}

func (r *runner) summary(res Result, err error, done bool) {
	w := r.cfg.Out
	verb := "done"
	switch {
	case r.cfg.DryRun:
		verb = "dry run, nothing written"
	case err != nil:
		verb = "stopped: " + err.Error()
	case !done:
		verb = "stopped (run again to resume)"
	}
	fmt.Fprintf(w, "%s: %s; scanned %d, needed %d, changed %d, skipped %d (changed meanwhile), reported %d; %.1f RCU, %.1f WCU, %d throttles, %s\n",
		res.ID, verb, res.Scanned, res.Needed, res.Changed, res.Skipped, res.Reported,
		res.Usage.ReadUnits, res.Usage.WriteUnits, res.Usage.Throttles, res.Took.Round(time.Millisecond))
	for _, s := range res.Samples {
		fmt.Fprintf(w, "  would change %s\n", s)
	}
}

// segStart is the segment map's attribute that holds its position: the
// key as DynamoDB gave it, which attributevalue cannot decode into an Item.
const segStart = "start"

func marshalSegment(s segment) (types.AttributeValue, error) {
	av, err := attributevalue.Marshal(s)
	if err != nil {
		return nil, err
	}
	m := av.(*types.AttributeValueMemberM)
	if len(s.Start) > 0 {
		m.Value[segStart] = &types.AttributeValueMemberM{Value: s.Start}
	}
	return m, nil
}

func unmarshalSegment(av types.AttributeValue, s *segment) error {
	m, ok := av.(*types.AttributeValueMemberM)
	if !ok {
		return fmt.Errorf("not a map")
	}
	rest := make(Item, len(m.Value))
	for k, v := range m.Value {
		if k != segStart {
			rest[k] = v
		}
	}
	if err := attributevalue.UnmarshalMap(rest, s); err != nil {
		return err
	}
	if st, ok := m.Value[segStart].(*types.AttributeValueMemberM); ok {
		s.Start = st.Value
	}
	return nil
}
