package adopt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/infra/ddbguard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const golden = "../../test/snapshots"

func fixture(name string) string { return filepath.Join("testdata", name+".json") }

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(append([]string{"-templates", golden, "-out", t.TempDir()}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestExitCodes: 0 writes the mapping file (its path alone on stdout), 1
// prints one line per difference, 2 names what is wrong with the input and
// the valid choices.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	// The rez_agent fixture split into the four CLI outputs, as a person
	// saves them.
	var whole map[string]json.RawMessage
	b, _ := os.ReadFile(fixture("rezagent-iac-prod"))
	require.NoError(t, json.Unmarshal(b, &whole))
	var split []string
	for _, k := range []string{"Table", "TimeToLiveDescription", "ContinuousBackupsDescription", "Tags"} {
		split = append(split, write(k+".json", fmt.Sprintf(`{%q: %s}`, k, whole[k])))
	}
	// Prod has document 000's optional type index (issue 17), as the
	// fixture's live table does; a live table without it must create it
	// first.
	matching := fixture("rezagent-iac-prod")
	noTypeIndex := write("no-type-index.json", mustJSON(t, map[string]any{"Table": withoutIndex(t, whole["Table"], "message_type-created_date-index"),
		"TimeToLiveDescription": whole["TimeToLiveDescription"], "ContinuousBackupsDescription": whole["ContinuousBackupsDescription"], "Tags": whole["Tags"]}))

	for _, tt := range []struct {
		name   string
		args   []string
		exit   int
		stdout string // substring; for exit 0 the path's suffix
		stderr string
	}{
		{"importable", []string{"-stage", "prod", "-service", "rezagent", matching}, 0, "prod-rezagent-rez-agent-messages-prod.resource-mapping.json", "can import table rez-agent-messages-prod as it is (14 fields compared); next: npx cdk import --resource-mapping"},
		{"a live table without prod's type index", []string{"-stage", "prod", "-service", "rezagent", noTypeIndex}, 1,
			"index message_type-created_date-index: template (HASH message_type (S), RANGE created_date (S); projection ALL), table none: import does not create it", "1 difference in 14 fields compared"},
		{"the four outputs as separate files", append([]string{"-stage", "prod", "-service", "rezagent"}, split...), 0, "prod-rezagent-rez-agent-messages-prod.resource-mapping.json", ""},
		{"a live name the stage does not use", []string{"-stage", "prod", "-service", "itsm", fixture("itsm-cli")}, 2, "",
			`table "poc-itsm-tickets" is not a table of prod/itsm, whose tables are poc-itsm-tickets-prod (construct Tickets, logical id Tickets83B11BB2); to adopt it as one of them, set TableNames[config.TableKey("itsm", "Tickets")] = "poc-itsm-tickets" for stage prod in infra/config`},
		{"unknown stage", []string{"-stage", "production", "-service", "itsm", fixture("itsm-cli")}, 2, "", `unknown stage "production": ../../test/snapshots has dev, prod, stage`},
		{"unknown service", []string{"-stage", "prod", "-service", "tickets", fixture("itsm-cli")}, 2, "", `unknown service "tickets": use one of rezagent, nucleus, stak, itsm, agenticpm`},
		{"no describe file", []string{"-stage", "prod", "-service", "itsm"}, 2, "", "usage: adopt -stage <stage> -service <service>"},
		{"missing file", []string{"-stage", "prod", "-service", "itsm", filepath.Join(dir, "nope.json")}, 2, "", "cannot read " + filepath.Join(dir, "nope.json")},
		{"not JSON", []string{"-stage", "prod", "-service", "itsm", write("text.json", "Table: poc")}, 2, "", "is not a JSON object"},
		{"no Table", []string{"-stage", "prod", "-service", "itsm", split[1]}, 2, "", `no "Table" object in ` + split[1] + `: the output of aws dynamodb describe-table --table-name <name> is required`},
		{"another command's output", []string{"-stage", "prod", "-service", "itsm", write("scan.json", `{"Items": [], "Count": 0}`)}, 2, "", `top-level key "Count" is none of describe-table`},
		{"an output twice", []string{"-stage", "prod", "-service", "rezagent", split[0], matching}, 2, "", `both carry "Table": pass each CLI output once`},
		{"paginated tags", []string{"-stage", "prod", "-service", "rezagent", split[0], write("page.json", `{"Tags": [], "NextToken": "abc"}`)}, 2, "", "list-tags-of-resource returned a NextToken"},
		{"wrong shape", []string{"-stage", "prod", "-service", "rezagent", write("shape.json", `{"Table": {"TableName": 7}}`)}, 2, "", "Table is not describe-table's shape"},
		{"not a template folder", []string{"-templates", dir, "-stage", "prod", "-service", "rezagent", matching}, 2, "", "no templates found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tt.args...)
			require.Equal(t, tt.exit, code, "exit code\nstdout: %s\nstderr: %s", stdout, stderr)
			switch {
			case tt.exit == 0:
				lines := strings.Split(strings.TrimSpace(stdout), "\n")
				if assert.Len(t, lines, 1, "stdout %q, want the mapping file's path alone", stdout) &&
					assert.True(t, strings.HasSuffix(lines[0], tt.stdout), "stdout %q, want the mapping file's path alone", stdout) {
					b, err := os.ReadFile(lines[0])
					if assert.NoError(t, err, "mapping file") {
						assert.Equal(t, "{\n  \"Messages804FA4EB\": {\n    \"TableName\": \"rez-agent-messages-prod\"\n  }\n}\n", string(b), "mapping file")
					}
				}
			case !strings.Contains(stdout, tt.stdout):
				assert.Contains(t, stdout, tt.stdout, "stdout")
			case tt.exit == 2:
				assert.Empty(t, stdout, "exit 2 printed on stdout")
			}
			assert.Contains(t, stderr, tt.stderr, "stderr")
		})
	}
}

