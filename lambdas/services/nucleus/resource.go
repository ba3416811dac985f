package nucleus

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// ResourceType is the kind of AWS resource a schedule starts and stops.
type ResourceType string

// Resource types.
const (
	ResourceEC2 ResourceType = contract.KindEC2
	ResourceECS ResourceType = contract.KindECS
	ResourceRDS ResourceType = contract.KindRDS
)

// ResourceTypes lists every resource type.
var ResourceTypes = []ResourceType{ResourceEC2, ResourceECS, ResourceRDS}

// Resource is a resource targeted by a schedule, as returned.
type Resource struct {
	ScheduleID   string       `dynamodbav:"-" json:"schedule_id"`
	ResourceARN  string       `dynamodbav:"-" json:"resource_arn"`
	ResourceType ResourceType `dynamodbav:"resource_type" json:"resource_type"`
	Region       string       `dynamodbav:"region" json:"region"`
	AccountID    string       `dynamodbav:"account_id" json:"account_id"`
	CreatedAt    string       `dynamodbav:"created_at" json:"created_at"`
	// PreviousDesiredCount is an ECS service's desired count before the
	// executor last stopped it (set to 0); a start restores it.
	PreviousDesiredCount *int32 `dynamodbav:"previous_desired_count,omitempty" json:"previous_desired_count,omitempty"`
}

// resourceItem lives in its schedule's partition (so one query returns a
// schedule with its resources) and in GSI1 under its account.
type resourceItem struct {
	PK     string
	SK     string
	GSI1PK string
	GSI1SK string
	Resource
}

func (it *resourceItem) arn() string { return strings.TrimPrefix(it.SK, contract.PrefixResource) }

func resourceKey(scheduleID, arn string) itemKey {
	return itemKey{PK: contract.PrefixSchedule + scheduleID, SK: contract.PrefixResource + arn}
}

func unmarshalResource(item map[string]types.AttributeValue) (*Resource, error) {
	var it resourceItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return nil, fmt.Errorf("nucleus: unmarshal resource: %w", err)
	}
	r := it.Resource
	r.ScheduleID = strings.TrimPrefix(it.PK, contract.PrefixSchedule)
	r.ResourceARN = strings.TrimPrefix(it.SK, contract.PrefixResource)
	return &r, nil
}

// NewResource is the input of AttachResource.
type NewResource struct {
	ResourceARN  string
	ResourceType ResourceType
	Region       string
	AccountID    string
}

// AttachResource targets a resource with a schedule. created is false when
// it was already attached: type, region and account are all read from the
// ARN, so the stored item is the same and nothing is written.
//
// One TransactWriteItems updates the schedule (resource_version) and the
// account (resource_count + 1), both conditioned on existing, and puts the
// resource and the audit entry: a resource never points at a missing
// schedule or account, a delete of either sees the change, and a refused
// attach leaves no trace.
func (s *Store) AttachResource(ctx context.Context, user, scheduleID string, in NewResource) (r *Resource, created bool, err error) {
	now := s.now()
	key := resourceKey(scheduleID, in.ResourceARN)
	it := resourceItem{PK: key.PK, SK: key.SK, GSI1PK: contract.PrefixAccount + in.AccountID, GSI1SK: contract.PrefixSchedule + scheduleID,
		Resource: Resource{ScheduleID: scheduleID, ResourceARN: in.ResourceARN, ResourceType: in.ResourceType,
			Region: in.Region, AccountID: in.AccountID, CreatedAt: Timestamp(now)}}
	item, err := ddb.MarshalItem(it, keyAttrs...)
	if err != nil {
		return nil, false, fmt.Errorf("nucleus: marshal resource: %w", err)
	}
	schedule := s.update(scheduleKey(scheduleID), bumpResourceVersion(), ErrScheduleNotFound)
	account := s.update(accountKey(in.AccountID), addResources(1), ErrAccountNotFound)
	put, err := s.put(s.tables.App, item, pkAbsent, errAttached)
	if err != nil {
		return nil, false, err
	}
	switch err := s.commit(ctx, now, user, Entity{EntitySchedule, scheduleID}, ActionCreate, map[string]any{"resource": it.Resource}, schedule, account, put); {
	case errors.Is(err, errAttached):
		old, _ := ddb.FailedItem(err)
		existing, err := unmarshalResource(old)
		if err != nil {
			return nil, false, err
		}
		return existing, false, nil
	case err != nil:
		return nil, false, err
	}
	return &it.Resource, true, nil
}

