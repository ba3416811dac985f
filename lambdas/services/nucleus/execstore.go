package nucleus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Execution markers live in the audit table, whose TTL retires them; they
// have no gsi1pk, so the global timeline never shows them, and their pk
// never equals an entity's, so no entity log does either.
const (
	markerRunning = "running"
	markerDone    = "done"
	// MarkerRetention is how long execution markers live after their
	// fire time; it must exceed the executor's look-back, or an expired
	// marker would let a fire run twice.
	MarkerRetention = 7 * 24 * time.Hour
	// ClaimLease is how long a claim keeps other runs away: Lambda's
	// 15-minute limit, so a live run never loses its claim.
	ClaimLease = 15 * time.Minute
)

// Operation is what an action does to a schedule's resources.
type Operation string

// Operations: start_cron starts, end_cron stops.
const (
	OperationStart Operation = "start"
	OperationStop  Operation = "stop"
)

// execKey names one execution: (schedule, operation, fire time).
type execKey struct {
	ScheduleID string
	Operation  Operation
	FireTime   time.Time
}

// same reports whether k and o name one execution.
func (k execKey) same(o execKey) bool {
	return k.ScheduleID == o.ScheduleID && k.Operation == o.Operation && k.FireTime.Equal(o.FireTime)
}

func (k execKey) pk() string {
	return contract.ExecutionPK(k.ScheduleID, string(k.Operation), k.FireTime.UTC().Format(time.RFC3339))
}

type claimItem struct {
	PK         string
	SK         string
	State      string `dynamodbav:"state"`
	Owner      string `dynamodbav:"owner"`
	LeaseUntil int64  `dynamodbav:"lease_until"`
	ExpireAt   int64  `dynamodbav:"expire_at"`
	// On a done claim: what the execution did.
	Resources int    `dynamodbav:"resources,omitempty"`
	Failed    int    `dynamodbav:"failed,omitempty"`
	Note      string `dynamodbav:"note,omitempty"`
}

type resourceMarker struct {
	PK       string
	SK       string
	Status   AuditStatus `dynamodbav:"status"`
	ExpireAt int64       `dynamodbav:"expire_at"`
}

var (
	// errClaimed: another run holds or finished the execution.
	errClaimed = errors.New("nucleus: execution claimed by another run")
	// errLostClaim: the claim moved to another run.
	errLostClaim = errors.New("nucleus: execution claim lost to another run")
	// errActionRecorded: the resource action of this execution is recorded.
	errActionRecorded = errors.New("nucleus: resource action already recorded")
	// errResourceGone: the resource was detached during the execution.
	errResourceGone = errors.New("nucleus: resource detached during execution")
)

// peekClaim reads an execution's claim, eventually consistent: a cheap
// look before the conditional claim, which is the real gate.
func (s *Store) peekClaim(ctx context.Context, k execKey) (*claimItem, error) {
	res, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.tables.Audit),
		Key:       itemKey{PK: k.pk(), SK: contract.KeyClaim}.av(),
	})
	if err != nil {
		return nil, storeError("GetItem", err)
	}
	if len(res.Item) == 0 {
		return nil, nil
	}
	var c claimItem
	if err := attributevalue.UnmarshalMap(res.Item, &c); err != nil {
		return nil, fmt.Errorf("nucleus: unmarshal claim: %w", err)
	}
	return &c, nil
}