// TestNotChecked: describe-table alone is enough; what it does not carry is
// listed and does not change the exit code.
func TestNotChecked(t *testing.T) {
	var whole map[string]json.RawMessage
	b, _ := os.ReadFile(fixture("itsm-cli-prepared"))
	_ = json.Unmarshal(b, &whole)
	// prod's golden ITSM table is poc-itsm-tickets-prod: rename the fixture.
	tbl := strings.Replace(string(whole["Table"]), `"TableName": "poc-itsm-tickets"`, `"TableName": "poc-itsm-tickets-prod"`, 1)
	p := filepath.Join(t.TempDir(), "table.json")
	require.NoError(t, os.WriteFile(p, []byte(`{"Table": `+tbl+`}`), 0o644))
	code, stdout, stderr := run(t, "-stage", "prod", "-service", "itsm", p)
	require.Zero(t, code, "exit code\n%s%s", stdout, stderr)
	for _, want := range []string{
		"not checked: time to live (add the output of aws dynamodb describe-time-to-live --table-name poc-itsm-tickets-prod)",
		"not checked: point-in-time recovery (add the output of aws dynamodb describe-continuous-backups --table-name poc-itsm-tickets-prod)",
		"not checked: tags (add the output of aws dynamodb list-tags-of-resource --resource-arn arn:aws:dynamodb:us-east-1:123456789012:table/poc-itsm-tickets)",
		"not checked: region: the table is in us-east-1",
	} {
		assert.Contains(t, stderr, want, "stderr")
	}
}

// TestEveryGoldenTableImportsItsOwnDescription: the description of a table
// exactly as its template creates it imports cleanly, in every stage (dev
// only with the removal difference: its tables are DESTROY).
func TestEveryGoldenTableImportsItsOwnDescription(t *testing.T) {
	set, err := ddbguard.Load(golden)
	require.NoError(t, err)
	n := 0
	for _, tpl := range set.Templates {
		targets, err := Targets(set, tpl.Stage, tpl.Stack)
		require.NoError(t, err)
		for _, tg := range targets {
			n++
			res := Compare(tg, liveFrom(tg))
			want := 0
			if tpl.Stage == "dev" {
				want = 1
			}
			assert.Len(t, res.Differences, want, "%s/%s %s: differences", tpl.Stage, tpl.Stack, tg.Name)
		}
	}
	assert.Equal(t, 18, n, "tables in the golden files, want 6 per stage")
}