// errAttached: the resource is already attached (AttachResource is then a
// no-op, not an error).
var errAttached = errors.New("nucleus: resource already attached")

// DetachResource removes a resource from a schedule. The schedule's
// existence is checked in the same transaction, so a missing schedule and
// a resource that is not attached are told apart (ErrScheduleNotFound,
// ErrResourceNotFound).
func (s *Store) DetachResource(ctx context.Context, user, scheduleID, arn string) error {
	schedule := s.update(scheduleKey(scheduleID), bumpResourceVersion(), ErrScheduleNotFound)
	del := s.delete(resourceKey(scheduleID, arn), pkPresent, ErrResourceNotFound)
	// The audit entry repeats what was detached; a transaction returns no
	// old values on success, and the ARN carries type, region and account.
	parsed := resourceARNPattern().FindStringSubmatch(arn)
	detail := map[string]any{"resource_arn": arn}
	ops := []ddb.TxOp{schedule, del}
	if parsed != nil {
		detail["resource_type"], detail["region"], detail["account_id"] = parsed[2], parsed[3], parsed[4]
		ops = append(ops, s.update(accountKey(parsed[4]), addResources(-1), errAccountGone))
	}
	entry, err := s.entry(s.now(), user, Entity{EntitySchedule, scheduleID}, ActionDelete, StatusSuccess, map[string]any{"resource": detail})
	if err != nil {
		return err
	}
	err = s.transact(ctx, entry, ops...)
	if errors.Is(err, errAccountGone) {
		// Only for data from before accounts could be deleted only
		// without resources: detach without the count.
		err = s.transact(ctx, entry, ops[:2]...)
	}
	return err
}

// errAccountGone: the account of a resource no longer exists.
var errAccountGone = errors.New("nucleus: account of the resource is gone")

// bumpResourceVersion moves an existing schedule's resource_version.
func bumpResourceVersion() ddb.Expr {
	return ddb.Expr{Update: "ADD #rv :one", Condition: "attribute_exists(#pk)",
		Names:  map[string]string{"#rv": contract.AttrResourceVersion, "#pk": contract.AttrPK},
		Values: map[string]types.AttributeValue{":one": ddb.N(1)}}
}

// addResources adds n to an existing account's resource_count.
func addResources(n int) ddb.Expr {
	return ddb.Expr{Update: "ADD #count :n", Condition: "attribute_exists(#pk)",
		Names:  map[string]string{"#count": contract.AttrResourceCount, "#pk": contract.AttrPK},
		Values: map[string]types.AttributeValue{":n": ddb.N(n)}}
}

// ResourcePage is one page of an account's targeted resources.
type ResourcePage struct {
	Resources []Resource `json:"resources"`
	// Next is the cursor of the next page, "" on the last page.
	Next string `json:"next_cursor,omitempty"`
}

// AccountResources lists the resources of an account that schedules
// target, by schedule id, from GSI1 (eventually consistent).
// ErrAccountNotFound if the account does not exist.
func (s *Store) AccountResources(ctx context.Context, accountID, cursorToken string, limit int) (*ResourcePage, error) {
	if _, err := s.accountItem(ctx, accountID); err != nil {
		return nil, err
	}
	pk := contract.PrefixAccount + accountID
	l := listing{
		table: s.tables.App, index: true, partition: pk, forward: true, size: pageSize(limit),
		scope: "nucleus/account-resources/" + accountID,
		expr:  partition(contract.AttrGSI1PK, pk),
	}
	items, next, err := s.list(ctx, l, cursorToken)
	if err != nil {
		return nil, err
	}
	page := &ResourcePage{Resources: make([]Resource, 0, len(items)), Next: next}
	for _, item := range items {
		r, err := unmarshalResource(item)
		if err != nil {
			return nil, err
		}
		page.Resources = append(page.Resources, *r)
	}
	return page, nil
}
