package nucleus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// AccountStatus is whether the platform acts in an account.
type AccountStatus string

// Account statuses.
const (
	AccountActive   AccountStatus = "active"
	AccountInactive AccountStatus = "inactive"
)

// AccountStatuses lists every account status.
var AccountStatuses = []AccountStatus{AccountActive, AccountInactive}

func (s AccountStatus) valid() bool { return slices.Contains(AccountStatuses, s) }

// Account is an integrated AWS account, as stored and returned.
type Account struct {
	AccountID   string `dynamodbav:"-" json:"account_id"`
	AccountName string `dynamodbav:"account_name" json:"account_name"`
	RoleARN     string `dynamodbav:"role_arn" json:"role_arn"`
	// ExternalID is passed to STS AssumeRole when set: the value the
	// role's trust policy requires in its sts:ExternalId condition.
	// Nucleus generates it (NewExternalID) when the account is created or
	// rotated and shows it only in that answer (CreatedAccount): never in
	// reads, lists or the audit log.
	ExternalID string `dynamodbav:"external_id,omitempty" json:"-"`
	// ExternalIDSet tells whether the account has one (accounts created
	// before Nucleus generated them may have none until rotated).
	ExternalIDSet bool          `dynamodbav:"-" json:"external_id_set"`
	Status        AccountStatus `dynamodbav:"status" json:"status"`
	// LastTestRunAt is the time of the latest connection test (POST
	// /accounts/{id}/test, or an EXECUTE entry on the account); it only
	// moves forward. LastTestStatus is that test's outcome.
	LastTestRunAt  string      `dynamodbav:"last_test_run_at,omitempty" json:"last_test_run_at,omitempty"`
	LastTestStatus AuditStatus `dynamodbav:"last_test_status,omitempty" json:"last_test_status,omitempty"`
	// ResourceCount is how many resources of the account schedules
	// target: attach and detach change it in their transactions, so a
	// delete can refuse without a read of the resources.
	ResourceCount int64  `dynamodbav:"resource_count,omitempty" json:"resource_count"`
	CreatedAt     string `dynamodbav:"created_at" json:"created_at"`
	UpdatedAt     string `dynamodbav:"updated_at" json:"updated_at"`
}

// accountItem is the app-table item of an account. The id lives in pk only.
type accountItem struct {
	PK     string
	SK     string
	GSI1PK string
	GSI1SK string
	// Version guards read-modify-write updates (UpdateAccount).
	Version int64 `dynamodbav:"version"`
	Account
}

func accountKey(id string) itemKey {
	return itemKey{PK: contract.PrefixAccount + id, SK: contract.KeyMetadata}
}

func (it *accountItem) account() *Account {
	a := it.Account
	a.AccountID = strings.TrimPrefix(it.PK, contract.PrefixAccount)
	a.ExternalIDSet = a.ExternalID != ""
	return &a
}

// CreatedAccount is the answer that shows an account's external id: the
// create's, and a rotation's. It is the only time Nucleus shows it; the
// account owner puts it in the role's trust policy (sts:ExternalId).
type CreatedAccount struct {
	*Account
	ExternalID string `json:"external_id"`
}

// Shown returns a with its external id shown.
func (a *Account) Shown() *CreatedAccount {
	if a == nil {
		return nil
	}
	return &CreatedAccount{Account: a, ExternalID: a.ExternalID}
}

// externalIDBytes is the entropy of a generated external id.
const externalIDBytes = 24

// NewExternalID returns a fresh external id: "nucleus-" and 48 hex digits
// of crypto/rand, within STS's ExternalId rules (2-1,224 characters of
// [\w+=,.@:/-]).
func NewExternalID() string {
	b := make([]byte, externalIDBytes)
	_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
	return externalIDPrefix + hex.EncodeToString(b)
}

// NewAccount is the input of CreateAccount.
type NewAccount struct {
	AccountID   string
	AccountName string
	RoleARN     string
	Status      AccountStatus
}