// TestDifferenceClasses: each field the command compares, changed on the
// live side alone, gives exactly one line naming the field, the two values
// and the safe way.
func TestDifferenceClasses(t *testing.T) {
	set, err := ddbguard.Load(golden)
	require.NoError(t, err)
	target := func(stage, stack string) Target {
		ts, err := Targets(set, stage, stack)
		require.NoError(t, err, "%s/%s", stage, stack)
		require.NotEmpty(t, ts, "%s/%s", stage, stack)
		return ts[0]
	}
	rez := target("prod", "rezagent") // TTL, three GSIs (prod has the type index), AWS-managed key
	stak := target("stage", "stak")   // a stream, stage policy
	devITSM := target("dev", "itsm")  // DESTROY
	yes, no := true, false
	for _, tt := range []struct {
		name   string
		target Target
		change func(*Live)
		want   []string // substrings of the one line
	}{
		{"key attribute type", rez, func(l *Live) { setAttr(l, "message_id", "message_id", "N") },
			[]string{"key schema: template HASH message_id (S), table HASH message_id (N): a table's key cannot change", "safe way: none in place"}},
		{"key attribute name", rez, func(l *Live) {
			l.Table.KeySchema[0].AttributeName = "id"
			setAttr(l, "message_id", "id", "S")
		},
			[]string{"key schema: template HASH message_id (S), table HASH id (S)"}},
		{"sort key added", rez, func(l *Live) {
			l.Table.KeySchema = append(l.Table.KeySchema, KeyElement{"created_date", "RANGE"})
		}, []string{"key schema: template HASH message_id (S), table HASH message_id (S), RANGE created_date (S)"}},
		{"a local index", rez, func(l *Live) {
			l.Table.LocalSecondaryIndexes = []IndexDescription{{IndexName: "by-date", KeySchema: []KeyElement{{"message_id", "HASH"}, {"created_date", "RANGE"}}}}
		}, []string{"local index by-date: template none, table (HASH message_id (S), RANGE created_date (S); projection ALL): local secondary indexes exist only from a table's creation"}},
		{"a missing index", rez, func(l *Live) {
			l.Table.GlobalSecondaryIndexes = slices.DeleteFunc(l.Table.GlobalSecondaryIndexes, func(i IndexDescription) bool { return i.IndexName == "status-created_date-index" })
		},
			[]string{"index status-created_date-index: template (HASH status (S), RANGE created_date (S); projection ALL), table none: import does not create it", "live update 1 of 1"}},
		{"an extra index", stak, func(l *Live) {
			l.Table.GlobalSecondaryIndexes = append(l.Table.GlobalSecondaryIndexes, IndexDescription{IndexName: "by-sk", KeySchema: []KeyElement{{"sk", "HASH"}}})
		}, []string{"index by-sk: template none, table (HASH sk (S); projection ALL): the template has no such index, so the first deploy after import that touches the indexes deletes it", "Delete={IndexName=by-sk}"}},
		{"an index projection", rez, func(l *Live) {
			i := index(l, "stage-created_date-index")
			i.Projection.ProjectionType = "INCLUDE"
			i.Projection.NonKeyAttributes = []string{"status", "message_type"}
		}, []string{"index stage-created_date-index: template (HASH stage (S), RANGE created_date (S); projection ALL), table (HASH stage (S), RANGE created_date (S); projection INCLUDE [message_type, status])", "delete it (live update 1 of 2), then create it as the template says (live update 2 of 2"}},
		{"an index key type", rez, func(l *Live) {
			setAttr(l, "created_date", "created_date", "N")
		}, nil}, // three lines: every index sorts on created_date

		{"index maximums", rez, func(l *Live) { index(l, "status-created_date-index").OnDemandThroughput = &OnDemandThroughput{-1, -1} },
			[]string{"index status-created_date-index on-demand maximums: template read 10000/write 5000, table none", "Update={IndexName=status-created_date-index,OnDemandThroughput={MaxReadRequestUnits=10000,MaxWriteRequestUnits=5000}}"}},
		{"table maximums", rez, func(l *Live) { l.Table.OnDemandThroughput = &OnDemandThroughput{20000, 5000} },
			[]string{"table on-demand maximums: template read 10000/write 5000, table read 20000/write 5000", "Billing (MaxReadRequestUnits 20000, MaxWriteRequestUnits 5000)"}},
		{"billing mode", rez, func(l *Live) {
			l.Table.BillingModeSummary.BillingMode = "PROVISIONED"
			l.Table.ProvisionedThroughput = &Throughput{5, 5}
		}, []string{"billing mode: template PAY_PER_REQUEST, table PROVISIONED", "--billing-mode PAY_PER_REQUEST"}},
		{"time to live off", rez, func(l *Live) { l.TTL = &TimeToLiveDescription{TimeToLiveStatus: "DISABLED"} },
			[]string{"time to live: template on ttl, table off: import does not enable it", "Enabled=true,AttributeName=ttl"}},
		{"time to live on another attribute", rez, func(l *Live) { l.TTL.AttributeName = "expires_at" },
			[]string{"time to live: template on ttl, table on expires_at", "disable TTL on expires_at"}},
		// Every table has TTL now (ITSM's for its idempotency records), so
		// "template none" is met only by a table the code does not expire.
		{"time to live on an attribute the code does not write", target("prod", "itsm"), func(l *Live) { l.TTL = &TimeToLiveDescription{"ENABLED", "expire_at"} },
			[]string{"time to live: template on expires_at, table on expire_at", "disable TTL on expire_at"}},
		{"no stream", stak, func(l *Live) { l.Table.StreamSpecification = nil },
			[]string{"stream: template NEW_AND_OLD_IMAGES, table none: import does not enable it", "StreamEnabled=true,StreamViewType=NEW_AND_OLD_IMAGES"}},
		{"another view type", stak, func(l *Live) { l.Table.StreamSpecification.StreamViewType = "KEYS_ONLY" },
			[]string{"stream: template NEW_AND_OLD_IMAGES, table KEYS_ONLY: a stream's view type cannot change in place"}},
		{"a stream the template lacks", rez, func(l *Live) {
			l.Table.StreamSpecification = &struct {
				StreamEnabled  bool
				StreamViewType string
			}{true, "NEW_IMAGE"}
		}, []string{"stream: template none, table NEW_IMAGE", "Stream: table.NewImage"}},
		{"AWS-owned key where the spec wants KMS", rez, func(l *Live) { l.Table.SSEDescription = nil },
			[]string{"encryption: template AWS_MANAGED, table AWS_OWNED", "SSEType=KMS"}},
		{"KMS where the template is AWS-owned", stak, func(l *Live) {
			l.Table.SSEDescription = &struct{ Status, SSEType, KMSMasterKeyArn string }{"ENABLED", "KMS", "arn:aws:kms:us-east-1:123456789012:key/k"}
		}, []string{"encryption: template AWS_OWNED, table KMS key arn:aws:kms:us-east-1:123456789012:key/k", "Encryption: table.AWSManaged"}},
		{"recovery off", rez, func(l *Live) { l.Backups.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus = "DISABLED" },
			[]string{"point-in-time recovery: template on (35 days), table off", "PointInTimeRecoveryEnabled=true,RecoveryPeriodInDays=35"}},
		{"a shorter recovery window", rez, func(l *Live) { l.Backups.PointInTimeRecoveryDescription.RecoveryPeriodInDays = 7 },
			[]string{"point-in-time recovery: template on (35 days), table on (7 days)"}},
		{"deletion protection off", rez, func(l *Live) { l.Table.DeletionProtectionEnabled = &no },
			[]string{"deletion protection: template on, table off", "--deletion-protection-enabled"}},
		{"deletion protection the stage does not set", stak, func(l *Live) { l.Table.DeletionProtectionEnabled = &yes },
			[]string{"deletion protection: template off, table on", "DeletionProtection: true"}},
		{"table class", rez, func(l *Live) { l.Table.TableClassSummary = &struct{ TableClass string }{"STANDARD_INFREQUENT_ACCESS"} },
			[]string{"table class: template STANDARD, table STANDARD_INFREQUENT_ACCESS", "--table-class STANDARD"}},
		{"a tag the table lacks", rez, func(l *Live) { *l.Tags = (*l.Tags)[:1] },
			[]string{"tag stage: template prod, table none", "tag-resource"}},
		{"a tag the template lacks", rez, func(l *Live) { *l.Tags = append(*l.Tags, Tag{"CostCenter", "42"}) },
			[]string{`tag CostCenter: template none, table 42`, `Tags: {"CostCenter": "42"}`, `config.TableKey("rezagent", "Messages")`}},
		{"a tag's value", rez, func(l *Live) { (*l.Tags)[1].Value = "production" },
			[]string{"tag stage: template prod, table production"}},
		{"aws: tags are not compared", rez, func(l *Live) { *l.Tags = append(*l.Tags, Tag{"aws:cloudformation:stack-name", "Old"}) }, []string{}},
		{"replicas", rez, func(l *Live) { l.Table.Replicas = []struct{ RegionName string }{{"us-east-1"}, {"eu-west-1"}} },
			[]string{"replicas: template one replica, the stack's Region, table us-east-1, eu-west-1"}},
		{"a colder table than the template's warm throughput", warm(rez), func(l *Live) {
			l.Table.WarmThroughput = &struct{ ReadUnitsPerSecond, WriteUnitsPerSecond int64 }{12000, 4000}
		}, []string{"warm throughput: template read 20000/write 4000, table read 12000/write 4000", "--warm-throughput ReadUnitsPerSecond=20000,WriteUnitsPerSecond=4000"}},
		{"a warmer table is fine", warm(rez), func(l *Live) {
			l.Table.WarmThroughput = &struct{ ReadUnitsPerSecond, WriteUnitsPerSecond int64 }{30000, 9000}
		}, []string{}},
		{"a table being updated", rez, func(l *Live) { l.Table.TableStatus = "UPDATING" },
			[]string{"table status: template ACTIVE, table UPDATING: CloudFormation imports only an ACTIVE table"}},
		{"a stage that deletes its tables", devITSM, func(*Live) {},
			[]string{"removal policy: template Delete, table a live table with data: once imported, deleting the stack or the table's construct deletes the live table", "RemovalPolicy: RETAIN"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := liveFrom(tt.target)
			tt.change(l)
			res := Compare(tt.target, l)
			if tt.want == nil {
				assert.Len(t, res.Differences, 3, "differences")
				return
			}
			wantN := 1
			if len(tt.want) == 0 {
				wantN = 0
			}
			require.Len(t, res.Differences, wantN, "differences")
			for _, w := range tt.want {
				assert.Contains(t, res.Differences[0].Line(), w, "line")
			}
		})
	}
}

