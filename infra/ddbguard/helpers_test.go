package ddbguard

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// goldenDir is the repository's reviewed templates; the test cases start
// from them so that they exercise the shapes CDK really emits.
const goldenDir = "../../test/snapshots"

// tpl is a decoded template the cases mutate.
type tpl = map[string]any

func loadGolden(t *testing.T, stage, stack string) tpl {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(goldenDir, stage, stack+".template.json"))
	require.NoError(t, err)
	var out tpl
	require.NoError(t, json.Unmarshal(data, &out))
	return out
}

// The golden tables by stack, so cases read as "the ITSM tickets table".
const (
	tickets  = "Tickets83B11BB2"  // itsm: one GSI, no TTL, no stream
	messages = "Messages804FA4EB" // rezagent: two GSIs, TTL "ttl"
	inbox    = "InboxA8E05DC3"    // stak: stream NEW_AND_OLD_IMAGES, TTL "expiredat"
	app      = "AppF1B96344"      // nucleus: one GSI
	pmTable  = "TableCD117FA1"    // agenticpm: PITR on in every stage
	lambda   = "Handler886CB40B"  // itsm: a Lambda function
	audit    = "Audit3D8ADE0A"    // nucleus: TTL "expire_at"
	newTable = "Comments5A1B2C3D" // a table the cases add
)

func resources(t tpl) map[string]any { return t["Resources"].(map[string]any) }

func resource(t tpl, id string) map[string]any { return resources(t)[id].(map[string]any) }

func props(t tpl, id string) map[string]any { return resource(t, id)["Properties"].(map[string]any) }

// replica is the single replica of a golden GlobalTable.
func replica(t tpl, id string) map[string]any {
	return props(t, id)["Replicas"].([]any)[0].(map[string]any)
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

// addAttribute adds an attribute definition unless the table has it.
func addAttribute(p map[string]any, name, typ string) {
	for _, d := range list(p["AttributeDefinitions"]) {
		if d.(map[string]any)["AttributeName"] == name {
			return
		}
	}
	p["AttributeDefinitions"] = append(list(p["AttributeDefinitions"]), map[string]any{"AttributeName": name, "AttributeType": typ})
}

// addGSI adds an index the way TableV2 emits it: the definition, the key
// attribute and the replica's entry.
func addGSI(t tpl, id, name, hash string) {
	p := props(t, id)
	addAttribute(p, hash, "S")
	p["GlobalSecondaryIndexes"] = append(list(p["GlobalSecondaryIndexes"]), map[string]any{
		"IndexName":  name,
		"KeySchema":  []any{map[string]any{"AttributeName": hash, "KeyType": "HASH"}},
		"Projection": map[string]any{"ProjectionType": "ALL"},
	})
	if reps, ok := p["Replicas"].([]any); ok {
		for _, r := range reps {
			r := r.(map[string]any)
			r["GlobalSecondaryIndexes"] = append(list(r["GlobalSecondaryIndexes"]), map[string]any{"IndexName": name})
		}
	}
}

func gsi(t tpl, id, name string) map[string]any {
	for _, g := range list(props(t, id)["GlobalSecondaryIndexes"]) {
		if g := g.(map[string]any); g["IndexName"] == name {
			return g
		}
	}
	panic("no index " + name)
}

func deleteGSI(t tpl, id, name string) {
	p := props(t, id)
	drop := func(l []any) []any {
		return slices.DeleteFunc(slices.Clone(l), func(g any) bool { return g.(map[string]any)["IndexName"] == name })
	}
	p["GlobalSecondaryIndexes"] = drop(list(p["GlobalSecondaryIndexes"]))
	for _, r := range list(p["Replicas"]) {
		r := r.(map[string]any)
		r["GlobalSecondaryIndexes"] = drop(list(r["GlobalSecondaryIndexes"]))
	}
}

func renameGSI(t tpl, id, from, to string) {
	gsi(t, id, from)["IndexName"] = to
	for _, r := range list(props(t, id)["Replicas"]) {
		for _, g := range list(r.(map[string]any)["GlobalSecondaryIndexes"]) {
			if g := g.(map[string]any); g["IndexName"] == from {
				g["IndexName"] = to
			}
		}
	}
}

// addReplica adds a replica in region, copied from the first one.
func addReplica(t tpl, id, region string) {
	p := props(t, id)
	r := clone(list(p["Replicas"])[0]).(map[string]any)
	r["Region"] = region
	p["Replicas"] = append(list(p["Replicas"]), r)
}

// renameResource gives a resource another logical id.
func renameResource(t tpl, from, to string) {
	rs := resources(t)
	rs[to] = rs[from]
	delete(rs, from)
}

// toPlainTable rewrites a golden GlobalTable as the AWS::DynamoDB::Table the
// older Table construct emits: replica settings move to the top level.
func toPlainTable(t tpl, id string) {
	r := resource(t, id)
	p := r["Properties"].(map[string]any)
	rep := list(p["Replicas"])[0].(map[string]any)
	delete(p, "Replicas")
	p["PointInTimeRecoverySpecification"] = rep["PointInTimeRecoverySpecification"]
	p["DeletionProtectionEnabled"] = rep["DeletionProtectionEnabled"]
	p["Tags"] = rep["Tags"]
	r["Type"] = "AWS::DynamoDB::Table"
}

func clone(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// parse turns a decoded template into a Template of stage/stack.
func parse(t *testing.T, stage, stack string, v tpl) *Template {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	tm, err := ParseTemplate(filepath.Join(stage, stack+".template.json"), data)
	require.NoError(t, err)
	tm.Stage, tm.Stack = stage, stack
	return tm
}

// set builds a golden-layout Set from templates keyed "stage/stack".
func set(t *testing.T, templates map[string]tpl) Set {
	t.Helper()
	s := Set{Path: "mem", Layout: LayoutGolden}
	for _, key := range slices.Sorted(maps.Keys(templates)) {
		stage, stack := splitKey(key)
		s.Templates = append(s.Templates, parse(t, stage, stack, templates[key]))
	}
	return s
}

func splitKey(key string) (string, string) {
	stage, stack, ok := strings.Cut(key, "/")
	if !ok {
		panic("key without stage: " + key)
	}
	return stage, stack
}

// writeGolden writes templates keyed "stage/stack" in the golden layout.
func writeGolden(t *testing.T, dir string, templates map[string]tpl) {
	t.Helper()
	for key, v := range templates {
		stage, stack := splitKey(key)
		writeJSON(t, filepath.Join(dir, stage, stack+".template.json"), v)
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	writeFile(t, path, string(data))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

func classes(hs []Hazard) []Class {
	out := make([]Class, len(hs))
	for i, h := range hs {
		out[i] = h.Class
	}
	slices.Sort(out)
	return out
}
