package ddbguard

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// edit mutates the two copies of one golden template: old starts as the
// reviewed file, new as the same file, and each case changes what it needs.
type edit func(old, new tpl)

func compareEdited(t *testing.T, stage, stack string, e edit) Report {
	t.Helper()
	old, new := loadGolden(t, stage, stack), loadGolden(t, stage, stack)
	e(old, new)
	key := stage + "/" + stack
	return Compare(set(t, map[string]tpl{key: old}), set(t, map[string]tpl{key: new}))
}

func TestHazards(t *testing.T) {
	for _, tc := range []struct {
		name         string
		stage, stack string
		edit         edit
		want         []Class
		// in must appear in a hazard's line: the detail or the safe way.
		in string
	}{
		{
			name: "multiple-gsi-changes/two indexes added", stage: "prod", stack: "itsm",
			edit: func(_, n tpl) { addGSI(n, tickets, "ByStatus", "status"); addGSI(n, tickets, "ByAssignee", "assignee") },
			want: []Class{MultipleGSIChanges},
			in:   "safe way: split into two deploys: add index ByAssignee, then index ByStatus",
		},
		{
			name: "multiple-gsi-changes/two indexes deleted", stage: "dev", stack: "rezagent",
			edit: func(_, n tpl) {
				deleteGSI(n, messages, "stage-created_date-index")
				deleteGSI(n, messages, "status-created_date-index")
			},
			want: []Class{MultipleGSIChanges},
			in:   "delete index stage-created_date-index, then index status-created_date-index",
		},
		{
			name: "multiple-gsi-changes/one added and one deleted", stage: "dev", stack: "nucleus",
			edit: func(_, n tpl) { deleteGSI(n, app, "GSI1"); addGSI(n, app, "GSI2", "gsi2pk") },
			want: []Class{MultipleGSIChanges},
			in:   "add index GSI2, then delete index GSI1",
		},
		{
			name: "gsi-replaced/renamed", stage: "prod", stack: "itsm",
			edit: func(_, n tpl) { renameGSI(n, tickets, "CallerIdIndex", "ByCaller") },
			want: []Class{MultipleGSIChanges, GSIReplaced},
			in:   "index CallerIdIndex renamed to ByCaller",
		},
		{
			name: "gsi-replaced/key schema changed in place", stage: "prod", stack: "itsm",
			edit: func(_, n tpl) {
				g := gsi(n, tickets, "CallerIdIndex")
				g["KeySchema"] = list(g["KeySchema"])[:1]
			},
			want: []Class{MultipleGSIChanges, GSIReplaced},
			in:   "index CallerIdIndex key schema HASH caller_id(S), RANGE created_at(S) → HASH caller_id(S)",
		},
		{
			name: "gsi-replaced/projection type", stage: "stage", stack: "nucleus",
			edit: func(_, n tpl) { gsi(n, app, "GSI1")["Projection"] = map[string]any{"ProjectionType": "KEYS_ONLY"} },
			want: []Class{MultipleGSIChanges, GSIReplaced},
			in:   "projection ALL → KEYS_ONLY",
		},
		{
			name: "gsi-replaced/non-key attributes", stage: "prod", stack: "itsm",
			edit: func(o, n tpl) {
				gsi(o, tickets, "CallerIdIndex")["Projection"] = map[string]any{"ProjectionType": "INCLUDE", "NonKeyAttributes": []any{"status"}}
				gsi(n, tickets, "CallerIdIndex")["Projection"] = map[string]any{"ProjectionType": "INCLUDE", "NonKeyAttributes": []any{"status", "priority"}}
			},
			want: []Class{MultipleGSIChanges, GSIReplaced},
			in:   "projection INCLUDE [status] → INCLUDE [priority status]",
		},
		{
			name: "gsi-replaced/key attribute type", stage: "prod", stack: "itsm",
			edit: func(_, n tpl) {
				for _, d := range list(props(n, tickets)["AttributeDefinitions"]) {
					if d := d.(map[string]any); d["AttributeName"] == "created_at" {
						d["AttributeType"] = "N"
					}
				}
			},
			want: []Class{MultipleGSIChanges, GSIReplaced},
			in:   "RANGE created_at(S) → HASH caller_id(S), RANGE created_at(N)",
		},
		{
			name: "lsi-change/added", stage: "dev", stack: "nucleus",
			edit: func(_, n tpl) {
				p := props(n, app)
				addAttribute(p, "updated_at", "S")
				p["LocalSecondaryIndexes"] = []any{map[string]any{
					"IndexName":  "ByUpdated",
					"KeySchema":  []any{map[string]any{"AttributeName": "pk", "KeyType": "HASH"}, map[string]any{"AttributeName": "updated_at", "KeyType": "RANGE"}},
					"Projection": map[string]any{"ProjectionType": "ALL"},
				}}
			},
			want: []Class{LSIChange},
			in:   "LSI ByUpdated added",
		},
		{
			name: "lsi-change/projection changed", stage: "prod", stack: "nucleus",
			edit: func(o, n tpl) {
				for i, v := range []tpl{o, n} {
					p := props(v, app)
					addAttribute(p, "updated_at", "S")
					proj := []string{"ALL", "KEYS_ONLY"}[i]
					p["LocalSecondaryIndexes"] = []any{map[string]any{
						"IndexName":  "ByUpdated",
						"KeySchema":  []any{map[string]any{"AttributeName": "pk", "KeyType": "HASH"}, map[string]any{"AttributeName": "updated_at", "KeyType": "RANGE"}},
						"Projection": map[string]any{"ProjectionType": proj},
					}}
				}
			},
			want: []Class{LSIChange},
			in:   "which it refuses for a custom-named table",
		},
		{
			name: "stream-change/view type", stage: "prod", stack: "stak",
			edit: func(_, n tpl) { props(n, inbox)["StreamSpecification"] = map[string]any{"StreamViewType": "KEYS_ONLY"} },
			want: []Class{StreamChange},
			in:   "stream view type NEW_AND_OLD_IMAGES → KEYS_ONLY",
		},
		{
			name: "stream-change/disabled", stage: "dev", stack: "stak",
			edit: func(_, n tpl) { delete(props(n, inbox), "StreamSpecification") },
			want: []Class{StreamChange},
			in:   "stream (NEW_AND_OLD_IMAGES) disabled",
		},
		{
			name: "ttl-change/attribute renamed", stage: "dev", stack: "rezagent",
			edit: func(_, n tpl) {
				props(n, messages)["TimeToLiveSpecification"] = map[string]any{"AttributeName": "expires_at", "Enabled": true}
			},
			want: []Class{TTLChange},
			in:   "TTL attribute ttl → expires_at",
		},
		{
			name: "ttl-change/disabled", stage: "prod", stack: "nucleus",
			edit: func(_, n tpl) {
				props(n, audit)["TimeToLiveSpecification"] = map[string]any{"AttributeName": "expire_at", "Enabled": false}
			},
			want: []Class{TTLChange},
			in:   "TTL on expire_at disabled: items stop expiring",
		},
		{
			name: "table-replacement/key schema of a custom-named table", stage: "prod", stack: "itsm",
			edit: func(_, n tpl) {
				p := props(n, tickets)
				p["KeySchema"] = append(list(p["KeySchema"]), map[string]any{"AttributeName": "created_at", "KeyType": "RANGE"})
			},
			want: []Class{TableReplacement},
			in:   "refuses to for a custom-named table",
		},
		{
			name: "table-replacement/key attribute type", stage: "stage", stack: "itsm",
			edit: func(_, n tpl) {
				list(props(n, tickets)["AttributeDefinitions"])[0].(map[string]any)["AttributeType"] = "N"
			},
			want: []Class{TableReplacement},
			in:   "key attribute types HASH ticket_id(S) → HASH ticket_id(N)",
		},
		{
			name: "table-replacement/table name", stage: "prod", stack: "itsm",
			edit: func(_, n tpl) { props(n, tickets)["TableName"] = "itsm-tickets-prod" },
			want: []Class{TableReplacement},
			in:   "TableName poc-itsm-tickets-prod → itsm-tickets-prod: CloudFormation replaces the table: the new one starts empty and the old one is orphaned (UpdateReplacePolicy Retain)",
		},
		{
			name: "table-replacement/unnamed table loses its data", stage: "dev", stack: "itsm",
			edit: func(o, n tpl) {
				delete(props(o, tickets), "TableName")
				delete(props(n, tickets), "TableName")
				list(props(n, tickets)["KeySchema"])[0].(map[string]any)["AttributeName"] = "caller_id"
			},
			want: []Class{TableReplacement},
			in:   "the old one is deleted with its data",
		},
		{
			name: "logical-id-change/same TableName", stage: "prod", stack: "itsm",
			edit: func(_, n tpl) { renameResource(n, tickets, "TicketsV2A1B2C3D4") },
			want: []Class{LogicalIDChange},
			in:   "logical id Tickets83B11BB2 → TicketsV2A1B2C3D4 (same TableName poc-itsm-tickets-prod)",
		},
		{
			name: "logical-id-change/unnamed table matched by key schema", stage: "dev", stack: "stak",
			edit: func(o, n tpl) {
				delete(props(o, inbox), "TableName")
				delete(props(n, inbox), "TableName")
				renameResource(n, inbox, "InboxTable0F1E2D3C")
			},
			want: []Class{LogicalIDChange},
			in:   "CloudFormation creates a new, empty table and deletes the old table with its data",
		},
		{
			name: "table-type-change/Table to GlobalTable", stage: "prod", stack: "itsm",
			edit: func(o, _ tpl) { toPlainTable(o, tickets) },
			want: []Class{TableTypeChange},
			in:   "AWS::DynamoDB::Table → AWS::DynamoDB::GlobalTable",
		},
		{
			name: "table-type-change/GlobalTable to Table under a new id", stage: "dev", stack: "itsm",
			edit: func(_, n tpl) { toPlainTable(n, tickets); renameResource(n, tickets, "TicketsTable99") },
			want: []Class{LogicalIDChange, TableTypeChange},
			in:   "`cdk import` it as AWS::DynamoDB::Table",
		},
		{
			name: "protection-dropped/DeletionPolicy in prod", stage: "prod", stack: "itsm",
			edit: func(_, n tpl) { resource(n, tickets)["DeletionPolicy"] = "Delete" },
			want: []Class{ProtectionDropped},
			in:   "DeletionPolicy Retain → Delete",
		},
		{
			name: "protection-dropped/UpdateReplacePolicy removed in stage", stage: "stage", stack: "rezagent",
			edit: func(_, n tpl) { delete(resource(n, messages), "UpdateReplacePolicy") },
			want: []Class{ProtectionDropped},
			in:   "UpdateReplacePolicy Retain → (default Delete)",
		},
		{
			name: "protection-dropped/replica deletion protection off", stage: "prod", stack: "agenticpm",
			edit: func(_, n tpl) { replica(n, pmTable)["DeletionProtectionEnabled"] = false },
			want: []Class{ProtectionDropped},
			in:   "deletion protection turned off",
		},
		{
			name: "protection-dropped/plain Table deletion protection off", stage: "prod", stack: "stak",
			edit: func(o, n tpl) {
				toPlainTable(o, inbox)
				toPlainTable(n, inbox)
				props(n, inbox)["DeletionProtectionEnabled"] = false
			},
			want: []Class{ProtectionDropped},
			in:   "deletion protection turned off: in prod",
		},
		{
			name: "multiple-replica-changes/two added", stage: "prod", stack: "agenticpm",
			edit: func(_, n tpl) { addReplica(n, pmTable, "eu-west-1"); addReplica(n, pmTable, "us-east-2") },
			want: []Class{MultipleReplicaChanges},
			in:   "safe way: split into two deploys: add replica eu-west-1, then replica us-east-2",
		},
		{
			name: "multiple-replica-changes/one added and one removed", stage: "dev", stack: "agenticpm",
			edit: func(o, n tpl) { addReplica(o, pmTable, "eu-west-1"); addReplica(n, pmTable, "us-east-2") },
			want: []Class{MultipleReplicaChanges},
			in:   "add replica us-east-2, then remove replica eu-west-1",
		},
		{
			name: "resource-policy-on-new-replica/added together", stage: "prod", stack: "agenticpm",
			edit: func(_, n tpl) {
				addReplica(n, pmTable, "eu-west-1")
				for _, r := range list(props(n, pmTable)["Replicas"]) {
					if m := r.(map[string]any); m["Region"] == "eu-west-1" {
						m["ResourcePolicy"] = map[string]any{"PolicyDocument": map[string]any{"Version": "2012-10-17"}}
					}
				}
			},
			want: []Class{PolicyOnNewReplica},
			in:   "two deploys: add replica eu-west-1 without ResourcePolicy, then add its policy",
		},
		{
			name: "table-removed/deleted with its data", stage: "dev", stack: "itsm",
			edit: func(_, n tpl) { delete(resources(n), tickets) },
			want: []Class{TableRemoved},
			in:   "CloudFormation deletes it with its data (DeletionPolicy Delete)",
		},
		{
			name: "table-removed/retained table is orphaned", stage: "prod", stack: "nucleus",
			edit: func(_, n tpl) { delete(resources(n), audit) },
			want: []Class{TableRemoved},
			in:   "leaves the table and its data orphaned",
		},
		{
			name: "pitr-disabled/GlobalTable replica in prod", stage: "prod", stack: "itsm",
			edit: func(_, n tpl) {
				replica(n, tickets)["PointInTimeRecoverySpecification"] = map[string]any{"PointInTimeRecoveryEnabled": false}
			},
			want: []Class{PITRDisabled},
			in:   "point-in-time recovery turned off in prod",
		},
		{
			name: "pitr-disabled/plain Table in stage", stage: "stage", stack: "itsm",
			edit: func(o, n tpl) {
				toPlainTable(o, tickets)
				toPlainTable(n, tickets)
				props(n, tickets)["PointInTimeRecoverySpecification"] = map[string]any{"PointInTimeRecoveryEnabled": false}
			},
			want: []Class{PITRDisabled},
			in:   "point-in-time recovery turned off in stage",
		},
		{
			name: "warm-throughput-lowered/table reads", stage: "prod", stack: "itsm",
			edit: func(o, n tpl) {
				props(o, tickets)["WarmThroughput"] = map[string]any{"ReadUnitsPerSecond": 20000.0, "WriteUnitsPerSecond": 8000.0}
				props(n, tickets)["WarmThroughput"] = map[string]any{"ReadUnitsPerSecond": 15000.0, "WriteUnitsPerSecond": 8000.0}
			},
			want: []Class{WarmThroughputLowered},
			in:   "table warm throughput lowered (reads 20000 → 15000 per second): DynamoDB can raise warm throughput, never lower it",
		},
		{
			name: "warm-throughput-lowered/index writes", stage: "dev", stack: "itsm",
			edit: func(o, n tpl) {
				gsi(o, tickets, "CallerIdIndex")["WarmThroughput"] = map[string]any{"WriteUnitsPerSecond": 9000.0}
				gsi(n, tickets, "CallerIdIndex")["WarmThroughput"] = map[string]any{"WriteUnitsPerSecond": 4000.0}
			},
			want: []Class{WarmThroughputLowered},
			in:   "index CallerIdIndex warm throughput lowered (writes 9000 → 4000 per second)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := compareEdited(t, tc.stage, tc.stack, tc.edit)
			want := slices.Sorted(slices.Values(tc.want))
			require.Equal(t, want, classes(r.Hazards), "hazards:\n%s", lines(r.Hazards))
			assert.Contains(t, lines(r.Hazards), tc.in, "no hazard mentions it")
			for _, h := range r.Hazards {
				assert.Equal(t, tc.stage, h.Stage, "incomplete hazard %+v", h)
				assert.Equal(t, tc.stack, h.Stack, "incomplete hazard %+v", h)
				assert.NotEmpty(t, h.LogicalID, "incomplete hazard %+v", h)
				assert.NotEmpty(t, h.TableName, "incomplete hazard %+v", h)
				assert.NotEmpty(t, h.Detail, "incomplete hazard %+v", h)
				assert.NotEmpty(t, h.Fix, "incomplete hazard %+v", h)
			}
		})
	}
}

