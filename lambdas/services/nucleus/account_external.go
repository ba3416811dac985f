package nucleus

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// externalIDPrefix starts every external id Nucleus generates.
const externalIDPrefix = "nucleus-"

// IsGeneratedExternalID tells an external id NewExternalID made from one a
// caller chose before issue 20.
func IsGeneratedExternalID(s string) bool {
	h, ok := strings.CutPrefix(s, externalIDPrefix)
	if !ok || len(h) != 2*externalIDBytes {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil && strings.ToLower(h) == h
}

// ErrExternalIDSet: the account has an external id already; nothing done.
var ErrExternalIDSet = errors.New("nucleus: the account has an external id already")

// GenerateMissingExternalID gives an account registered before Nucleus
// generated external ids its first one, with the audit entry of a
// rotation, and returns the account with it shown (the only time). It is
// the data migration's (services/nucleus/migrations), not an API route:
// the write is conditioned on the account still having no external id at
// the version read (or, on an account of document 001's system, which has
// no version, on its still having none), so a re-run, or a rotation
// through the API in between, never replaces an id (ErrExternalIDSet).
func (s *Store) GenerateMissingExternalID(ctx context.Context, user, id string) (*CreatedAccount, error) {
	for range updateAttempts {
		cur, err := s.accountItem(ctx, id)
		if err != nil {
			return nil, err
		}
		if cur.ExternalID != "" {
			return nil, ErrExternalIDSet
		}
		next := *cur
		now := s.now()
		next.ExternalID = s.newExternalID()
		next.UpdatedAt = Timestamp(now)
		next.Version = cur.Version + 1
		x := ddb.Expr{
			Update: "SET #ext = :ext, #updated = :updated, #version = :version",
			Names:  map[string]string{"#ext": contract.AttrExternalID, "#updated": contract.AttrUpdatedAt, "#version": contract.AttrVersion},
			Values: map[string]types.AttributeValue{":ext": ddb.S(next.ExternalID), ":updated": ddb.S(next.UpdatedAt),
				":version": ddb.N(next.Version)},
		}
		// An account of document 001's system has no version yet: this
		// write gives it version 1 (versionIs).
		x.Condition = versionIs(cur.Version, x.Values) + " AND attribute_not_exists(#ext)"
		op := s.update(accountKey(id), x, ddb.MissingOr(ErrAccountNotFound, errStale))
		ch := changes{contract.AttrExternalID: change{Old: "(none)", New: "(rotated, not shown)"}}
		err = s.commit(ctx, now, user, Entity{EntityAccount, id}, ActionUpdate, map[string]any{"changes": ch}, op)
		if errors.Is(err, errStale) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return next.account().Shown(), nil
	}
	return nil, ErrConcurrentUpdate
}
