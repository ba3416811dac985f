package nucleus

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// maxTransactItems is DynamoDB's limit on items per TransactWriteItems.
const maxTransactItems = 100

// MaxDeleteResources is the most resources a schedule delete removes: one
// transaction holds the schedule, its resources, one count update per
// distinct account and the audit entry. With all resources in one account
// that is 97; each further account takes one off.
const MaxDeleteResources = maxTransactItems - 3

const tooManyResources = "nucleus: too many resources to delete in one transaction"

var (
	// ErrAccountInUse: the account has resources attached to schedules.
	ErrAccountInUse = api.NewKind("nucleus: account has attached resources", http.StatusConflict, api.CodeConflict,
		func(id string, _ error) string {
			return fmt.Sprintf("account %q has resources attached to schedules; detach them (GET /accounts/%s/resources lists them) first", id, id)
		})
	// ErrTooManyResources: a schedule has more resources than one delete
	// transaction can remove.
	ErrTooManyResources = api.NewKind(tooManyResources, http.StatusConflict, api.CodeConflict,
		func(id string, err error) string {
			return fmt.Sprintf("schedule %q: %s; detach resources first (at most %d in one account can go with the schedule)",
				id, api.Detail(err, tooManyResources), MaxDeleteResources)
		})
)

// DeleteSchedule deletes a schedule and every resource attached to it in
// one TransactWriteItems with its DELETE audit entry, and takes the
// resources off their accounts' resource_count. The schedule is read with
// its resources first (one consistent query); the delete is conditioned on
// the schedule's version and resource_version as read, so an attach,
// detach or edit in between makes it read again (up to three times, then
// ErrConcurrentUpdate) instead of leaving a resource behind.
func (s *Store) DeleteSchedule(ctx context.Context, user, id string) error {
	for range updateAttempts {
		sc, resources, err := s.scheduleWithResources(ctx, id)
		if err != nil {
			return err
		}
		perAccount := map[string]int{}
		arns := make([]string, len(resources))
		for i, r := range resources {
			perAccount[r.AccountID]++
			arns[i] = r.arn()
		}
		if n := 2 + len(resources) + len(perAccount); n > maxTransactItems {
			return fmt.Errorf("%w: %d resources in %d accounts need %d items, DynamoDB allows %d", ErrTooManyResources,
				len(resources), len(perAccount), n, maxTransactItems)
		}
		ops := []ddb.TxOp{s.delete(scheduleKey(id), unchangedSchedule(sc), ddb.MissingOr(ErrScheduleNotFound, errStale))}
		for _, r := range resources {
			ops = append(ops, s.delete(itemKey{PK: r.PK, SK: r.SK}, pkPresent, errStale))
		}
		accounts := make([]string, 0, len(perAccount))
		for a := range perAccount {
			accounts = append(accounts, a)
		}
		sort.Strings(accounts)
		for _, a := range accounts {
			ops = append(ops, s.update(accountKey(a), addResources(-perAccount[a]), errAccountGone))
		}
		details := map[string]any{"schedule": sc.schedule(), "resources": arns}
		entry, err := s.entry(s.now(), user, Entity{EntitySchedule, id}, ActionDelete, StatusSuccess, details)
		if errors.Is(err, ErrTooLarge) {
			// Many long ARNs: the entry keeps the count.
			details["resources"] = len(arns)
			entry, err = s.entry(s.now(), user, Entity{EntitySchedule, id}, ActionDelete, StatusSuccess, details)
		}
		if err != nil {
			return err
		}
		err = s.transact(ctx, entry, ops...)
		switch {
		case errors.Is(err, errStale):
			continue
		case errors.Is(err, errAccountGone):
			// A resource whose account is gone predates the counts;
			// nothing to count down there.
			return s.deleteWithoutGoneAccounts(ctx, entry, ops, accounts)
		}
		return err
	}
	return ErrConcurrentUpdate
}

