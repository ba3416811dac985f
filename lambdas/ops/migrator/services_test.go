package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	apmcontract "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	nucleuscontract "github.com/dynastack/dynastack/constructs/nucleus/contract"
	rezcontract "github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/ops/migrate"
	"github.com/dynastack/dynastack/lambdas/platform/ids"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
	"github.com/dynastack/dynastack/lambdas/services/rezagent"
)

// TestAgenticPMHoldQueue: held actions as document 004's TypeScript
// wrote them (toISOString keys and heldUntil, no GSI1 entry) are indexed
// into the hold queue, re-keyed so release finds them; the overdue one is
// reported; executed, cancelled and plain actions are left alone. After it
// the API's own release works on them, and once.
func TestAgenticPMHoldQueue(t *testing.T) {
	tabs := tables(t, "agenticpm")
	table := tabs[apmcontract.EnvTable]
	now := time.Now().UTC()
	project := uuid.NewString()
	iso := func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") } // toISOString
	action := func(created time.Time, extra map[string]any) map[string]any {
		id := ids.NewULID(created)
		it := map[string]any{"PK": "PROJECT#" + project, "SK": "ACTION#" + iso(created) + "#" + id, "id": id, "projectId": project,
			"actionType": "email_sent", "description": "Send the weekly status", "executed": false, "createdAt": iso(created),
			"TTL": created.Add(90 * 24 * time.Hour).Unix()}
		for k, v := range extra {
			it[k] = v
		}
		return it
	}
	created := now.Add(-10 * time.Minute)
	future := action(created, map[string]any{"heldUntil": iso(now.Add(time.Hour))})
	overdue := action(created.Add(time.Second), map[string]any{"heldUntil": iso(now.Add(-5 * time.Minute))})
	put(t, table,
		map[string]any{"PK": "PROJECT#" + project, "SK": "METADATA", "id": project, "name": "MCU", "status": "active", "source": "jira",
			"sourceProjectKey": "MCU", "autonomyLevel": "tactical", "config": map[string]any{}, "createdAt": iso(created), "updatedAt": iso(created),
			"GSI1PK": "STATUS#active", "GSI1SK": "PROJECT#" + project},
		future, overdue,
		action(created.Add(2*time.Second), map[string]any{"executed": true, "executedAt": iso(created)}),
		action(created.Add(3*time.Second), map[string]any{"heldUntil": iso(now.Add(time.Hour)), "cancelledAt": iso(now)}),
		action(created.Add(4*time.Second), nil),
		map[string]any{"PK": "INTEGRATION#jira", "SK": "CONFIG", "id": uuid.NewString(), "integration": "jira",
			"configEncrypted": "AQICAHh…", "status": "active", "createdAt": iso(created), "updatedAt": iso(created)},
	)
	var out bytes.Buffer
	res, err := migrate.Run(context.Background(), config(t, tabs, &out), Registry()["agenticpm"])
	require.NoError(t, err)
	require.Len(t, res, 2)
	assert.Equal(t, 2, res[0].Changed, "held actions indexed")
	assert.Equal(t, 1, res[1].Reported, "old integration listed")
	assert.Contains(t, out.String(), "overdue by", "the overdue action is reported")
	assert.Contains(t, out.String(), "integration jira", "the integration to re-enter")

	store := agenticpm.NewStore(testenv.Client(t), table, nil)
	page, err := store.ListHeldActions(context.Background(), "", 10)
	require.NoError(t, err)
	var held []string
	for _, a := range page.Items {
		held = append(held, a.ID)
	}
	assert.Equal(t, []string{overdue["id"].(string), future["id"].(string)}, held, "the hold queue, the due one first")
	r, err := store.ReleaseAction(context.Background(), project, future["id"].(string))
	require.NoError(t, err, "release finds the re-keyed action")
	assert.True(t, r.Executed, "released")
	_, err = store.ReleaseAction(context.Background(), project, future["id"].(string))
	assert.ErrorIs(t, err, agenticpm.ErrStatusConflict, "released once")
}

