package agenticpm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Artefact is one of a project's four living documents (PK PROJECT#<id>,
// SK ARTEFACT#<type>), with a one-deep undo copy.
type Artefact struct {
	ID              string       `dynamodbav:"id" json:"id"`
	ProjectID       string       `dynamodbav:"projectId" json:"projectId"`
	Type            ArtefactType `dynamodbav:"type" json:"type"`
	Content         Doc          `dynamodbav:"content" json:"content"`
	PreviousVersion Doc          `dynamodbav:"previousVersion,omitempty" json:"previousVersion,omitempty"`
	Version         int          `dynamodbav:"version" json:"version"`
	CreatedAt       string       `dynamodbav:"createdAt" json:"createdAt"`
	UpdatedAt       string       `dynamodbav:"updatedAt" json:"updatedAt"`
}

type artefactItem struct {
	keys
	Artefact
}

// EventTypeArtefactUpdated is the feed event of every artefact write
// (create, update, undo), in the transaction of the write (decision 20).
const EventTypeArtefactUpdated = "artefact_updated"

func artefactSK(t ArtefactType) string { return contract.PrefixArtefact + string(t) }

// errArtefactExists: a create (expected version 0) found the artefact
// written already.
var errArtefactExists = errors.New("agenticpm: artefact exists")

// errArtefactMoved: an update's or undo's condition on the version read
// failed.
var errArtefactMoved = errors.New("agenticpm: artefact version moved")

// artefactEvent is the artefact_updated event of a write of a.
func artefactEvent(a Artefact, how string) NewEvent {
	return NewEvent{ProjectID: a.ProjectID, EventType: EventTypeArtefactUpdated, Severity: SeverityInfo,
		Summary: "Artefact " + string(a.Type) + " " + how + " (version " + strconv.Itoa(a.Version) + ")",
		Detail:  Doc(mustJSON(map[string]any{"artefactId": a.ID, "type": a.Type, "version": a.Version, "change": how}))}
}

// PutArtefact writes the artefact's content if it is at version expected,
// and returns it at its new version. expected 0 creates it at version 1.
// content must already satisfy the type's schema (validateContent).
//
// Every write is one transaction with its artefact_updated event (to the
// project's feed and GLOBAL), so the feed never reports a write that did
// not happen or misses one that did; DynamoDB's client request token makes
// the SDK's retry after a lost answer succeed instead of conflicting with
// its own first attempt. Creation adds the project check (decision 12). An
// update first reads the artefact (consistent) for its answer, and is
// conditioned on the version (decision 7): SET previousVersion = content
// takes the undo copy in the same write, as right-hand sides read the item
// before it.
func (s *Store) PutArtefact(ctx context.Context, projectID string, typ ArtefactType, content Doc, expected int) (*Artefact, error) {
	if n, err := content.Size(); err != nil {
		return nil, err
	} else if n > MaxArtefactContentBytes {
		return nil, &TooLargeError{What: "content", Size: n, Limit: MaxArtefactContentBytes}
	}
	t := s.now()
	now := Timestamp(t)
	if expected == 0 {
		a := Artefact{ID: s.newID(), ProjectID: projectID, Type: typ, Content: content, Version: 1, CreatedAt: now, UpdatedAt: now}
		put, err := s.putNew(artefactItem{keys: keys{PK: contract.ProjectPK(projectID), SK: artefactSK(typ)}, Artefact: a}, errArtefactExists)
		if err != nil {
			return nil, err
		}
		_, events, err := s.eventWrites(artefactEvent(a, "created"), t)
		if err != nil {
			return nil, err
		}
		err = s.transactInProject(ctx, projectID, append(ddb.Tx{put}, events...))
		if errors.Is(err, errArtefactExists) {
			var cur Artefact
			_, _ = ddb.OldItem(err, &cur)
			return nil, &VersionConflictError{Type: typ, Expected: 0, Current: cur.Version}
		}
		if err != nil {
			return nil, err
		}
		return &a, nil
	}
	a, err := s.artefactAt(ctx, projectID, typ, expected)
	if err != nil {
		return nil, err
	}
	a.PreviousVersion, a.Content, a.Version, a.UpdatedAt = a.Content, content, expected+1, now
	// Content was checked by Size above, so it converts.
	av, err := content.AttributeValue()
	if err != nil {
		return nil, err
	}
	upd := ddb.Expr{Update: "#previous = #content, #content = :content",
		Names:  map[string]string{"#previous": contract.AttrPreviousVersion, "#content": contract.AttrContent},
		Values: map[string]types.AttributeValue{":content": av}}
	if err := s.writeArtefact(ctx, *a, upd, expected, "updated", t); err != nil {
		return nil, err
	}
	return a, nil
}

// UndoArtefact restores an artefact's previousVersion as its content, if
// it is at version expected (the version the caller read: an undo must not
// throw away a write it has not seen). One-deep, as the document says:
// the undo removes previousVersion, so a second undo is a 409 until the
// next update; the version moves on (expected + 1) like any write, with
// its artefact_updated event in the same transaction.
func (s *Store) UndoArtefact(ctx context.Context, projectID string, typ ArtefactType, expected int) (*Artefact, error) {
	t := s.now()
	a, err := s.artefactAt(ctx, projectID, typ, expected)
	if err != nil {
		return nil, err
	}
	if a.PreviousVersion == nil {
		return nil, &NothingToUndoError{Type: typ, Version: a.Version}
	}
	a.Content, a.PreviousVersion, a.Version, a.UpdatedAt = a.PreviousVersion, nil, expected+1, Timestamp(t)
	upd := ddb.Expr{Update: "#content = #previous REMOVE #previous",
		Names:  map[string]string{"#previous": contract.AttrPreviousVersion, "#content": contract.AttrContent},
		Values: map[string]types.AttributeValue{}}
	if err := s.writeArtefact(ctx, *a, upd, expected, "restored to its previous version", t); err != nil {
		var nothing *NothingToUndoError
		if errors.As(err, &nothing) {
			nothing.Version = expected
		}
		return nil, err
	}
	return a, nil
}

