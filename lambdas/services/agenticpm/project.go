package agenticpm

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Project is a managed project (PK PROJECT#<id>, SK METADATA).
type Project struct {
	ID               string        `dynamodbav:"id" json:"id"`
	Name             string        `dynamodbav:"name" json:"name"`
	Description      string        `dynamodbav:"description,omitempty" json:"description,omitempty"`
	Status           ProjectStatus `dynamodbav:"status" json:"status"`
	Source           Source        `dynamodbav:"source" json:"source"`
	SourceProjectKey string        `dynamodbav:"sourceProjectKey" json:"sourceProjectKey"`
	AutonomyLevel    AutonomyLevel `dynamodbav:"autonomyLevel" json:"autonomyLevel"`
	Config           Doc           `dynamodbav:"config" json:"config"`
	CreatedAt        string        `dynamodbav:"createdAt" json:"createdAt"`
	UpdatedAt        string        `dynamodbav:"updatedAt" json:"updatedAt"`
}

type projectItem struct {
	keys
	Project
	// WriteToken is the token of the last conditional change, never
	// shown: a change whose answer was lost finds it in the item its
	// retried condition fails on, and succeeds as its first attempt did.
	WriteToken string `dynamodbav:"writeToken,omitempty" json:"-"`
}

// NewProject is the input of CreateProject. Status defaults to active,
// Config to {}.
type NewProject struct {
	Name, Description string
	Status            ProjectStatus
	Source            Source
	SourceProjectKey  string
	AutonomyLevel     AutonomyLevel
	Config            Doc
}

// CreateProject stores a new project.
func (s *Store) CreateProject(ctx context.Context, in NewProject) (*Project, error) {
	now := Timestamp(s.now())
	p := Project{
		ID: s.newID(), Name: in.Name, Description: in.Description, Status: in.Status,
		Source: in.Source, SourceProjectKey: in.SourceProjectKey, AutonomyLevel: in.AutonomyLevel,
		Config: in.Config, CreatedAt: now, UpdatedAt: now,
	}
	if p.Status == "" {
		p.Status = ProjectActive
	}
	if p.Config.IsNull() {
		p.Config = Doc("{}")
	}
	if n, err := p.Config.Size(); err != nil {
		return nil, err
	} else if n > MaxProjectConfigBytes {
		return nil, &TooLargeError{What: "config", Size: n, Limit: MaxProjectConfigBytes}
	}
	item, err := marshalItem(projectItem{
		keys:    keys{PK: contract.ProjectPK(p.ID), SK: contract.KeyMetadata, GSI1PK: contract.StatusGSI1PK(string(p.Status)), GSI1SK: contract.PrefixProject + p.ID},
		Project: p,
	})
	if err != nil {
		return nil, err
	}
	if err := s.create(ctx, item); err != nil {
		return nil, err
	}
	return &p, nil
}

// GetProject returns the project with id.
func (s *Store) GetProject(ctx context.Context, id string) (*Project, error) {
	var it projectItem
	found, err := s.get(ctx, contract.ProjectPK(id), contract.KeyMetadata, &it)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, &NotFoundError{Entity: "project", ID: id}
	}
	return &it.Project, nil
}

// ProjectPatch lists the changes of UpdateProject; nil fields stay as they
// are. ClearDescription removes the description.
type ProjectPatch struct {
	Name             *string
	Description      *string
	ClearDescription bool
	Status           *ProjectStatus
	Source           *Source
	SourceProjectKey *string
	AutonomyLevel    *AutonomyLevel
	Config           Doc // replaces the whole map when set
}

func (p ProjectPatch) empty() bool {
	return p.Name == nil && p.Description == nil && !p.ClearDescription && p.Status == nil &&
		p.Source == nil && p.SourceProjectKey == nil && p.AutonomyLevel == nil && p.Config.IsNull()
}