// claim takes an execution for run: it succeeds if nobody claimed it or
// the holder's lease ran out without finishing. takeover reports the
// latter: some resource actions may be recorded already.
func (s *Store) claim(ctx context.Context, k execKey, run string, now time.Time) (takeover bool, err error) {
	item, err := ddb.MarshalItem(claimItem{PK: k.pk(), SK: contract.KeyClaim, State: markerRunning, Owner: run,
		LeaseUntil: now.Add(ClaimLease).Unix(), ExpireAt: k.FireTime.Add(MarkerRetention).Unix()}, keyAttrs...)
	if err != nil {
		return false, fmt.Errorf("nucleus: marshal claim: %w", err)
	}
	// Nobody claimed it, or the holder's lease ran out unfinished.
	in := ddb.Expr{
		Condition: "attribute_not_exists(#pk) OR (#state = :running AND #lease < :now)",
		Names:     map[string]string{"#pk": contract.AttrPK, "#state": contract.AttrState, "#lease": contract.AttrLeaseUntil},
		Values:    map[string]types.AttributeValue{":running": ddb.S(markerRunning), ":now": ddb.N(now.Unix())},
	}.Put(s.tables.Audit, item)
	in.ReturnValues = types.ReturnValueAllOld
	in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	out, err := s.client.PutItem(ctx, in)
	var held claimItem
	if found, _ := ddb.OldItem(err, &held); found && held.Owner == run && held.State == markerRunning {
		// This run's own claim: DynamoDB applied it and the answer was
		// lost, so the SDK's retry found it. Whether the first attempt
		// took over an expired claim is unknown: say it did, and the run
		// reads what was recorded before acting.
		return true, nil
	}
	if err = storeError("PutItem", ddb.WrapCond("PutItem", err, errClaimed)); err != nil {
		return false, err
	}
	return len(out.Attributes) > 0, nil
}

// finish marks an execution done (or, with release, hands it back at once
// for a retry) if run still holds it.
func (s *Store) finish(ctx context.Context, k execKey, run string, now time.Time, c claimItem, release bool) error {
	c.PK, c.SK, c.Owner, c.State = k.pk(), contract.KeyClaim, run, markerDone
	c.ExpireAt = k.FireTime.Add(MarkerRetention).Unix()
	if release {
		c.State, c.LeaseUntil = markerRunning, now.Unix()-1
	}
	item, err := ddb.MarshalItem(c, keyAttrs...)
	if err != nil {
		return fmt.Errorf("nucleus: marshal claim: %w", err)
	}
	_, err = s.client.PutItem(ctx, ddb.Expr{Condition: "#owner = :run", Names: map[string]string{"#owner": contract.AttrOwner},
		Values: map[string]types.AttributeValue{":run": ddb.S(run)}}.Put(s.tables.Audit, item))
	return storeError("PutItem", ddb.WrapCond("PutItem", err, errLostClaim))
}

// recordedResources returns the ARNs whose action an execution recorded,
// read consistently (only after a takeover).
func (s *Store) recordedResources(ctx context.Context, k execKey) (map[string]bool, error) {
	in := ddb.Expr{
		KeyCondition: "#pk = :pk AND begins_with(#sk, :prefix)",
		Names:        map[string]string{"#pk": contract.AttrPK, "#sk": contract.AttrSK},
		Values:       map[string]types.AttributeValue{":pk": ddb.S(k.pk()), ":prefix": ddb.S(contract.PrefixResource)},
	}.Query(s.tables.Audit)
	in.ConsistentRead = aws.Bool(true)
	done := map[string]bool{}
	err := s.queryAll(ctx, in, func(item map[string]types.AttributeValue) error {
		if sk, ok := item[contract.AttrSK].(*types.AttributeValueMemberS); ok {
			done[sk.Value[len(contract.PrefixResource):]] = true
		}
		return nil
	})
	return done, err
}

