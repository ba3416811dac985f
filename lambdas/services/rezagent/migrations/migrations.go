// Package migrations holds rez_agent's data migrations (`make migrate
// SERVICE=rezagent`, docs/schemas/rezagent.md "Cutover"): operator code,
// run by ops/migrate, never linked into a Lambda function.
package migrations

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/lambdas/ops/migrate"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Migrations are rez_agent's, in the order they run.
func Migrations() []migrate.Migration {
	return []migrate.Migration{{
		ID: "rezagent-0001-timestamps",
		Description: "messages' created_date, updated_date, processing_started_at and processing_completed_at in the fixed-width form " +
			"both indexes sort by (decision 3: the original wrote time.RFC3339, second precision)",
		Table: contract.Messages,
		Check: check,
		Apply: apply,
	}}
}

// timestamps are the attributes that hold one, the indexes' sort key first.
var timestamps = []string{contract.AttrCreatedDate, contract.AttrUpdatedDate, contract.AttrProcessingStartedAt, contract.AttrProcessingCompletedAt}

type change struct{ attr, from, to string }

func changes(item migrate.Item) (out []change, bad string) {
	for _, a := range timestamps {
		v := migrate.String(item, a)
		if v == "" {
			continue
		}
		norm, changed, ok := migrate.Timestamp(v)
		if !ok && bad == "" {
			bad = fmt.Sprintf("%s %q is no timestamp", a, v)
		}
		if changed {
			out = append(out, change{a, v, norm})
		}
	}
	return out, bad
}

func check(item migrate.Item, _ time.Time) (string, bool) {
	ch, _ := changes(item)
	if len(ch) == 0 {
		return "", false
	}
	parts := make([]string, len(ch))
	for i, c := range ch {
		parts[i] = c.attr + " " + c.from + " → " + c.to
	}
	return strings.Join(parts, ", "), true
}

// apply rewrites the timestamps, conditioned on each value read and on
// the status: a status change in between (the old processor still
// running) makes it skip, and the engine reads the message again.
func apply(ctx context.Context, env *migrate.Env, item migrate.Item) (migrate.Outcome, error) {
	ch, bad := changes(item)
	id := migrate.String(item, contract.AttrMessageID)
	if bad != "" {
		env.Reportf("message %s: not changed: %s", id, bad)
		return migrate.Reported, nil
	}
	x := ddb.Expr{
		Names:  map[string]string{"#status": contract.AttrStatus},
		Values: map[string]types.AttributeValue{":status": item[contract.AttrStatus]},
	}
	sets := make([]string, len(ch))
	conds := []string{"#status = :status"}
	if !migrate.Has(item, contract.AttrStatus) {
		conds = []string{"attribute_not_exists(#status)"}
		delete(x.Values, ":status")
	}
	for i, c := range ch {
		n := fmt.Sprintf("#t%d", i)
		x.Names[n] = c.attr
		x.Values[fmt.Sprintf(":new%d", i)], x.Values[fmt.Sprintf(":old%d", i)] = ddb.S(c.to), ddb.S(c.from)
		sets[i] = fmt.Sprintf("%s = :new%d", n, i)
		conds = append(conds, fmt.Sprintf("%s = :old%d", n, i))
	}
	x.Update = "SET " + strings.Join(sets, ", ")
	x.Condition = strings.Join(conds, " AND ")
	return env.Update(ctx, migrate.Item{contract.AttrMessageID: item[contract.AttrMessageID]}, x)
}
