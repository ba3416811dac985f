// Package migrations holds the ITSM table's data migrations (`make migrate
// SERVICE=itsm`, docs/schemas/itsm.md "Cutover"): operator code, run by
// ops/migrate, never linked into the Lambda function.
package migrations

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/lambdas/ops/migrate"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/services/itsm"
)

// Migrations are ITSM's, in the order they run.
func Migrations() []migrate.Migration {
	return []migrate.Migration{
		{
			ID:          "itsm-0001-timestamps",
			Description: "tickets' created_at, updated_at and comments' added_at in the fixed-width form CallerIdIndex sorts by (decision 2)",
			Table:       contract.Tickets,
			Check:       checkTimestamps,
			Apply:       applyTimestamps,
		},
		{
			ID:          "itsm-0002-comments-list",
			Description: "tickets without comments get comments: [] (add comment appends to it and counts it; decision 1)",
			Table:       contract.Tickets,
			Check:       checkComments,
			Apply:       applyComments,
		},
	}
}

// isTicket: a ticket, not an idempotency record (those carry no caller).
func isTicket(item migrate.Item) bool { return migrate.Has(item, contract.AttrCallerID) }

// normalised is a ticket's timestamps in the fixed-width form.
type normalised struct {
	createdAt, updatedAt string
	comments             []itsm.Comment
	changed              []string
	bad                  string
}

func normalise(item migrate.Item) (n normalised) {
	one := func(name, v string) string {
		norm, changed, ok := migrate.Timestamp(v)
		if !ok && v != "" && n.bad == "" {
			n.bad = fmt.Sprintf("%s %q is no timestamp", name, v)
		}
		if changed {
			n.changed = append(n.changed, fmt.Sprintf("%s %s → %s", name, v, norm))
		}
		return norm
	}
	top := func(name string) string {
		av, ok := item[name]
		if _, isS := av.(*types.AttributeValueMemberS); ok && !isS && n.bad == "" {
			n.bad = fmt.Sprintf("%s is a %s, not a timestamp string", name, strings.TrimPrefix(fmt.Sprintf("%T", av), "*types.AttributeValueMember"))
		}
		return one(name, migrate.String(item, name))
	}
	n.createdAt = top(contract.AttrCreatedAt)
	n.updatedAt = top(contract.AttrUpdatedAt)
	if av, ok := item[contract.AttrComments]; ok {
		if err := attributevalue.Unmarshal(av, &n.comments); err != nil {
			n.bad = "comments: " + err.Error()
			return n
		}
		for i := range n.comments {
			n.comments[i].AddedAt = one(fmt.Sprintf("%s[%d]", contract.AttrComments, i), n.comments[i].AddedAt)
		}
	}
	return n
}

func checkTimestamps(item migrate.Item, _ time.Time) (string, bool) {
	if !isTicket(item) {
		return "", false
	}
	n := normalise(item)
	if len(n.changed) == 0 {
		return "", false
	}
	return strings.Join(n.changed, ", "), true
}

// applyTimestamps rewrites the ticket's timestamps that need it,
// conditioned on the values read (an attribute absent stays absent) and
// the comment count: a comment or a status change in between (which moves
// updated_at) makes it skip, and the engine reads the ticket again. A
// ticket deleted meanwhile fails the condition: never made up again.
func applyTimestamps(ctx context.Context, env *migrate.Env, item migrate.Item) (migrate.Outcome, error) {
	n := normalise(item)
	if n.bad != "" {
		env.Reportf("ticket %s: not changed: %s", migrate.String(item, contract.AttrTicketID), n.bad)
		return migrate.Reported, nil
	}
	x := ddb.Expr{Names: map[string]string{"#id": contract.AttrTicketID}, Values: map[string]types.AttributeValue{}}
	var sets []string
	conds := []string{"attribute_exists(#id)"}
	for _, a := range []struct{ ref, name, norm string }{
		{"created", contract.AttrCreatedAt, n.createdAt},
		{"updated", contract.AttrUpdatedAt, n.updatedAt},
	} {
		x.Names["#"+a.ref] = a.name
		old, ok := item[a.name]
		if !ok {
			conds = append(conds, "attribute_not_exists(#"+a.ref+")")
			continue
		}
		conds = append(conds, "#"+a.ref+" = :old"+a.ref)
		x.Values[":old"+a.ref] = old
		if a.norm != migrate.String(item, a.name) {
			sets = append(sets, "#"+a.ref+" = :"+a.ref)
			x.Values[":"+a.ref] = ddb.S(a.norm)
		}
	}
	if n.comments != nil {
		list, err := attributevalue.Marshal(n.comments)
		if err != nil {
			return 0, err
		}
		sets = append(sets, "#comments = :comments")
		conds = append(conds, "size(#comments) = :count")
		x.Names["#comments"] = contract.AttrComments
		x.Values[":comments"], x.Values[":count"] = list, ddb.N(len(n.comments))
	}
	x.Update, x.Condition = "SET "+strings.Join(sets, ", "), strings.Join(conds, " AND ")
	return env.Update(ctx, keyOf(item), x)
}

func keyOf(item migrate.Item) migrate.Item {
	return migrate.Item{contract.AttrTicketID: item[contract.AttrTicketID]}
}

func checkComments(item migrate.Item, _ time.Time) (string, bool) {
	if !isTicket(item) || migrate.Has(item, contract.AttrComments) {
		return "", false
	}
	return contract.AttrComments + " absent → []", true
}

func applyComments(ctx context.Context, env *migrate.Env, item migrate.Item) (migrate.Outcome, error) {
	return env.Update(ctx, keyOf(item), ddb.Expr{
		Update:    "SET #comments = :empty",
		Condition: "attribute_exists(#id) AND attribute_not_exists(#comments)",
		Names:     map[string]string{"#comments": contract.AttrComments, "#id": contract.AttrTicketID},
		Values:    map[string]types.AttributeValue{":empty": &types.AttributeValueMemberL{Value: []types.AttributeValue{}}},
	})
}