// artefactAt reads an artefact that a write expects at version expected.
func (s *Store) artefactAt(ctx context.Context, projectID string, typ ArtefactType, expected int) (*Artefact, error) {
	a, err := s.GetArtefact(ctx, projectID, typ)
	if err != nil {
		return nil, err
	}
	if a.Version != expected {
		return nil, &VersionConflictError{Type: typ, Expected: expected, Current: a.Version}
	}
	return a, nil
}

// writeArtefact runs upd, written out (ddb.Expr: the SET of the content,
// perhaps a REMOVE after it), plus the version and updatedAt on a, which
// was read at version expected, conditioned on that version, with the
// artefact_updated event, in one transaction.
func (s *Store) writeArtefact(ctx context.Context, a Artefact, upd ddb.Expr, expected int, how string, t time.Time) error {
	upd.Update = "SET #version = #version + :one, #updatedAt = :updatedAt, " + upd.Update
	upd.Condition = "attribute_exists(#pk) AND #version = :expected"
	upd.Names["#version"], upd.Names["#updatedAt"], upd.Names["#pk"] = contract.AttrVersion, contract.AttrUpdatedAt, contract.AttrPK
	upd.Values[":one"], upd.Values[":updatedAt"] = &types.AttributeValueMemberN{Value: "1"}, ddb.S(a.UpdatedAt)
	upd.Values[":expected"] = ddb.N(int64(expected))
	if a.PreviousVersion == nil {
		// An undo: the copy it restores must still be there.
		upd.Condition += " AND attribute_exists(#previous)"
	}
	_, events, err := s.eventWrites(artefactEvent(a, how), t)
	if err != nil {
		return err
	}
	u := upd.TxUpdate(s.table, key(contract.ProjectPK(a.ProjectID), artefactSK(a.Type)))
	u.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	var tx ddb.Tx
	tx.Update(u, errArtefactMoved)
	err = storeError("TransactWriteItems", append(tx, events...).Run(ctx, s.client))
	if !errors.Is(err, errArtefactMoved) {
		return err
	}
	return ddb.IfConditionFailed(err, func(old *Artefact) error {
		switch {
		case old == nil:
			return s.missingUnder(ctx, a.ProjectID, "artefact", string(a.Type))
		case old.Version != expected:
			return &VersionConflictError{Type: a.Type, Expected: expected, Current: old.Version}
		case old.PreviousVersion == nil:
			return &NothingToUndoError{Type: a.Type, Version: old.Version}
		}
		return fmt.Errorf("agenticpm: write artefact %s: condition failed", a.Type)
	})
}

// NothingToUndoError is an undo of an artefact without a previous version
// (never updated, or undone already: undo is one deep).
type NothingToUndoError struct {
	Type    ArtefactType
	Version int
}

func (e *NothingToUndoError) Error() string {
	return fmt.Sprintf("agenticpm: artefact %s at version %d has no previous version to restore (undo is one deep)", e.Type, e.Version)
}

// Is implements errors.Is: it is a version conflict of a kind.
func (e *NothingToUndoError) Is(target error) bool { return target == ErrVersionConflict }

func (e *NothingToUndoError) HTTPStatus() int                    { return http.StatusConflict }
func (e *NothingToUndoError) ErrorCode() string                  { return api.CodeConflict }
func (e *NothingToUndoError) PublicMessage(string, error) string { return public(e) }

// missingUnder tells which of a project and its child is missing.
func (s *Store) missingUnder(ctx context.Context, projectID, entity, id string) error {
	if _, err := s.GetProject(ctx, projectID); err != nil {
		return err
	}
	return &NotFoundError{Entity: entity, ID: id}
}

// GetArtefact returns one artefact of a project.
func (s *Store) GetArtefact(ctx context.Context, projectID string, typ ArtefactType) (*Artefact, error) {
	var it artefactItem
	found, err := s.get(ctx, contract.ProjectPK(projectID), artefactSK(typ), &it)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, s.missingUnder(ctx, projectID, "artefact", string(typ))
	}
	return &it.Artefact, nil
}

// ListArtefacts returns all artefacts of a project (at most one per type).
func (s *Store) ListArtefacts(ctx context.Context, projectID string) ([]Artefact, error) {
	p, err := listUnder[Artefact](ctx, s, projectID, listing{view: "artefacts", pk: contract.ProjectPK(projectID), prefix: contract.PrefixArtefact}, "", len(ArtefactTypes))
	if err != nil {
		return nil, err
	}
	return p.Items, nil
}

// listUnder is listPage for a project's partition: an empty first page of
// a project that does not exist is a NotFoundError, not an empty list.
func listUnder[T any](ctx context.Context, s *Store, projectID string, l listing, after string, limit int) (*Page[T], error) {
	p, err := listPage[T](ctx, s, l, after, limit)
	if err != nil {
		return nil, err
	}
	if len(p.Items) == 0 && after == "" {
		if _, err := s.GetProject(ctx, projectID); err != nil {
			return nil, err
		}
	}
	return p, nil
}
