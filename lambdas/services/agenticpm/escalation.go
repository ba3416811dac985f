package agenticpm

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/google/uuid"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Escalation is a decision the agent hands to the user (PK PROJECT#<id>,
// SK ESCALATION#<id>).
type Escalation struct {
	ID                  string           `dynamodbav:"id" json:"id"`
	ProjectID           string           `dynamodbav:"projectId" json:"projectId"`
	Title               string           `dynamodbav:"title" json:"title"`
	Context             Doc              `dynamodbav:"context" json:"context"`
	Options             Doc              `dynamodbav:"options" json:"options"`
	AgentRecommendation string           `dynamodbav:"agentRecommendation,omitempty" json:"agentRecommendation,omitempty"`
	AgentRationale      string           `dynamodbav:"agentRationale,omitempty" json:"agentRationale,omitempty"`
	Status              EscalationStatus `dynamodbav:"status" json:"status"`
	UserDecision        string           `dynamodbav:"userDecision,omitempty" json:"userDecision,omitempty"`
	UserNotes           string           `dynamodbav:"userNotes,omitempty" json:"userNotes,omitempty"`
	DecidedAt           string           `dynamodbav:"decidedAt,omitempty" json:"decidedAt,omitempty"`
	CreatedAt           string           `dynamodbav:"createdAt" json:"createdAt"`
}

type escalationItem struct {
	keys
	Escalation
	// WriteToken is the token of the last conditional change, never
	// shown: a change whose answer was lost finds it in the item its
	// retried condition fails on, and succeeds as its first attempt did.
	WriteToken string `dynamodbav:"writeToken,omitempty" json:"-"`
}

// NewEscalation is the input of CreateEscalation.
type NewEscalation struct {
	Title                               string
	Context, Options                    Doc
	AgentRecommendation, AgentRationale string
}

// CreateEscalation stores a pending escalation under an existing project.
func (s *Store) CreateEscalation(ctx context.Context, projectID string, in NewEscalation) (*Escalation, error) {
	ts := Timestamp(s.now())
	e := Escalation{ID: s.newID(), ProjectID: projectID, Title: in.Title, Context: in.Context, Options: in.Options,
		AgentRecommendation: in.AgentRecommendation, AgentRationale: in.AgentRationale,
		Status: EscalationPending, CreatedAt: ts}
	err := s.createInProject(ctx, projectID, escalationItem{
		keys:       keys{PK: projectPK(projectID), SK: prefixEscalation + e.ID, GSI1PK: escalationGSI1PK(e.Status), GSI1SK: ts + "#" + e.ID},
		Escalation: e,
	}, nil)
	if err != nil {
		return nil, err
	}
	return &e, nil
}

// Decision is the user's answer to an escalation.
type Decision struct {
	UserDecision string
	UserNotes    string
}

// Decide records the decision on a pending escalation and returns it.
//
// One conditional UpdateItem sets status, GSI1PK and the decision together
// (decision 6), conditioned on the escalation existing and being pending:
// of two concurrent decisions exactly one wins, the other gets a
// StatusConflictError; a decision on a missing escalation creates nothing.
func (s *Store) Decide(ctx context.Context, projectID, id string, d Decision) (*Escalation, error) {
	now := Timestamp(s.now())
	upd := expression.Set(expression.Name("status"), expression.Value(EscalationDecided)).
		Set(expression.Name(attrGSI1PK), expression.Value(escalationGSI1PK(EscalationDecided))).
		Set(expression.Name("userDecision"), expression.Value(d.UserDecision)).
		Set(expression.Name("decidedAt"), expression.Value(now))
	token := uuid.NewString()
	upd = upd.Set(expression.Name("writeToken"), expression.Value(token))
	if d.UserNotes != "" {
		upd = upd.Set(expression.Name("userNotes"), expression.Value(d.UserNotes))
	}
	cond := expression.AttributeExists(expression.Name(attrPK)).
		And(expression.Name("status").Equal(expression.Value(EscalationPending)))
	var it escalationItem
	err := s.update(ctx, projectPK(projectID), prefixEscalation+id, upd, &cond, &it)
	if err == nil {
		return &it.Escalation, nil
	}
	mine, err := ddb.OwnWrite(err, func(e *escalationItem) string { return e.WriteToken }, token, func(old *escalationItem) error {
		switch {
		case old == nil:
			return s.missingUnder(ctx, projectID, "escalation", id)
		case old.Status != EscalationPending:
			return &StatusConflictError{Entity: "escalation", ID: id, Want: string(EscalationPending), Current: string(old.Status)}
		}
		return fmt.Errorf("agenticpm: decide escalation %s: condition failed", id)
	})
	if err != nil {
		return nil, err
	}
	return &mine.Escalation, nil
}

// ListProjectEscalations returns a project's escalations in key (id) order.
func (s *Store) ListProjectEscalations(ctx context.Context, projectID, after string, limit int) (*Page[Escalation], error) {
	return listUnder[Escalation](ctx, s, projectID, listing{view: "project-escalations", pk: projectPK(projectID), prefix: prefixEscalation}, after, limit)
}

// ListEscalations returns the escalations in status across projects,
// newest first. It reads GSI1, which is eventually consistent: an
// escalation decided a moment ago can still be listed as pending.
func (s *Store) ListEscalations(ctx context.Context, status EscalationStatus, after string, limit int) (*Page[Escalation], error) {
	return listPage[Escalation](ctx, s, listing{view: "escalations-by-status", index: true, pk: escalationGSI1PK(status), newestFirst: true}, after, limit)
}