// UpdateProject applies patch and returns the updated project.
//
// A status change sets status and GSI1PK in the same conditional update,
// so the STATUS# views never list a project under a status it left
// (decision 6). The condition is on the status the project had when read:
// of two concurrent status changes only one wins, the other is a
// StatusConflictError instead of a silent overwrite. Changes without a
// status need no read: they are conditioned on existence only.
func (s *Store) UpdateProject(ctx context.Context, id string, patch ProjectPatch) (*Project, error) {
	now := Timestamp(s.now())
	// Written out (ddb.Expr); each attribute set is #name = :name.
	upd := ddb.Expr{
		Update:    "SET #updatedAt = :updatedAt",
		Condition: "attribute_exists(#pk)",
		Names:     map[string]string{"#updatedAt": contract.AttrUpdatedAt, "#pk": contract.AttrPK},
		Values:    map[string]types.AttributeValue{":updatedAt": ddb.S(now)},
	}
	set := func(name string, v types.AttributeValue) {
		upd.Update += ", #" + name + " = :" + name
		upd.Names["#"+name], upd.Values[":"+name] = name, v
	}
	remove := ""
	if patch.Name != nil {
		set(contract.AttrName, ddb.S(*patch.Name))
	}
	switch {
	case patch.ClearDescription:
		remove = " REMOVE #description"
		upd.Names["#description"] = contract.AttrDescription
	case patch.Description != nil:
		set(contract.AttrDescription, ddb.S(*patch.Description))
	}
	if patch.Source != nil {
		set(contract.AttrSource, ddb.S(*patch.Source))
	}
	if patch.SourceProjectKey != nil {
		set(contract.AttrSourceProjectKey, ddb.S(*patch.SourceProjectKey))
	}
	if patch.AutonomyLevel != nil {
		set(contract.AttrAutonomyLevel, ddb.S(*patch.AutonomyLevel))
	}
	if !patch.Config.IsNull() {
		// Bounded so that no patch can grow the item past the limit: the
		// other fields are bounded in characters.
		if n, err := patch.Config.Size(); err != nil {
			return nil, err
		} else if n > MaxProjectConfigBytes {
			return nil, &TooLargeError{What: "config", Size: n, Limit: MaxProjectConfigBytes}
		}
		av, err := patch.Config.AttributeValue()
		if err != nil {
			return nil, err
		}
		set(contract.AttrConfig, av)
	}
	token := uuid.NewString()
	set(contract.AttrWriteToken, ddb.S(token))
	var from ProjectStatus
	if patch.Status != nil {
		cur, err := s.GetProject(ctx, id)
		if err != nil {
			return nil, err
		}
		from = cur.Status
		set(contract.AttrStatus, ddb.S(*patch.Status))
		set(contract.AttrGSI1PK, ddb.S(contract.StatusGSI1PK(string(*patch.Status))))
		upd.Condition += " AND #status = :from"
		upd.Values[":from"] = ddb.S(from)
	}
	upd.Update += remove
	var it projectItem
	err := s.update(ctx, contract.ProjectPK(id), contract.KeyMetadata, upd, &it)
	if err == nil {
		return &it.Project, nil
	}
	mine, err := ddb.OwnWrite(err, func(p *projectItem) string { return p.WriteToken }, token, func(old *projectItem) error {
		switch {
		case old == nil:
			return &NotFoundError{Entity: "project", ID: id}
		case patch.Status != nil && old.Status != from:
			return &StatusConflictError{Entity: "project", ID: id, Want: string(from), Current: string(old.Status)}
		}
		return fmt.Errorf("agenticpm: update project %s: condition failed", id)
	})
	if err != nil {
		return nil, err
	}
	return &mine.Project, nil
}

// ListProjects returns the projects in status, GSI1 order (by id).
//
// GSI1 is eventually consistent: a project created or moved a moment ago
// can be missing from, or still listed under, its old status for a short
// while.
func (s *Store) ListProjects(ctx context.Context, status ProjectStatus, after string, limit int) (*Page[Project], error) {
	return listPage[Project](ctx, s, listing{view: "projects-by-status", index: true,
		pk: contract.StatusGSI1PK(string(status)), prefix: contract.PrefixProject}, after, limit)
}