// CreateAccount registers an account; ErrAccountExists if the id is taken.
func (s *Store) CreateAccount(ctx context.Context, user string, in NewAccount) (*Account, error) {
	if !in.Status.valid() {
		return nil, fmt.Errorf("nucleus: unknown account status %q", in.Status)
	}
	now := s.now()
	ts := Timestamp(now)
	key := accountKey(in.AccountID)
	it := accountItem{PK: key.PK, SK: key.SK, GSI1PK: contract.KeyTypeAccount, GSI1SK: in.AccountName, Version: 1,
		Account: Account{AccountName: in.AccountName, RoleARN: in.RoleARN, ExternalID: s.newExternalID(), Status: in.Status, CreatedAt: ts, UpdatedAt: ts}}
	item, err := ddb.MarshalItem(it, keyAttrs...)
	if err != nil {
		return nil, fmt.Errorf("nucleus: marshal account: %w", err)
	}
	put, err := s.put(s.tables.App, item, pkAbsent, ErrAccountExists)
	if err != nil {
		return nil, err
	}
	a := it.account()
	if err := s.commit(ctx, now, user, Entity{EntityAccount, a.AccountID}, ActionCreate, a, put); err != nil {
		return nil, err
	}
	return a, nil
}

// Account returns the account with id.
func (s *Store) Account(ctx context.Context, id string) (*Account, error) {
	it, err := s.accountItem(ctx, id)
	if err != nil {
		return nil, err
	}
	return it.account(), nil
}

func (s *Store) accountItem(ctx context.Context, id string) (*accountItem, error) {
	var it accountItem
	found, err := s.get(ctx, accountKey(id), &it)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ErrAccountNotFound
	}
	return &it, nil
}

// AccountPatch is the input of UpdateAccount; nil fields stay unchanged.
type AccountPatch struct {
	AccountName *string
	RoleARN     *string
	// RotateExternalID replaces the external id with a new one, which the
	// answer shows once.
	RotateExternalID bool
	Status           *AccountStatus
}

// UpdateAccount changes an account and records the old and new values in
// the audit entry. A patch that changes nothing writes nothing.
//
// The audit entry needs the old values, which a transaction cannot return
// on success, so the account is read first and the write is conditioned on
// the version read: a concurrent change makes it retry with fresh values
// instead of recording a "from" that was never there.
func (s *Store) UpdateAccount(ctx context.Context, user, id string, p AccountPatch) (*Account, error) {
	if p.Status != nil && !p.Status.valid() {
		return nil, fmt.Errorf("nucleus: unknown account status %q", *p.Status)
	}
	for range updateAttempts {
		cur, err := s.accountItem(ctx, id)
		if err != nil {
			return nil, err
		}
		next := *cur
		ch := changes{}
		if p.AccountName != nil && ch.add(contract.AttrAccountName, cur.AccountName, *p.AccountName) {
			next.AccountName, next.GSI1SK = *p.AccountName, *p.AccountName
		}
		if p.RoleARN != nil && ch.add(contract.AttrRoleARN, cur.RoleARN, *p.RoleARN) {
			next.RoleARN = *p.RoleARN
		}
		if p.RotateExternalID {
			// The audit says that it changed, never the value.
			next.ExternalID = s.newExternalID()
			ch[contract.AttrExternalID] = change{Old: map[bool]string{true: "(set, not shown)", false: "(none)"}[cur.ExternalID != ""], New: "(rotated, not shown)"}
		}
		if p.Status != nil && ch.add(contract.AttrStatus, cur.Status, *p.Status) {
			next.Status = *p.Status
		}
		if len(ch) == 0 {
			return cur.account(), nil
		}
		now := s.now()
		next.UpdatedAt = Timestamp(now)
		next.Version = cur.Version + 1
		// The name is gsi1sk too: both change in the same write, so the
		// alphabetical list never shows the old name for the new account.
		upd := ddb.Expr{
			Update: "SET #name = :name, #gsi1sk = :gsi1sk, #role = :role, #status = :status, #updated = :updated, #version = :version, #ext = :ext",
			Names: map[string]string{"#name": contract.AttrAccountName, "#gsi1sk": contract.AttrGSI1SK, "#role": contract.AttrRoleARN, "#status": contract.AttrStatus,
				"#updated": contract.AttrUpdatedAt, "#version": contract.AttrVersion, "#ext": contract.AttrExternalID},
			Values: map[string]types.AttributeValue{":name": ddb.S(next.AccountName), ":gsi1sk": ddb.S(next.GSI1SK),
				":role": ddb.S(next.RoleARN), ":status": ddb.S(next.Status), ":updated": ddb.S(next.UpdatedAt),
				":version": ddb.N(next.Version)},
		}
		upd.Condition = versionIs(cur.Version, upd.Values)
		if next.ExternalID == "" {
			upd.Update = "SET #name = :name, #gsi1sk = :gsi1sk, #role = :role, #status = :status, #updated = :updated, #version = :version REMOVE #ext"
		} else {
			upd.Values[":ext"] = ddb.S(next.ExternalID)
		}
		op := s.update(accountKey(id), upd, ddb.MissingOr(ErrAccountNotFound, errStale))
		err = s.commit(ctx, now, user, Entity{EntityAccount, id}, ActionUpdate, map[string]any{"changes": ch}, op)
		if errors.Is(err, errStale) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return next.account(), nil
	}
	return nil, ErrConcurrentUpdate
}

