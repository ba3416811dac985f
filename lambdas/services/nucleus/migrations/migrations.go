// Package migrations holds Nucleus's data migrations (`make migrate
// SERVICE=nucleus`, docs/schemas/nucleus.md "Cutover"): operator code, run
// by ops/migrate, never linked into a Lambda function.
package migrations

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/ops/migrate"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
)

// User is who the audit log names for the migration's rotations.
const User = "migration:nucleus-0001-external-ids"

// Migrations are Nucleus's, in the order they run.
func Migrations() []migrate.Migration {
	return []migrate.Migration{{
		ID: "nucleus-0001-external-ids",
		Description: "accounts without a generated external_id: those with none get one (a rotation, audited), those with a " +
			"caller-chosen one are listed; the report gives each account's new trust-policy snippet",
		Table: contract.App,
		Check: check,
		Apply: apply,
	}}
}

func accountID(item migrate.Item) (string, bool) {
	if migrate.String(item, contract.AttrSK) != contract.KeyMetadata {
		return "", false
	}
	return strings.CutPrefix(migrate.String(item, contract.AttrPK), contract.PrefixAccount)
}

func check(item migrate.Item, _ time.Time) (string, bool) {
	if _, ok := accountID(item); !ok {
		return "", false
	}
	switch ext := migrate.String(item, contract.AttrExternalID); {
	case ext == "":
		return "no external_id: generate one (the trust policy needs its condition after)", true
	case !nucleus.IsGeneratedExternalID(ext):
		return "a caller-chosen external_id: listed for a rotation with its owner (PATCH rotate_external_id)", true
	}
	return "", false
}

// apply generates the missing id (conditioned on there still being none:
// a rotation through the API in between wins) and reports the account's
// trust policy with it. Nothing breaks meanwhile: a trust policy without
// an sts:ExternalId condition accepts an AssumeRole that sends one, so
// the executor keeps working until the owner adds the condition. An
// account with a caller-chosen id is only reported: rotating it breaks
// its trust policy (StringEquals on the old id) until the owner updates
// it, so the owner rotates it (PATCH /accounts/{id}) when ready.
func apply(ctx context.Context, env *migrate.Env, item migrate.Item) (migrate.Outcome, error) {
	id, _ := accountID(item)
	role := migrate.String(item, contract.AttrRoleARN)
	if migrate.String(item, contract.AttrExternalID) != "" {
		env.Reportf("account %s (%s): caller-chosen external id kept; with its owner: PATCH /accounts/%s {\"rotate_external_id\": true}, "+
			"then put the answer's external_id in this trust policy:\n%s", id, role, id, TrustPolicy(env.Stage, "<the rotation's external_id>"))
		return migrate.Reported, nil
	}
	store := nucleus.NewStore(env.Client, nucleus.Tables{App: env.Tables[contract.App.Env], Audit: env.Tables[contract.Audit.Env]}, nil)
	a, err := store.GenerateMissingExternalID(ctx, User, id)
	if errors.Is(err, nucleus.ErrExternalIDSet) || errors.Is(err, nucleus.ErrAccountNotFound) {
		return migrate.Skipped, nil
	}
	if err != nil {
		return 0, err
	}
	env.Reportf("account %s (%s): external id generated (shown here only; keep this report secret); add the condition to the role's trust policy:\n%s",
		id, role, TrustPolicy(env.Stage, a.ExternalID))
	return migrate.Changed, nil
}

// TrustPolicy is the trust policy of a managed account's role
// (docs/schemas/nucleus.md, "Trust policy of a managed account") with the
// account's external id; <NUCLEUS_ACCOUNT_ID> is the account Nucleus runs
// in.
func TrustPolicy(stage, externalID string) string {
	p := map[string]any{
		"Version": "2012-10-17",
		"Statement": []any{map[string]any{
			"Effect":    "Allow",
			"Principal": map[string]any{"AWS": "arn:aws:iam::<NUCLEUS_ACCOUNT_ID>:root"},
			"Action":    "sts:AssumeRole",
			"Condition": map[string]any{
				"ArnLike": map[string]any{"aws:PrincipalArn": []string{
					fmt.Sprintf("arn:aws:iam::<NUCLEUS_ACCOUNT_ID>:role/%s-%s-ExecutorRole*", contract.Name, stage),
					fmt.Sprintf("arn:aws:iam::<NUCLEUS_ACCOUNT_ID>:role/%s-%s-HandlerRole*", contract.Name, stage),
				}},
				"StringEquals": map[string]any{"sts:ExternalId": externalID},
			},
		}},
	}
	b, _ := json.MarshalIndent(p, "", "  ")
	return string(b)
}
