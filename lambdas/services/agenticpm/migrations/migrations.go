// Package migrations holds AgenticPM's data migrations (`make migrate
// SERVICE=agenticpm`, docs/schemas/agenticpm.md "Cutover"): operator code,
// run by ops/migrate, never linked into a Lambda function.
package migrations

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/ops/migrate"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/ids"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

// Migrations are AgenticPM's, in the order they run.
func Migrations() []migrate.Migration {
	return []migrate.Migration{
		{
			ID: "agenticpm-0001-hold-queue",
			Description: "held actions without the HOLD#pending entry are indexed into the hold queue (heldUntil in the fixed-width form, " +
				"the sort key re-keyed where release could not find it); overdue ones go at the release job's next run, and are reported",
			Table: contract.Table,
			Check: checkHeld,
			Apply: applyHeld,
		},
		{
			ID:          "agenticpm-0002-integrations-reentry",
			Description: "integration configs stored the old way (configEncrypted without encryptionContext) are listed for re-entry (PUT)",
			Table:       contract.Table,
			Check:       checkIntegration,
			Apply:       reportIntegration,
		},
	}
}

// held is what the hold queue needs of a legacy held action.
type held struct {
	id, pk, sk        string
	heldUntil         string // fixed-width
	sk2               string // the sort key release finds it by, when the old one differs
	overdue           time.Duration
	problem, changing string
}

// inspect says whether item is a held action the queue does not know and
// what indexing it takes. The original wrote heldUntil and the sort key's
// timestamp with JavaScript's toISOString (milliseconds); release finds an
// action by the Query of its ULID's millisecond over ACTION#<µs ts>, which
// a millisecond key sorts outside of, so such an action is re-keyed.
func inspect(item migrate.Item, now time.Time) (h held, needed bool) {
	h.pk, h.sk = migrate.String(item, contract.AttrPK), migrate.String(item, contract.AttrSK)
	if !strings.HasPrefix(h.pk, contract.PrefixProject) || !strings.HasPrefix(h.sk, contract.PrefixAction) {
		return h, false
	}
	exec, _ := item[contract.AttrExecuted].(*types.AttributeValueMemberBOOL)
	raw := migrate.String(item, contract.AttrHeldUntil)
	if raw == "" || exec == nil || exec.Value || migrate.Has(item, contract.AttrCancelledAt) || migrate.Has(item, contract.AttrGSI1PK) {
		return h, false
	}
	if expired(item, now) {
		return h, false
	}
	h.id = migrate.String(item, contract.AttrID)
	var changes []string
	norm, changed, ok := migrate.Timestamp(raw)
	if !ok {
		h.problem = fmt.Sprintf("%s %q is no timestamp", contract.AttrHeldUntil, raw)
		return h, true
	}
	h.heldUntil = norm
	if changed {
		changes = append(changes, fmt.Sprintf("%s %s → %s", contract.AttrHeldUntil, raw, norm))
	}
	at, ok := ids.ULIDTime(h.id)
	if !ok {
		h.problem = fmt.Sprintf("id %q is no ULID: release and cancel cannot address it", h.id)
		return h, true
	}
	from := contract.ActionSK(agenticpm.Timestamp(at), "")
	to := contract.ActionSK(agenticpm.Timestamp(at.Add(time.Millisecond-time.Microsecond)), "~")
	if h.sk < from || h.sk > to {
		h.sk2 = contract.ActionSK(agenticpm.Timestamp(at), h.id)
		changes = append(changes, fmt.Sprintf("%s %s → %s", contract.AttrSK, h.sk, h.sk2))
	}
	if t, err := ddb.ParseSortableTime(norm); err == nil && !t.After(now) {
		h.overdue = now.Sub(t)
		changes = append(changes, fmt.Sprintf("overdue by %s: released at the release job's next run", h.overdue.Round(time.Second)))
	}
	h.changing = strings.Join(append([]string{contract.AttrGSI1PK + " " + contract.KeyHoldPending}, changes...), ", ")
	return h, true
}

// expired: TTL has passed (DynamoDB deletes it within days; no route
// serves it).
func expired(item migrate.Item, now time.Time) bool {
	ttl, ok := item[contract.AttrTTL].(*types.AttributeValueMemberN)
	if !ok {
		return false
	}
	var n int64
	_, err := fmt.Sscan(ttl.Value, &n)
	return err == nil && n <= now.Unix()
}

func checkHeld(item migrate.Item, now time.Time) (string, bool) {
	h, needed := inspect(item, now)
	if !needed {
		return "", false
	}
	if h.problem != "" {
		return "report: " + h.problem, true
	}
	return h.changing, true
}