// AccountQuery selects a page of accounts.
type AccountQuery struct {
	// Status filters by status; "" lists every account.
	Status AccountStatus
	// Limit is the page size, DefaultPageSize when 0.
	Limit  int
	Cursor string
}

// AccountPage is one page of accounts, by name.
type AccountPage struct {
	Accounts []Account `json:"accounts"`
	// Next is the cursor of the next page, "" on the last page.
	Next string `json:"next_cursor,omitempty"`
}

// Accounts lists accounts alphabetically by name (UTF-8 byte order) from
// GSI1, which is eventually consistent: an account created a moment ago may
// be missing. The status filter applies after DynamoDB's Limit; list keeps
// reading, so pages are full unless the listing ends.
func (s *Store) Accounts(ctx context.Context, q AccountQuery) (*AccountPage, error) {
	if q.Status != "" && !q.Status.valid() {
		return nil, fmt.Errorf("nucleus: unknown account status %q", q.Status)
	}
	l := listing{
		table: s.tables.App, index: true, partition: contract.KeyTypeAccount, forward: true, size: pageSize(q.Limit),
		scope: "nucleus/accounts?status=" + string(q.Status),
		expr:  partition(contract.AttrGSI1PK, contract.KeyTypeAccount),
	}
	if q.Status != "" {
		l.expr.Filter = "#status = :status"
		l.expr.Names["#status"], l.expr.Values[":status"] = contract.AttrStatus, ddb.S(q.Status)
	}
	items, next, err := s.list(ctx, l, q.Cursor)
	if err != nil {
		return nil, err
	}
	page := &AccountPage{Accounts: make([]Account, 0, len(items)), Next: next}
	for _, item := range items {
		var it accountItem
		if err := attributevalue.UnmarshalMap(item, &it); err != nil {
			return nil, fmt.Errorf("nucleus: unmarshal account: %w", err)
		}
		page.Accounts = append(page.Accounts, *it.account())
	}
	return page, nil
}

// changes records field changes for an UPDATE audit entry.
type changes map[string]change

type change struct {
	Old any `json:"old"`
	New any `json:"new"`
}

// add records field's change and reports whether the value differs.
func (c changes) add(field string, old, new any) bool {
	if old == new {
		return false
	}
	c[field] = change{Old: old, New: new}
	return true
}

// any reports whether one of fields changed.
func (c changes) any(fields ...string) bool {
	for _, f := range fields {
		if _, ok := c[f]; ok {
			return true
		}
	}
	return false
}

// errStale: the item changed between the read and the conditioned write.
var errStale = errors.New("nucleus: item changed since read")

// versionIs is the condition that the item's version is still the one
// read (its name #version; the value :read, which it adds to values): a
// read-modify-write's guard. An item of document 001's system has no
// version (read as 0: decision 15 added it, dynastack writes 1 and up) and
// is guarded by still having none; the write gives it one.
func versionIs(read int64, values map[string]types.AttributeValue) string {
	if read == 0 {
		return "attribute_not_exists(#version)"
	}
	values[":read"] = ddb.N(read)
	return "#version = :read"
}