// TestNucleusExternalIDs: an account with none gets a generated one (its
// trust snippet in the report, an audit entry), a caller-chosen one is
// listed and kept, a generated one untouched; a second run changes nothing.
func TestNucleusExternalIDs(t *testing.T) {
	tabs := tables(t, "nucleus")
	app := tabs[nucleuscontract.EnvAppTable]
	account := func(id string, ext string) map[string]any {
		it := map[string]any{"pk": "ACCOUNT#" + id, "sk": "METADATA", "gsi1pk": "TYPE#ACCOUNT", "gsi1sk": "acct-" + id,
			"account_name": "acct-" + id, "role_arn": "arn:aws:iam::" + id + ":role/nucleus-executor-dev", "status": "active",
			"created_at": "2026-01-05T10:00:00Z", "updated_at": "2026-01-05T10:00:00Z", "version": 1}
		if ext != "" {
			it["external_id"] = ext
		}
		return it
	}
	generated := nucleus.NewExternalID()
	put(t, app, account("111111111111", ""), account("222222222222", "my-secret-ext"), account("333333333333", generated))
	var out bytes.Buffer
	res, err := migrate.Run(context.Background(), config(t, tabs, &out), Registry()["nucleus"])
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.Equal(t, 1, res[0].Changed, "the account without an id")
	assert.Equal(t, 1, res[0].Reported, "the caller-chosen id")

	store := nucleus.NewStore(testenv.Client(t), nucleus.Tables{App: app, Audit: tabs[nucleuscontract.EnvAuditTable]}, nil)
	a, err := store.Account(context.Background(), "111111111111")
	require.NoError(t, err)
	assert.True(t, nucleus.IsGeneratedExternalID(a.ExternalID), "generated")
	assert.Contains(t, out.String(), `"sts:ExternalId": "`+a.ExternalID+`"`, "the report's trust snippet carries it")
	assert.Contains(t, out.String(), "role/nucleus-dev-ExecutorRole*", "for the stage's roles")
	b, err := store.Account(context.Background(), "222222222222")
	require.NoError(t, err)
	assert.Equal(t, "my-secret-ext", b.ExternalID, "a caller-chosen id is the owner's to rotate")
	c, err := store.Account(context.Background(), "333333333333")
	require.NoError(t, err)
	assert.Equal(t, generated, c.ExternalID, "untouched")

	_, err = store.GenerateMissingExternalID(context.Background(), "t", "111111111111")
	assert.ErrorIs(t, err, nucleus.ErrExternalIDSet, "never replaced")
}

// TestRezAgentTimestamps: document 000's example message (toISOString
// milliseconds) and one its Go wrote (time.RFC3339) come out fixed-width.
func TestRezAgentTimestamps(t *testing.T) {
	tabs := tables(t, "rezagent")
	table := tabs[rezcontract.EnvTable]
	a, b := uuid.NewString(), uuid.NewString()
	put(t, table,
		map[string]any{"message_id": a, "created_date": "2025-10-21T14:30:00.000Z", "created_by": "scheduler", "stage": "dev",
			"message_type": "scheduled_hello", "status": "completed", "payload": map[string]any{"text": "hello world"},
			"updated_date": "2025-10-21T14:30:15.000Z", "processing_started_at": "2025-10-21T14:30:05.000Z",
			"processing_completed_at": "2025-10-21T14:30:15.000Z", "retry_count": 0, "notification_id": "ntfy_abc123",
			"correlation_id": "660e9500-f39c-52e5-b827-557766551111", "ttl": time.Now().Add(time.Hour).Unix()},
		map[string]any{"message_id": b, "created_date": "2025-10-21T14:31:00Z", "created_by": "scheduler", "stage": "dev",
			"message_type": "scheduled_hello", "status": "created", "payload": map[string]any{"text": "hi"},
			"updated_date": "2025-10-21T14:31:00Z", "correlation_id": uuid.NewString(), "ttl": time.Now().Add(time.Hour).Unix()},
	)
	var out bytes.Buffer
	res, err := migrate.Run(context.Background(), config(t, tabs, &out), Registry()["rezagent"])
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.Equal(t, 2, res[0].Changed, "messages")
	store := rezagent.NewStore(testenv.Client(t), table, "dev", nil)
	m, err := store.Get(context.Background(), a)
	require.NoError(t, err)
	assert.Equal(t, "2025-10-21T14:30:00.000000Z", m.CreatedDate, "created_date")
	assert.Equal(t, "2025-10-21T14:30:15.000000Z", m.ProcessingCompletedAt, "processing_completed_at")
	m, err = store.Get(context.Background(), b)
	require.NoError(t, err)
	assert.Equal(t, "2025-10-21T14:31:00.000000Z", m.CreatedDate, "RFC3339 created_date")
}

// TestNucleusExternalIDsOnOriginalAccounts: accounts as document 001's
// system wrote them carry no version (dynastack added it, decision 15):
// the migration gives them an id all the same, instead of failing the
// version condition on every attempt and stopping every run there.
func TestNucleusExternalIDsOnOriginalAccounts(t *testing.T) {
	tabs := tables(t, "nucleus")
	app := tabs[nucleuscontract.EnvAppTable]
	put(t, app, map[string]any{"pk": "ACCOUNT#444444444444", "sk": "METADATA", "gsi1pk": "TYPE#ACCOUNT", "gsi1sk": "acct-444444444444",
		"account_name": "acct-444444444444", "role_arn": "arn:aws:iam::444444444444:role/nucleus-executor-dev", "status": "active"})
	var out bytes.Buffer
	res, err := migrate.Run(context.Background(), config(t, tabs, &out), Registry()["nucleus"])
	require.NoError(t, err, "the run goes through: %s", out.String())
	require.Len(t, res, 1)
	assert.Equal(t, 1, res[0].Changed, "the account without an id or a version")

	store := nucleus.NewStore(testenv.Client(t), nucleus.Tables{App: app, Audit: tabs[nucleuscontract.EnvAuditTable]}, nil)
	a, err := store.Account(context.Background(), "444444444444")
	require.NoError(t, err)
	assert.True(t, nucleus.IsGeneratedExternalID(a.ExternalID), "generated")
	_, err = store.GenerateMissingExternalID(context.Background(), "t", "444444444444")
	assert.ErrorIs(t, err, nucleus.ErrExternalIDSet, "never replaced")
}