// stillHeld is the condition that the action is still as read: held, not
// released, cancelled or indexed since, at the same heldUntil.
const stillHeld = "#executed = :false AND attribute_not_exists(#cancelled) AND attribute_not_exists(#gsi1pk) AND #heldUntil = :oldHeld"

func applyHeld(ctx context.Context, env *migrate.Env, item migrate.Item) (migrate.Outcome, error) {
	h, _ := inspect(item, env.Now())
	where := fmt.Sprintf("project %s action %s", strings.TrimPrefix(h.pk, contract.PrefixProject), h.id)
	if h.problem != "" {
		env.Reportf("%s: not indexed: %s", where, h.problem)
		return migrate.Reported, nil
	}
	gsi1pk, gsi1sk := contract.KeyHoldPending, h.heldUntil+"#"+h.id
	names := map[string]string{"#executed": contract.AttrExecuted, "#cancelled": contract.AttrCancelledAt,
		"#gsi1pk": contract.AttrGSI1PK, "#heldUntil": contract.AttrHeldUntil}
	values := map[string]types.AttributeValue{":false": &types.AttributeValueMemberBOOL{Value: false}, ":oldHeld": item[contract.AttrHeldUntil]}
	var out migrate.Outcome
	var err error
	if h.sk2 == "" {
		x := ddb.Expr{Update: "SET #heldUntil = :held, #gsi1pk = :gsi1pk, #gsi1sk = :gsi1sk", Condition: stillHeld, Names: names, Values: values}
		x.Names["#gsi1sk"] = contract.AttrGSI1SK
		x.Values[":held"], x.Values[":gsi1pk"], x.Values[":gsi1sk"] = ddb.S(h.heldUntil), ddb.S(gsi1pk), ddb.S(gsi1sk)
		out, err = env.Update(ctx, migrate.Item{contract.AttrPK: item[contract.AttrPK], contract.AttrSK: item[contract.AttrSK]}, x)
	} else {
		// A key cannot change in place: one transaction puts the action
		// under the key release finds it by and deletes the old item,
		// both conditioned, so it happens once.
		moved := make(migrate.Item, len(item)+2)
		for k, v := range item {
			moved[k] = v
		}
		moved[contract.AttrSK], moved[contract.AttrHeldUntil] = ddb.S(h.sk2), ddb.S(h.heldUntil)
		moved[contract.AttrGSI1PK], moved[contract.AttrGSI1SK] = ddb.S(gsi1pk), ddb.S(gsi1sk)
		put := ddb.Expr{Condition: "attribute_not_exists(#pk)", Names: map[string]string{"#pk": contract.AttrPK}}.TxPut(env.Table, moved)
		del := ddb.Expr{Condition: stillHeld, Names: names, Values: values}.TxDelete(env.Table,
			migrate.Item{contract.AttrPK: item[contract.AttrPK], contract.AttrSK: item[contract.AttrSK]})
		out, err = env.Transact(ctx, types.TransactWriteItem{Put: put}, types.TransactWriteItem{Delete: del})
	}
	if err == nil && out == migrate.Changed && h.overdue > 0 {
		env.Reportf("%s: held until %s, overdue by %s: indexed, so the release job's next run releases it (action_taken, AgentActionReleased); "+
			"cancel it first (POST /projects/{id}/actions/{aid}/cancel) if it must not go", where, h.heldUntil, h.overdue.Round(time.Second))
	}
	return out, err
}

func checkIntegration(item migrate.Item, _ time.Time) (string, bool) {
	if !strings.HasPrefix(migrate.String(item, contract.AttrPK), contract.PrefixIntegration) ||
		migrate.String(item, contract.AttrSK) != contract.KeyConfig || migrate.Has(item, contract.AttrEncryptionContext) {
		return "", false
	}
	return "stored the old way (no " + contract.AttrEncryptionContext + "): GET answers 409 until its plaintext config is PUT again", true
}

func reportIntegration(_ context.Context, env *migrate.Env, item migrate.Item) (migrate.Outcome, error) {
	name := strings.TrimPrefix(migrate.String(item, contract.AttrPK), contract.PrefixIntegration)
	env.Reportf("integration %s (status %s, updated %s): re-enter its credentials: PUT /integrations/%s with the plaintext config",
		name, migrate.String(item, contract.AttrStatus), migrate.String(item, contract.AttrUpdatedAt), name)
	return migrate.Reported, nil
}
