package test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
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
				if !ok {
					t.Fatalf("no stack %s in stage %s", c.stack, stage)
				}
				name := c.baseName + "-" + stage
				var res map[string]any
				for _, r := range tmpl.Resources("AWS::DynamoDB::GlobalTable") {
					if props(r)["TableName"] == name {
						res = r
					}
				}
				if res == nil {
					t.Fatalf("stack %s/%s has no table named %q", stage, c.stack, name)
				}
				p := props(res)
				checkKeys(t, "table", p["KeySchema"], p["AttributeDefinitions"], c.keys)
				if got := p["BillingMode"]; got != "PAY_PER_REQUEST" {
					t.Errorf("BillingMode = %v, want PAY_PER_REQUEST (on-demand in every document)", got)
				}
				checkGSIs(t, p, append(slices.Clone(c.gsis), c.stageGSIs[stage]...))
				checkTTL(t, p, c.ttl)
				gotStream := ""
				if s, ok := p["StreamSpecification"].(map[string]any); ok {
					gotStream, _ = s["StreamViewType"].(string)
				}
				if gotStream != c.stream {
					t.Errorf("stream = %q, want %q", gotStream, c.stream)
				}
				replica := onlyReplica(t, p)
				pitr, _ := replica["PointInTimeRecoverySpecification"].(map[string]any)
				if got, _ := pitr["PointInTimeRecoveryEnabled"].(bool); got != c.pitr[stage] {
					t.Errorf("point-in-time recovery = %v, want %v", got, c.pitr[stage])
				}
				if got, _ := replica["DeletionProtectionEnabled"].(bool); got != deletionProtection[stage] {
					t.Errorf("deletion protection = %v, want %v", got, deletionProtection[stage])
				}
				if res["DeletionPolicy"] != removal[stage] || res["UpdateReplacePolicy"] != removal[stage] {
					t.Errorf("DeletionPolicy/UpdateReplacePolicy = %v/%v, want %s", res["DeletionPolicy"], res["UpdateReplacePolicy"], removal[stage])
				}
				// Document 000 names the AWS-managed key; the others name
				// none and keep the AWS-owned key.
				sse, _ := p["SSESpecification"].(map[string]any)
				if c.stack == "rezagent" {
					if sse["SSEEnabled"] != true || sse["SSEType"] != "KMS" || sse["KMSMasterKeyId"] != nil {
						t.Errorf("SSESpecification = %v, want the AWS-managed key (SSEEnabled true, SSEType KMS, no key id)", sse)
					}
				} else if sse["SSEEnabled"] != false {
					t.Errorf("SSESpecification = %v, want the AWS-owned key (SSEEnabled false)", sse)
				}
				checkTags(t, replica, c.stack, stage)
			})
		}
	}
}

func TestStackPolicy(t *testing.T) {
	for stage, stacks := range asm.Stacks {
		for id, s := range stacks {
			if want := id + "-" + stage; s.StackName != want {
				t.Errorf("%s/%s: stack name %q, want %q", stage, id, s.StackName, want)
			}
			if want := stage == "prod"; s.TerminationProtection != want {
				t.Errorf("%s/%s: termination protection %v, want %v", stage, id, s.TerminationProtection, want)
			}
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
				if name, _ := props(r)["TableName"].(string); !known[name] {
					t.Errorf("%s/%s: table %s (%q) has no schema contract", stage, id, lid, name)
				}
			}
			if n := len(tmpl.Resources("AWS::DynamoDB::Table")); n > 0 {
				t.Errorf("%s/%s: %d AWS::DynamoDB::Table resources: tables are TableV2 (GlobalTable)", stage, id, n)
			}
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
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s keys = %v, want %v", where, got, want)
	}
}

func checkGSIs(t *testing.T, p map[string]any, want []gsi) {
	t.Helper()
	got := list(p["GlobalSecondaryIndexes"])
	if len(got) != len(want) {
		t.Errorf("%d global secondary indexes, want %d", len(got), len(want))
		return
	}
	for i, w := range want {
		g := got[i]
		if str(g, "IndexName") != w.name {
			t.Errorf("index %d is %q, want %q", i, str(g, "IndexName"), w.name)
			continue
		}
		checkKeys(t, "index "+w.name, g["KeySchema"], p["AttributeDefinitions"], w.keys)
		proj, _ := g["Projection"].(map[string]any)
		if proj["ProjectionType"] != w.projection {
			t.Errorf("index %s projection = %v, want %s", w.name, proj["ProjectionType"], w.projection)
		}
	}
	if n := len(list(p["LocalSecondaryIndexes"])); n > 0 {
		t.Errorf("%d local secondary indexes, no document asks for one", n)
	}
}

func checkTTL(t *testing.T, p map[string]any, want string) {
	t.Helper()
	spec, _ := p["TimeToLiveSpecification"].(map[string]any)
	if want == "" {
		if spec != nil && spec["Enabled"] == true {
			t.Errorf("TTL enabled on %v, the document names no TTL", spec["AttributeName"])
		}
		return
	}
	if spec["AttributeName"] != want || spec["Enabled"] != true {
		t.Errorf("TTL = %v, want enabled on %q", spec, want)
	}
}

func onlyReplica(t *testing.T, p map[string]any) map[string]any {
	t.Helper()
	r := list(p["Replicas"])
	if len(r) != 1 {
		t.Fatalf("%d replicas, want 1 (no document asks for a global table)", len(r))
	}
	return r[0]
}

func checkTags(t *testing.T, replica map[string]any, service, stage string) {
	t.Helper()
	got := map[string]string{}
	for _, tag := range list(replica["Tags"]) {
		got[str(tag, "Key")] = str(tag, "Value")
	}
	if got["service"] != service || got["stage"] != stage {
		t.Errorf("tags %v, want service=%s and stage=%s", got, service, stage)
	}
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
