package agenticpm

import (
	"context"
)

// Action is something the agent did or holds for later (PK PROJECT#<id>,
// SK ACTION#<ts>#<id>); it expires after ActionRetention.
type Action struct {
	ID          string `dynamodbav:"id" json:"id"`
	ProjectID   string `dynamodbav:"projectId" json:"projectId"`
	ActionType  string `dynamodbav:"actionType" json:"actionType"`
	Description string `dynamodbav:"description" json:"description"`
	Detail      Doc    `dynamodbav:"detail,omitempty" json:"detail,omitempty"`
	Confidence  Doc    `dynamodbav:"confidence,omitempty" json:"confidence,omitempty"`
	Executed    bool   `dynamodbav:"executed" json:"executed"`
	HeldUntil   string `dynamodbav:"heldUntil,omitempty" json:"heldUntil,omitempty"`
	ExecutedAt  string `dynamodbav:"executedAt,omitempty" json:"executedAt,omitempty"`
	CreatedAt   string `dynamodbav:"createdAt" json:"createdAt"`
	// The hold queue's attributes (not in the document): who released a
	// held action, when it was cancelled instead, and when its event
	// reached the bus (EventID is EventBridge's id of it).
	ReleasedBy   string `dynamodbav:"releasedBy,omitempty" json:"releasedBy,omitempty"`
	CancelledAt  string `dynamodbav:"cancelledAt,omitempty" json:"cancelledAt,omitempty"`
	DispatchedAt string `dynamodbav:"dispatchedAt,omitempty" json:"dispatchedAt,omitempty"`
	EventID      string `dynamodbav:"eventId,omitempty" json:"eventId,omitempty"`
}

type actionItem struct {
	keys
	Action
	// DispatchLease (epoch ms) is set while the action waits in the
	// outbox: until then only the holder sends its event.
	DispatchLease int64 `dynamodbav:"dispatchLease,omitempty" json:"-"`
	// WriteToken is the token of the last conditional change, never
	// shown: a change whose answer was lost finds it in the item its
	// retried condition fails on, and succeeds as its first attempt did.
	WriteToken string `dynamodbav:"writeToken,omitempty" json:"-"`
}

// NewAction is the input of RecordAction. HeldUntil is a Timestamp or "".
type NewAction struct {
	ActionType, Description string
	Detail, Confidence      Doc
	HeldUntil               string
}

// RecordAction stores a not yet executed action under an existing project.
func (s *Store) RecordAction(ctx context.Context, projectID string, in NewAction) (*Action, error) {
	t := s.now()
	ts := Timestamp(t)
	a := Action{ID: s.newULID(t), ProjectID: projectID, ActionType: in.ActionType, Description: in.Description,
		Detail: in.Detail, Confidence: in.Confidence, HeldUntil: in.HeldUntil, CreatedAt: ts}
	if a.Detail.IsNull() {
		a.Detail = nil
	}
	if a.Confidence.IsNull() {
		a.Confidence = nil
	}
	k := keys{PK: projectPK(projectID), SK: prefixAction + ts + "#" + a.ID, TTL: expiry(t, ActionRetention)}
	if a.HeldUntil != "" {
		// The hold queue's sparse entry (decision 9).
		k.GSI1PK, k.GSI1SK = heldKeys(a.HeldUntil, a.ID)
	}
	if err := s.createInProject(ctx, projectID, actionItem{keys: k, Action: a}, nil); err != nil {
		return nil, err
	}
	return &a, nil
}

// ListActions returns a project's live actions, newest first, held,
// released and cancelled alike; ListHeldActions is the hold queue.
func (s *Store) ListActions(ctx context.Context, projectID, after string, limit int) (*Page[Action], error) {
	return listUnder[Action](ctx, s, projectID, listing{view: "project-actions", pk: projectPK(projectID),
		prefix: prefixAction, newestFirst: true}, after, limit)
}
