package test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The contracts below are transcribed from the design documents in
// ../shared/seeds, not from the construct code: every name is a literal here
// on purpose, so that renaming a constant in constructs/ breaks this test
// instead of silently changing the deployed schema.

type key struct{ name, keyType, attrType string }

type gsi struct {
	name       string
	keys       []key
	projection string
}

type contract struct {
	doc, stack string
	baseName   string // physical name is baseName-<stage>
	keys       []key
	gsis       []gsi
	// stageGSIs are the document's optional indexes where a stage turns
	// them on (infra/config), after gsis.
	stageGSIs map[string][]gsi
	ttl       string
	stream    string          // stream view type in every stage, "" for none
	pitr      map[string]bool // per stage
}

var defaultPITR = map[string]bool{"dev": false, "stage": true, "prod": true}

var contracts = []contract{
	{
		doc: "000 rez_agent", stack: "rezagent", baseName: "rez-agent-messages",
		keys: []key{{"message_id", "HASH", "S"}},
		gsis: []gsi{
			{"stage-created_date-index", []key{{"stage", "HASH", "S"}, {"created_date", "RANGE", "S"}}, "ALL"},
			{"status-created_date-index", []key{{"status", "HASH", "S"}, {"created_date", "RANGE", "S"}}, "ALL"},
		},
		// "GSI 3 (Optional): MessageType-CreatedDate Index": on in prod.
		stageGSIs: map[string][]gsi{"prod": {
			{"message_type-created_date-index", []key{{"message_type", "HASH", "S"}, {"created_date", "RANGE", "S"}}, "ALL"},
		}},
		ttl:  "ttl",
		pitr: defaultPITR, // "Enabled: Yes (for stage and prod)", "Disabled for: dev"
	},
	{
		doc: "001 Nucleus app", stack: "nucleus", baseName: "NucleusAppTable",
		keys: []key{{"pk", "HASH", "S"}, {"sk", "RANGE", "S"}},
		gsis: []gsi{{"GSI1", []key{{"gsi1pk", "HASH", "S"}, {"gsi1sk", "RANGE", "S"}}, "ALL"}},
		ttl:  "expire_at", // not in the document: expires the API's idempotency records (docs/schemas/nucleus.md)
		pitr: defaultPITR,
	},
	{
		doc: "001 Nucleus audit", stack: "nucleus", baseName: "NucleusAuditTable",
		keys: []key{{"pk", "HASH", "S"}, {"sk", "RANGE", "S"}},
		gsis: []gsi{{"GSI1", []key{{"gsi1pk", "HASH", "S"}, {"gsi1sk", "RANGE", "S"}}, "ALL"}},
		ttl:  "expire_at",
		pitr: defaultPITR,
	},
	{
		doc: "002 Stak inbox", stack: "stak", baseName: "stak-inbox",
		keys:   []key{{"pk", "HASH", "S"}, {"sk", "RANGE", "S"}},
		ttl:    "expiredat",
		stream: "NEW_AND_OLD_IMAGES", // counters are kept from TTL deletions: old images needed in every stage
		pitr:   defaultPITR,
	},
	{
		doc: "003 ITSM", stack: "itsm", baseName: "poc-itsm-tickets",
		keys: []key{{"ticket_id", "HASH", "S"}},
		gsis: []gsi{{"CallerIdIndex", []key{{"caller_id", "HASH", "S"}, {"created_at", "RANGE", "S"}}, "ALL"}},
		ttl:  "expires_at", // not in the document: expires the API's idempotency records (docs/schemas/itsm.md)
		pitr: defaultPITR,
	},
	{
		doc: "004 AgenticPM", stack: "agenticpm", baseName: "AgenticPM",
		keys: []key{{"PK", "HASH", "S"}, {"SK", "RANGE", "S"}},
		gsis: []gsi{{"GSI1", []key{{"GSI1PK", "HASH", "S"}, {"GSI1SK", "RANGE", "S"}}, "ALL"}},
		ttl:  "TTL",
		pitr: map[string]bool{"dev": true, "stage": true, "prod": true}, // "PITR: Enabled"
	},
}

// Stage policy from the foundation issue, the same for every table.
var (
	removal            = map[string]string{"dev": "Delete", "stage": "Retain", "prod": "Retain"}
	deletionProtection = map[string]bool{"dev": false, "stage": false, "prod": true}
)