// deleteWithoutGoneAccounts retries a schedule delete without the count
// updates (the last len(accounts) ops) of accounts that no longer exist.
func (s *Store) deleteWithoutGoneAccounts(ctx context.Context, entry *AuditEntry, ops []ddb.TxOp, accounts []string) error {
	first := len(ops) - len(accounts)
	keep := ops[:first]
	for i, a := range accounts {
		var it accountItem
		found, err := s.get(ctx, accountKey(a), &it)
		if err != nil {
			return err
		}
		if found {
			keep = append(keep, ops[first+i])
		}
	}
	err := s.transact(ctx, entry, keep...)
	if errors.Is(err, errStale) || errors.Is(err, errAccountGone) {
		return ErrConcurrentUpdate
	}
	return err
}

// unchangedSchedule is the condition that sc's version and
// resource_version are as read: no edit, attach or detach since (no
// resource_version before the first attach).
func unchangedSchedule(sc *scheduleItem) ddb.Expr {
	e := ddb.Expr{
		Names:  map[string]string{"#version": contract.AttrVersion, "#rv": contract.AttrResourceVersion},
		Values: map[string]types.AttributeValue{},
	}
	e.Condition = versionIs(sc.Version, e.Values) + " AND attribute_not_exists(#rv)"
	if sc.ResourceVersion != 0 {
		e.Condition = versionIs(sc.Version, e.Values) + " AND #rv = :rv"
		e.Values[":rv"] = ddb.N(sc.ResourceVersion)
	}
	return e
}

// DeleteAccount deletes an account and writes its DELETE audit entry in one
// transaction. It refuses (ErrAccountInUse) while resources of the account
// are attached to schedules. Knowing that costs no read of the resources:
// the account carries resource_count, which every attach and detach
// changes in its own transaction, and the delete is conditioned on it
// being 0 (or absent), so an attach racing the delete either lands first
// and fails the delete, or fails itself on the missing account.
//
// Resources attached before resource_count existed are not counted; one
// Limit-1 query of GSI1 ACCOUNT#<id> finds them (the index lags only for
// attachments of the last moments, which the count covers).
func (s *Store) DeleteAccount(ctx context.Context, user, id string) error {
	for range updateAttempts {
		it, err := s.accountItem(ctx, id)
		if err != nil {
			return err
		}
		if it.ResourceCount > 0 {
			return ErrAccountInUse
		}
		if used, err := s.indexedResources(ctx, id); err != nil {
			return err
		} else if used {
			return ErrAccountInUse
		}
		// Unchanged since the read, and no resource attached meanwhile.
		cond := ddb.Expr{
			Names:  map[string]string{"#version": contract.AttrVersion, "#count": contract.AttrResourceCount},
			Values: map[string]types.AttributeValue{":zero": ddb.N(0)},
		}
		cond.Condition = versionIs(it.Version, cond.Values) + " AND (attribute_not_exists(#count) OR #count <= :zero)"
		del := s.delete(accountKey(id), cond, ddb.MissingOr(ErrAccountNotFound, errStale))
		err = s.commit(ctx, s.now(), user, Entity{EntityAccount, id}, ActionDelete, it.account(), del)
		if errors.Is(err, errStale) {
			// Attached meanwhile, or only changed: which, the item tells.
			var cur accountItem
			if found, uerr := ddb.OldItem(err, &cur); uerr == nil && found && cur.ResourceCount > 0 {
				return ErrAccountInUse
			}
			continue
		}
		return err
	}
	return ErrConcurrentUpdate
}

// indexedResources reports whether GSI1 lists a resource of the account.
func (s *Store) indexedResources(ctx context.Context, accountID string) (bool, error) {
	in := partition(contract.AttrGSI1PK, contract.PrefixAccount+accountID).Query(s.tables.App)
	in.IndexName, in.Limit, in.Select = aws.String(contract.IndexGSI1), aws.Int32(1), types.SelectCount
	out, err := s.client.Query(ctx, in)
	if err != nil {
		return false, storeError("Query", err)
	}
	return out.Count > 0, nil
}
