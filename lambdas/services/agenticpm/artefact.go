package agenticpm

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/google/uuid"

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
	// WriteToken is the token of the last update, never shown: the SDK's
	// retry of an update whose answer was lost finds it (the version has
	// moved on, by its own first attempt) and answers as that attempt
	// would have, instead of a version conflict.
	WriteToken string `dynamodbav:"writeToken,omitempty" json:"-"`
}

type artefactItem struct {
	keys
	Artefact
}

func artefactSK(t ArtefactType) string { return prefixArtefact + string(t) }

// PutArtefact writes the artefact's content if it is at version expected,
// and returns it at its new version. expected 0 creates it at version 1.
//
// Creation is a transaction with a ConditionCheck on the project, so no
// artefact is written under a project that does not exist. An update is
// one UpdateItem conditioned on the version (decision 7): an artefact at
// that version exists, so its project was checked when it was created
// (projects are archived, never deleted), and the update returns the new
// item, which a transaction cannot. The same update copies the old content
// errArtefactExists: a create (expected version 0) found the artefact
// written already.
var errArtefactExists = errors.New("agenticpm: artefact exists")

// to previousVersion: right-hand sides read the item before the write.
func (s *Store) PutArtefact(ctx context.Context, projectID string, typ ArtefactType, content Doc, expected int) (*Artefact, error) {
	if n, err := content.Size(); err != nil {
		return nil, err
	} else if n > MaxArtefactContentBytes {
		return nil, &TooLargeError{What: "content", Size: n, Limit: MaxArtefactContentBytes}
	}
	pk, sk := projectPK(projectID), artefactSK(typ)
	now := Timestamp(s.now())
	if expected == 0 {
		a := Artefact{ID: s.newID(), ProjectID: projectID, Type: typ, Content: content, Version: 1, CreatedAt: now, UpdatedAt: now}
		err := s.createInProject(ctx, projectID, artefactItem{keys: keys{PK: pk, SK: sk}, Artefact: a}, errArtefactExists)
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
	version, token := expression.Name("version"), uuid.NewString()
	upd := expression.Set(expression.Name("previousVersion"), expression.Name("content")).
		Set(expression.Name("content"), expression.Value(content)).
		Set(version, expression.Plus(version, expression.Value(1))).
		Set(expression.Name("updatedAt"), expression.Value(now)).
		Set(expression.Name("writeToken"), expression.Value(token))
	cond := expression.AttributeExists(expression.Name(attrPK)).And(version.Equal(expression.Value(expected)))
	var it artefactItem
	err := s.update(ctx, pk, sk, upd, &cond, &it)
	if err == nil {
		return &it.Artefact, nil
	}
	return ddb.OwnWrite(err, func(a *Artefact) string { return a.WriteToken }, token, func(old *Artefact) error {
		switch {
		case old == nil:
			return s.missingUnder(ctx, projectID, "artefact", string(typ))
		case old.Version != expected:
			return &VersionConflictError{Type: typ, Expected: expected, Current: old.Version}
		}
		return fmt.Errorf("agenticpm: update artefact %s: condition failed", typ)
	})
}

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
	found, err := s.get(ctx, projectPK(projectID), artefactSK(typ), &it)
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
	p, err := listUnder[Artefact](ctx, s, projectID, listing{view: "artefacts", pk: projectPK(projectID), prefix: prefixArtefact}, "", len(ArtefactTypes))
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