// warm is the target with a warm throughput set, as an override would.
func warm(t Target) Target {
	t.WarmRead, t.WarmWrite = 20000, 4000
	return t
}

// liveFrom describes the table exactly as the target would create it, the
// way the AWS CLI reports it.
func liveFrom(t Target) *Live {
	types := map[string]string{}
	parseKeys := func(s string) []KeyElement {
		var out []KeyElement
		for _, part := range strings.Split(s, ", ") {
			var kt, name, typ string
			fmt.Sscanf(part, "%s %s (%1s)", &kt, &name, &typ)
			types[name] = typ
			out = append(out, KeyElement{name, kt})
		}
		return out
	}
	caps := func(r, w int64) *OnDemandThroughput {
		if r == 0 {
			r = -1
		}
		if w == 0 {
			w = -1
		}
		return &OnDemandThroughput{r, w}
	}
	l := &Live{Table: TableDescription{
		TableName: t.Name, TableArn: "arn:aws:dynamodb:us-east-1:123456789012:table/" + t.Name, TableStatus: "ACTIVE",
		KeySchema:                 parseKeys(t.Keys),
		BillingModeSummary:        &struct{ BillingMode string }{t.BillingMode},
		OnDemandThroughput:        caps(t.MaxRead, t.MaxWrite),
		DeletionProtectionEnabled: &t.DeletionProtection,
	}}
	if t.WarmRead > 0 || t.WarmWrite > 0 {
		l.Table.WarmThroughput = &struct{ ReadUnitsPerSecond, WriteUnitsPerSecond int64 }{t.WarmRead, t.WarmWrite}
	}
	for _, n := range union(t.GSIs, t.GSIs) {
		ix := t.GSIs[n]
		d := IndexDescription{IndexName: n, KeySchema: parseKeys(ix.Keys), OnDemandThroughput: caps(ix.MaxRead, ix.MaxWrite)}
		typ, rest, _ := strings.Cut(ix.Projection, " [")
		d.Projection.ProjectionType = typ
		if rest != "" {
			d.Projection.NonKeyAttributes = strings.Split(strings.TrimSuffix(rest, "]"), ", ")
		}
		l.Table.GlobalSecondaryIndexes = append(l.Table.GlobalSecondaryIndexes, d)
	}
	for _, n := range union(types, types) {
		l.Table.AttributeDefinitions = append(l.Table.AttributeDefinitions, AttributeDefinition{n, types[n]})
	}
	if t.Stream != "" {
		l.Table.StreamSpecification = &struct {
			StreamEnabled  bool
			StreamViewType string
		}{true, t.Stream}
	}
	if t.Encryption != awsOwned {
		l.Table.SSEDescription = &struct{ Status, SSEType, KMSMasterKeyArn string }{"ENABLED", "KMS", "arn:aws:kms:us-east-1:123456789012:key/k"}
	}
	l.TTL = &TimeToLiveDescription{TimeToLiveStatus: "DISABLED"}
	if t.TTLEnabled {
		l.TTL = &TimeToLiveDescription{"ENABLED", t.TTLAttribute}
	}
	l.Backups = &ContinuousBackupsDescription{ContinuousBackupsStatus: "ENABLED", PointInTimeRecoveryDescription: &struct {
		PointInTimeRecoveryStatus string
		RecoveryPeriodInDays      int
	}{"DISABLED", 0}}
	if t.PITR {
		l.Backups.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus = "ENABLED"
		l.Backups.PointInTimeRecoveryDescription.RecoveryPeriodInDays = t.RecoveryPeriodDays
	}
	tags := []Tag{}
	for _, k := range union(t.Tags, t.Tags) {
		tags = append(tags, Tag{k, t.Tags[k]})
	}
	l.Tags = &tags
	return l
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// withoutIndex drops one GSI from a describe-table Table object.
func withoutIndex(t *testing.T, raw json.RawMessage, name string) map[string]any {
	var tbl map[string]any
	require.NoError(t, json.Unmarshal(raw, &tbl))
	var keep []any
	for _, g := range tbl["GlobalSecondaryIndexes"].([]any) {
		if g.(map[string]any)["IndexName"] != name {
			keep = append(keep, g)
		}
	}
	tbl["GlobalSecondaryIndexes"] = keep
	return tbl
}

// setAttr renames or retypes one attribute definition.
func setAttr(l *Live, name, to, typ string) {
	for i, a := range l.Table.AttributeDefinitions {
		if a.AttributeName == name {
			l.Table.AttributeDefinitions[i] = AttributeDefinition{to, typ}
		}
	}
}

// index is the live description's index called name.
func index(l *Live, name string) *IndexDescription {
	for i := range l.Table.GlobalSecondaryIndexes {
		if l.Table.GlobalSecondaryIndexes[i].IndexName == name {
			return &l.Table.GlobalSecondaryIndexes[i]
		}
	}
	panic("no index " + name)
}