func TestSchemaContracts(t *testing.T) {
	for _, c := range contracts {
		for _, stage := range []string{"dev", "stage", "prod"} {
			t.Run(fmt.Sprintf("%s/%s", c.doc, stage), func(t *testing.T) {
				tmpl, ok := asm.Templates[stage][c.stack]
				require.True(t, ok, "no stack %s in stage %s", c.stack, stage)
				name := c.baseName + "-" + stage
				var res map[string]any
				for _, r := range tmpl.Resources("AWS::DynamoDB::GlobalTable") {
					if props(r)["TableName"] == name {
						res = r
					}
				}
				require.NotNil(t, res, "stack %s/%s has no table named %q", stage, c.stack, name)
				p := props(res)
				checkKeys(t, "table", p["KeySchema"], p["AttributeDefinitions"], c.keys)
				assert.Equal(t, "PAY_PER_REQUEST", p["BillingMode"], "BillingMode (on-demand in every document)")
				checkGSIs(t, p, append(slices.Clone(c.gsis), c.stageGSIs[stage]...))
				checkTTL(t, p, c.ttl)
				gotStream := ""
				if s, ok := p["StreamSpecification"].(map[string]any); ok {
					gotStream, _ = s["StreamViewType"].(string)
				}
				assert.Equal(t, c.stream, gotStream, "stream view type")
				replica := onlyReplica(t, p)
				pitr, _ := replica["PointInTimeRecoverySpecification"].(map[string]any)
				gotPITR, _ := pitr["PointInTimeRecoveryEnabled"].(bool)
				assert.Equal(t, c.pitr[stage], gotPITR, "point-in-time recovery")
				gotProtection, _ := replica["DeletionProtectionEnabled"].(bool)
				assert.Equal(t, deletionProtection[stage], gotProtection, "deletion protection")
				assert.Equal(t, removal[stage], res["DeletionPolicy"], "DeletionPolicy")
				assert.Equal(t, removal[stage], res["UpdateReplacePolicy"], "UpdateReplacePolicy")
				// Document 000 names the AWS-managed key; the others name
				// none and keep the AWS-owned key.
				sse, _ := p["SSESpecification"].(map[string]any)
				if c.stack == "rezagent" {
					// The AWS-managed key: SSEEnabled true, SSEType KMS, no key id.
					assert.Equal(t, true, sse["SSEEnabled"], "SSESpecification %v: the AWS-managed key", sse)
					assert.Equal(t, "KMS", sse["SSEType"], "SSESpecification %v: the AWS-managed key", sse)
					assert.Nil(t, sse["KMSMasterKeyId"], "SSESpecification %v: the AWS-managed key", sse)
				} else {
					assert.Equal(t, false, sse["SSEEnabled"], "SSESpecification %v: the AWS-owned key", sse)
				}
				checkTags(t, replica, c.stack, stage)
			})
		}
	}
}

func TestStackPolicy(t *testing.T) {
	for stage, stacks := range asm.Stacks {
		for id, s := range stacks {
			assert.Equal(t, id+"-"+stage, s.StackName, "%s/%s: stack name", stage, id)
			assert.Equal(t, stage == "prod", s.TerminationProtection, "%s/%s: termination protection", stage, id)
		}
	}
	// Every table the stacks hold is in a contract: an undocumented table
	// cannot slip in.
	known := map[string]bool{}
	for _, c := range contracts {
		for _, stage := range []string{"dev", "stage", "prod"} {
			known[c.baseName+"-"+stage] = true
		}
	}
	for stage, stacks := range asm.Templates {
		for id, tmpl := range stacks {
			for lid, r := range tmpl.Resources("AWS::DynamoDB::GlobalTable") {
				name, _ := props(r)["TableName"].(string)
				assert.True(t, known[name], "%s/%s: table %s (%q) has no schema contract", stage, id, lid, name)
			}
			assert.Empty(t, tmpl.Resources("AWS::DynamoDB::Table"), "%s/%s: AWS::DynamoDB::Table resources: tables are TableV2 (GlobalTable)", stage, id)
		}
	}
}

func props(r map[string]any) map[string]any {
	p, _ := r["Properties"].(map[string]any)
	return p
}

func checkKeys(t *testing.T, where string, schema, defs any, want []key) {
	t.Helper()
	types := map[string]string{}
	for _, d := range list(defs) {
		types[str(d, "AttributeName")] = str(d, "AttributeType")
	}
	var got []key
	for _, k := range list(schema) {
		n := str(k, "AttributeName")
		got = append(got, key{n, str(k, "KeyType"), types[n]})
	}
	assert.Equal(t, want, got, "%s keys", where)
}

func checkGSIs(t *testing.T, p map[string]any, want []gsi) {
	t.Helper()
	got := list(p["GlobalSecondaryIndexes"])
	if !assert.Len(t, got, len(want), "global secondary indexes") {
		return
	}
	for i, w := range want {
		g := got[i]
		if !assert.Equal(t, w.name, str(g, "IndexName"), "index %d", i) {
			continue
		}
		checkKeys(t, "index "+w.name, g["KeySchema"], p["AttributeDefinitions"], w.keys)
		proj, _ := g["Projection"].(map[string]any)
		assert.Equal(t, w.projection, proj["ProjectionType"], "index %s projection", w.name)
	}
	assert.Empty(t, list(p["LocalSecondaryIndexes"]), "local secondary indexes: no document asks for one")
}

func checkTTL(t *testing.T, p map[string]any, want string) {
	t.Helper()
	spec, _ := p["TimeToLiveSpecification"].(map[string]any)
	if want == "" {
		assert.NotEqual(t, true, spec["Enabled"], "TTL enabled on %v, the document names no TTL", spec["AttributeName"])
		return
	}
	assert.Equal(t, want, spec["AttributeName"], "TTL attribute of %v", spec)
	assert.Equal(t, true, spec["Enabled"], "TTL on %q enabled (%v)", want, spec)
}

func onlyReplica(t *testing.T, p map[string]any) map[string]any {
	t.Helper()
	r := list(p["Replicas"])
	require.Len(t, r, 1, "replicas (no document asks for a global table)")
	return r[0]
}

func checkTags(t *testing.T, replica map[string]any, service, stage string) {
	t.Helper()
	got := map[string]string{}
	for _, tag := range list(replica["Tags"]) {
		got[str(tag, "Key")] = str(tag, "Value")
	}
	assert.Equal(t, service, got["service"], "tag service of %v", got)
	assert.Equal(t, stage, got["stage"], "tag stage of %v", got)

}

func list(v any) []map[string]any {
	items, _ := v.([]any)
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}