// queryAll runs in page after page, handing each item to fn.
func (s *Store) queryAll(ctx context.Context, in *dynamodb.QueryInput, fn func(map[string]types.AttributeValue) error) error {
	if s.pageLimit > 0 {
		in.Limit = aws.Int32(s.pageLimit)
	}
	for item, err := range ddb.All(ctx, s.client, in) {
		if err == nil {
			err = fn(item)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// enabledSchedules lists every enabled schedule from GSI1 TYPE#SCHEDULE,
// every page. The index is eventually consistent; the executor reads each
// due schedule again from the table before acting.
func (s *Store) enabledSchedules(ctx context.Context) ([]scheduleItem, error) {
	q := partition(contract.AttrGSI1PK, contract.KeyTypeSchedule)
	q.Filter = "#enabled = :true"
	q.Names["#enabled"], q.Values[":true"] = contract.AttrEnabled, ddb.Bool(true)
	in := q.Query(s.tables.App)
	in.IndexName = aws.String(contract.IndexGSI1)
	var out []scheduleItem
	err := s.queryAll(ctx, in, func(item map[string]types.AttributeValue) error {
		var it scheduleItem
		if err := attributevalue.UnmarshalMap(item, &it); err != nil {
			return fmt.Errorf("nucleus: unmarshal schedule: %w", err)
		}
		out = append(out, it)
		return nil
	})
	return out, err
}

// scheduleWithResources is the document's "Get Schedule and all its
// Resources": one strongly consistent query of the schedule's partition
// (every page), METADATA first. ErrScheduleNotFound if it has no METADATA.
func (s *Store) scheduleWithResources(ctx context.Context, id string) (*scheduleItem, []resourceItem, error) {
	in := partition(contract.AttrPK, contract.PrefixSchedule+id).Query(s.tables.App)
	in.ConsistentRead = aws.Bool(true)
	var (
		sc        *scheduleItem
		resources []resourceItem
	)
	err := s.queryAll(ctx, in, func(item map[string]types.AttributeValue) error {
		if sk, ok := item[contract.AttrSK].(*types.AttributeValueMemberS); ok && sk.Value == contract.KeyMetadata {
			sc = &scheduleItem{}
			return attributevalue.UnmarshalMap(item, sc)
		}
		var r resourceItem
		if err := attributevalue.UnmarshalMap(item, &r); err != nil {
			return fmt.Errorf("nucleus: unmarshal resource: %w", err)
		}
		resources = append(resources, r)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if sc == nil {
		return nil, nil, ErrScheduleNotFound
	}
	return sc, resources, nil
}

// recordAction writes one resource action's outcome: the resource marker
// (conditioned on absence, the exactly-once gate), its EXECUTE audit entry
// on the schedule, and for an ECS stop the desired count to restore on
// the resource item, in one TransactWriteItems across both tables.
func (s *Store) recordAction(ctx context.Context, k execKey, r *resourceItem, status AuditStatus, details any, keepCount *int32) error {
	marker, err := ddb.MarshalItem(resourceMarker{PK: k.pk(), SK: contract.PrefixResource + r.arn(), Status: status,
		ExpireAt: k.FireTime.Add(MarkerRetention).Unix()}, keyAttrs...)
	if err != nil {
		return fmt.Errorf("nucleus: marshal marker: %w", err)
	}
	put, err := s.put(s.tables.Audit, marker, pkAbsent, errActionRecorded)
	if err != nil {
		return err
	}
	entry, err := s.entry(s.now(), contract.ExecutorName, Entity{EntitySchedule, k.ScheduleID}, ActionExecute, status, details)
	if err != nil {
		return err
	}
	ops := []ddb.TxOp{put}
	if keepCount != nil {
		ops = append(ops, s.update(itemKey{PK: r.PK, SK: r.SK}, ddb.Expr{
			Update: "SET #count = :count", Condition: "attribute_exists(#pk)",
			Names:  map[string]string{"#count": contract.AttrPreviousDesiredCount, "#pk": contract.AttrPK},
			Values: map[string]types.AttributeValue{":count": ddb.N(*keepCount)},
		}, errResourceGone))
	}
	err = s.transact(ctx, entry, ops...)
	if errors.Is(err, errResourceGone) {
		// Detached meanwhile: the action happened and is recorded; there
		// is no item left to keep the count on.
		return s.transact(ctx, entry, put)
	}
	return err
}