func lines[T interface{ String() string }](items []T) string {
	var b strings.Builder
	for _, it := range items {
		b.WriteString(it.String() + "\n")
	}
	return b.String()
}

func TestSafeChanges(t *testing.T) {
	for _, tc := range []struct {
		name         string
		stage, stack string
		edit         edit
		want         []string // the report's changes, in order
	}{
		{
			name: "add one GSI", stage: "prod", stack: "itsm",
			edit: func(_, n tpl) { addGSI(n, tickets, "ByStatus", "status") },
			want: []string{"prod/itsm Tickets83B11BB2: index ByStatus added"},
		},
		{
			name: "delete one GSI", stage: "dev", stack: "rezagent",
			edit: func(_, n tpl) { deleteGSI(n, messages, "status-created_date-index") },
			want: []string{"dev/rezagent Messages804FA4EB: index status-created_date-index deleted"},
		},
		{
			name: "warm throughput set, raised, removed", stage: "prod", stack: "itsm",
			edit: func(o, n tpl) {
				props(n, tickets)["WarmThroughput"] = map[string]any{"ReadUnitsPerSecond": 20000.0}
				gsi(o, tickets, "CallerIdIndex")["WarmThroughput"] = map[string]any{"ReadUnitsPerSecond": 13000.0}
				gsi(n, tickets, "CallerIdIndex")["WarmThroughput"] = map[string]any{"ReadUnitsPerSecond": 14000.0}
			},
			want: []string{"prod/itsm Tickets83B11BB2: table warm throughput set", "prod/itsm Tickets83B11BB2: index CallerIdIndex warm throughput raised"},
		},
		{
			name: "warm throughput setting removed", stage: "prod", stack: "itsm",
			edit: func(o, _ tpl) {
				props(o, tickets)["WarmThroughput"] = map[string]any{"ReadUnitsPerSecond": 20000.0}
			},
			want: []string{"prod/itsm Tickets83B11BB2: table warm throughput setting removed (the table stays as warm as it is)"},
		},
		{
			name: "enable PITR", stage: "dev", stack: "itsm",
			edit: func(_, n tpl) {
				replica(n, tickets)["PointInTimeRecoverySpecification"] = map[string]any{"PointInTimeRecoveryEnabled": true, "RecoveryPeriodInDays": 35}
			},
			want: []string{"dev/itsm Tickets83B11BB2: PITR enabled"},
		},
		{
			name: "change tags", stage: "prod", stack: "itsm",
			edit: func(_, n tpl) {
				r := replica(n, tickets)
				r["Tags"] = append(list(r["Tags"]), map[string]any{"Key": "team", "Value": "itsm"})
			},
			want: []string{"prod/itsm Tickets83B11BB2: tags changed"},
		},
		{
			name: "raise the max on-demand write throughput", stage: "prod", stack: "itsm",
			edit: func(o, n tpl) {
				props(o, tickets)["WriteOnDemandThroughputSettings"] = map[string]any{"MaxWriteRequestUnits": 100}
				props(n, tickets)["WriteOnDemandThroughputSettings"] = map[string]any{"MaxWriteRequestUnits": 500}
			},
			want: []string{"prod/itsm Tickets83B11BB2: WriteOnDemandThroughputSettings changed"},
		},
		{
			name: "raise an index's on-demand throughput", stage: "prod", stack: "nucleus",
			edit: func(o, n tpl) {
				gsi(o, app, "GSI1")["WriteOnDemandThroughputSettings"] = map[string]any{"MaxWriteRequestUnits": 100}
				gsi(n, app, "GSI1")["WriteOnDemandThroughputSettings"] = map[string]any{"MaxWriteRequestUnits": 200}
			},
			want: []string{"prod/nucleus AppF1B96344: index GSI1 settings changed"},
		},
		{
			name: "raise a plain Table's on-demand and provisioned throughput", stage: "prod", stack: "stak",
			edit: func(o, n tpl) {
				toPlainTable(o, inbox)
				toPlainTable(n, inbox)
				props(o, inbox)["OnDemandThroughput"] = map[string]any{"MaxReadRequestUnits": 10}
				props(n, inbox)["OnDemandThroughput"] = map[string]any{"MaxReadRequestUnits": 50}
				props(o, inbox)["ProvisionedThroughput"] = map[string]any{"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
				props(n, inbox)["ProvisionedThroughput"] = map[string]any{"ReadCapacityUnits": 10, "WriteCapacityUnits": 10}
			},
			want: []string{"prod/stak InboxA8E05DC3: OnDemandThroughput changed", "prod/stak InboxA8E05DC3: ProvisionedThroughput changed"},
		},
		{
			name: "add a new table", stage: "prod", stack: "itsm",
			edit: func(_, n tpl) {
				tb := clone(resource(n, tickets)).(map[string]any)
				tb["Properties"].(map[string]any)["TableName"] = "poc-itsm-comments-prod"
				resources(n)[newTable] = tb
			},
			want: []string{"prod/itsm Comments5A1B2C3D: new table poc-itsm-comments-prod"},
		},
		{
			name: "change a Lambda", stage: "prod", stack: "itsm",
			edit: func(_, n tpl) { props(n, lambda)["MemorySize"] = 1024 },
			want: nil,
		},
		{
			name: "enable a stream", stage: "dev", stack: "itsm",
			edit: func(_, n tpl) {
				props(n, tickets)["StreamSpecification"] = map[string]any{"StreamViewType": "NEW_IMAGE"}
			},
			want: []string{"dev/itsm Tickets83B11BB2: stream enabled (NEW_IMAGE)"},
		},
		{
			name: "enable TTL", stage: "prod", stack: "itsm",
			edit: func(o, n tpl) {
				delete(props(o, tickets), "TimeToLiveSpecification")
				props(n, tickets)["TimeToLiveSpecification"] = map[string]any{"AttributeName": "expires_at", "Enabled": true}
			},
			want: []string{"prod/itsm Tickets83B11BB2: TTL enabled on expires_at"},
		},
		{
			name: "add one replica", stage: "prod", stack: "agenticpm",
			edit: func(_, n tpl) { addReplica(n, pmTable, "eu-west-1") },
			want: []string{"prod/agenticpm TableCD117FA1: replica eu-west-1 added"},
		},
		{
			name: "drop RETAIN in dev", stage: "dev", stack: "itsm",
			edit: func(o, _ tpl) {
				resource(o, tickets)["DeletionPolicy"] = "Retain"
				resource(o, tickets)["UpdateReplacePolicy"] = "Retain"
			},
			want: []string{"dev/itsm Tickets83B11BB2: DeletionPolicy Retain → Delete", "dev/itsm Tickets83B11BB2: UpdateReplacePolicy Retain → Delete"},
		},
		{
			name: "disable PITR in dev", stage: "dev", stack: "agenticpm",
			edit: func(_, n tpl) {
				replica(n, pmTable)["PointInTimeRecoverySpecification"] = map[string]any{"PointInTimeRecoveryEnabled": false}
			},
			want: []string{"dev/agenticpm TableCD117FA1: PITR disabled"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := compareEdited(t, tc.stage, tc.stack, tc.edit)
			require.Empty(t, r.Hazards, "want no hazards, got:\n%s", lines(r.Hazards))
			var got []string
			for _, c := range r.Changes {
				got = append(got, c.String())
			}
			assert.Equal(t, tc.want, got, "changes")
		})
	}
}

// TestStacks covers stacks present on one side only and a table moving
// between stacks.
func TestStacks(t *testing.T) {
	g := func(key string) tpl { stage, stack := splitKey(key); return loadGolden(t, stage, stack) }

	t.Run("table-removed/stack removed", func(t *testing.T) {
		old := map[string]tpl{"prod/itsm": g("prod/itsm"), "prod/stak": g("prod/stak")}
		new := map[string]tpl{"prod/itsm": g("prod/itsm")}
		r := Compare(set(t, old), set(t, new))
		require.Equal(t, []Class{TableRemoved}, classes(r.Hazards), "hazards:\n%s", lines(r.Hazards))
		h := r.Hazards[0]
		assert.Equal(t, "stak", h.Stack, "hazard %s", h)
		assert.Equal(t, inbox, h.LogicalID, "hazard %s", h)
		assert.Contains(t, h.Detail, "stack removed", "hazard %s", h)
	})

	t.Run("new stack is safe", func(t *testing.T) {
		old := map[string]tpl{"dev/itsm": g("dev/itsm")}
		new := map[string]tpl{"dev/itsm": g("dev/itsm"), "dev/stak": g("dev/stak")}
		r := Compare(set(t, old), set(t, new))
		require.Empty(t, r.Hazards, "hazards:\n%s", lines(r.Hazards))
		if assert.Len(t, r.Changes, 1, "changes") {
			assert.Equal(t, "dev/stak: new stack with 1 table", r.Changes[0].String(), "changes")
		}
		assert.Equal(t, 2, r.Stacks, "counted stacks")
		assert.Equal(t, 2, r.Tables, "counted tables")
	})

	t.Run("logical-id-change/table moved to another stack", func(t *testing.T) {
		itsm, nucleus := g("dev/itsm"), g("dev/nucleus")
		old := map[string]tpl{"dev/itsm": g("dev/itsm"), "dev/nucleus": g("dev/nucleus")}
		resources(nucleus)["Tickets0A1B2C3D"] = resource(itsm, tickets)
		delete(resources(itsm), tickets)
		r := Compare(set(t, old), set(t, map[string]tpl{"dev/itsm": itsm, "dev/nucleus": nucleus}))
		require.Equal(t, []Class{LogicalIDChange}, classes(r.Hazards), "hazards:\n%s", lines(r.Hazards))
		h := r.Hazards[0]
		assert.Equal(t, "nucleus", h.Stack, "hazard %s", h)
		assert.Equal(t, tickets, h.OldLogicalID, "hazard %s", h)
		assert.Contains(t, h.Detail, "moved from stack dev/itsm to dev/nucleus", "hazard %s", h)
	})
}

// TestGoldenAgainstItself: the reviewed templates compared with themselves
// must be clean, or every `make guard` on an unrelated change would fail.
func TestGoldenAgainstItself(t *testing.T) {
	old, err := Load(goldenDir)
	require.NoError(t, err)
	new, err := Load(goldenDir)
	require.NoError(t, err)
	r := Compare(old, new)
	require.Empty(t, r.Hazards, "golden against itself:\n%s", lines(r.Hazards))
	require.Empty(t, r.Changes, "golden against itself:\n%s", lines(r.Changes))
	assert.Equal(t, len(new.Templates), r.Stacks, "compared stacks")
	assert.NotZero(t, r.Tables, "compared tables")
	for _, tm := range new.Templates {
		assert.NotEmpty(t, tm.Stage, "%s: stage", tm.Path)
		assert.NotEmpty(t, tm.Stack, "%s: stack", tm.Path)
		assert.NotEmpty(t, tm.tables, "%s: tables", tm.Path)
	}
}

func TestSummary(t *testing.T) {
	r := Report{Stacks: 15, Tables: 18, Changes: []Change{
		{Stage: "dev", Stack: "itsm", LogicalID: tickets, Detail: "PITR enabled"},
		{Stage: "dev", Stack: "itsm", LogicalID: tickets, Detail: "tags changed"},
		{Stage: "dev", Stack: "stak", Detail: "new stack with 1 table"},
	}}
	want := "15 stacks, 18 tables compared, 3 safe changes (dev/itsm Tickets83B11BB2: PITR enabled, tags changed; dev/stak: new stack with 1 table)"
	assert.Equal(t, want, r.Summary(), "summary")
	assert.Equal(t, "1 stack, 1 table compared, no safe changes", (Report{Stacks: 1, Tables: 1}).Summary(), "summary")
}
