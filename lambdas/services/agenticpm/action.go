package agenticpm

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
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
	// WriteToken is the token of the last conditional change (a cancel,
	// MarkExecuted), never shown: a change whose answer was lost finds it
	// in the item its retried condition fails on, and succeeds as its
	// first attempt did.
	WriteToken string `dynamodbav:"writeToken,omitempty" json:"-"`
}

// The hold's default: an action created held without a time waits
// HoldQueueKey minutes (the agent setting, else its documented 30).
const (
	HoldQueueKey = "hold_queue_minutes"
	// MaxHoldQueue bounds the setting (a week), and a given heldUntil.
	MaxHoldQueue = 7 * 24 * time.Hour
	// MinHold is how far ahead a given heldUntil must be at least: a hold
	// is the time a person has to cancel, and one that is due already (or
	// within the release job's one-minute schedule) is released at the
	// job's next run, before anyone can (issue 29). An action done now is
	// recorded without held and heldUntil.
	MinHold = time.Minute
)

// NewAction is the input of RecordAction. HeldUntil is a Timestamp or "";
// Held without HeldUntil holds the action for the configured
// hold_queue_minutes.
type NewAction struct {
	ActionType, Description string
	Detail, Confidence      Doc
	HeldUntil               string
	Held                    bool
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
	if in.Held && a.HeldUntil == "" {
		minutes, err := s.settingNumber(ctx, HoldQueueKey, 1, MaxHoldQueue.Minutes())
		if err != nil {
			return nil, err
		}
		a.HeldUntil = Timestamp(t.Add(time.Duration(minutes * float64(time.Minute))))
	}
	k := keys{PK: contract.ProjectPK(projectID), SK: contract.ActionSK(ts, a.ID), TTL: expiry(t, ActionRetention)}
	if a.HeldUntil != "" {
		// The hold queue's sparse entry (decision 9).
		k.GSI1PK, k.GSI1SK = heldKeys(a.HeldUntil, a.ID)
	}
	if err := s.createInProject(ctx, projectID, actionItem{keys: k, Action: a}, nil); err != nil {
		return nil, err
	}
	return &a, nil
}

// MarkExecuted records that the agent carried out an action it recorded
// without a hold: one UpdateItem sets executed and executedAt, conditioned
// on the action being live, not executed, never held (held actions go
// through release, whose transaction writes their feed event) and not
// cancelled, so it happens once. A token in the item makes the SDK's
// retry of a marking whose answer was lost a success, not a 409.
func (s *Store) MarkExecuted(ctx context.Context, projectID, id string) (*Action, error) {
	a, err := s.actionItemByID(ctx, projectID, id)
	if err != nil {
		return nil, err
	}
	now := s.now()
	token := uuid.NewString()
	var out actionItem
	err = s.update(ctx, a.PK, a.SK, ddb.Expr{
		Update: "SET #executed = :true, #executedAt = :at, #token = :token",
		Condition: "attribute_exists(#pk) AND #executed = :false AND attribute_not_exists(#heldUntil)" +
			" AND attribute_not_exists(#cancelledAt) AND " + liveCond,
		Names: map[string]string{"#executed": contract.AttrExecuted, "#executedAt": contract.AttrExecutedAt, "#token": contract.AttrWriteToken,
			"#pk": contract.AttrPK, "#heldUntil": contract.AttrHeldUntil, "#cancelledAt": contract.AttrCancelledAt, "#ttl": contract.AttrTTL},
		Values: map[string]types.AttributeValue{
			":true": &types.AttributeValueMemberBOOL{Value: true}, ":false": &types.AttributeValueMemberBOOL{Value: false},
			":at": ddb.S(Timestamp(now)), ":token": ddb.S(token), ":now": unixNumber(now),
		},
	}, &out)
	if err == nil {
		return &out.Action, nil
	}
	mine, err := ddb.OwnWrite(err, func(a *actionItem) string { return a.WriteToken }, token, func(old *actionItem) error {
		if old == nil || old.TTL != 0 && old.TTL <= now.Unix() {
			return &NotFoundError{Entity: "action", ID: id}
		}
		cur := "executed"
		switch {
		case old.Executed:
		case old.CancelledAt != "":
			cur = "cancelled"
		case old.HeldUntil != "":
			cur = "held (release it instead)"
		default:
			return fmt.Errorf("agenticpm: mark action %s executed: condition failed", id)
		}
		return &StatusConflictError{Entity: "action", ID: id, Want: "recorded without a hold and not executed", Current: cur}
	})
	if err != nil {
		return nil, err
	}
	return &mine.Action, nil
}

// ListActions returns a project's live actions, newest first, held,
// released and cancelled alike; ListHeldActions is the hold queue.
func (s *Store) ListActions(ctx context.Context, projectID, after string, limit int) (*Page[Action], error) {
	return listUnder[Action](ctx, s, projectID, listing{view: "project-actions", pk: contract.ProjectPK(projectID),
		prefix: contract.PrefixAction, newestFirst: true}, after, limit)
}
