package ddbguard

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

const (
	typeTable       = "AWS::DynamoDB::Table"
	typeGlobalTable = "AWS::DynamoDB::GlobalTable"
)

func isTable(typ string) bool { return typ == typeTable || typ == typeGlobalTable }

// table is a DynamoDB table reduced to what decides whether CloudFormation
// can update it in place. Keys and indexes are rendered to text with their
// attribute types, because an attribute type change is as much a key change
// as a renamed attribute.
type table struct {
	id, typ string
	res     Resource
	// name is the TableName ("" when CloudFormation generates it).
	name     string
	keyNames string
	keys     string
	gsis     map[string]index
	lsis     map[string]index
	stream   string
	ttlAttr  string
	ttlOn    bool
	// units are where PITR and deletion protection live: the table itself
	// for AWS::DynamoDB::Table, each replica (by region) for a GlobalTable.
	units    map[string]map[string]any
	replicas []string
}

type index struct {
	name       string
	keys       string
	projection string
	// settings is everything else (throughput, contributor insights), which
	// DynamoDB updates in place.
	settings string
}

func (i index) sig() string { return i.keys + " / " + i.projection }

type keyElement struct {
	AttributeName string
	KeyType       string
}

type indexSpec struct {
	IndexName  string
	KeySchema  []keyElement
	Projection struct {
		ProjectionType   string
		NonKeyAttributes []string
	}
}

func parseTable(id string, res Resource) (*table, error) {
	p := res.Properties
	t := &table{id: id, typ: res.Type, res: res, units: map[string]map[string]any{}}
	if v, ok := p["TableName"]; ok {
		t.name = render(v)
	}
	var defs []struct{ AttributeName, AttributeType string }
	if err := decode(p, "AttributeDefinitions", &defs); err != nil {
		return nil, err
	}
	types := map[string]string{}
	for _, d := range defs {
		types[d.AttributeName] = d.AttributeType
	}
	var keys []keyElement
	if err := decode(p, "KeySchema", &keys); err != nil {
		return nil, err
	}
	t.keyNames = renderKeys(keys, nil)
	t.keys = renderKeys(keys, types)
	var err error
	if t.gsis, err = parseIndexes(p, "GlobalSecondaryIndexes", types); err != nil {
		return nil, err
	}
	if t.lsis, err = parseIndexes(p, "LocalSecondaryIndexes", types); err != nil {
		return nil, err
	}
	var stream struct{ StreamViewType string }
	if err := decode(p, "StreamSpecification", &stream); err != nil {
		return nil, err
	}
	t.stream = stream.StreamViewType
	var ttl struct {
		AttributeName string
		Enabled       any
	}
	if err := decode(p, "TimeToLiveSpecification", &ttl); err != nil {
		return nil, err
	}
	t.ttlAttr = ttl.AttributeName
	t.ttlOn, _ = boolish(ttl.Enabled)
	if res.Type == typeTable {
		t.units[""] = p
		return t, nil
	}
	var replicas []map[string]any
	if err := decode(p, "Replicas", &replicas); err != nil {
		return nil, err
	}
	for i, r := range replicas {
		region := regionOf(r["Region"])
		if region == "" {
			return nil, fmt.Errorf("replica %d of Replicas has no Region", i+1)
		}
		if _, dup := t.units[region]; dup {
			return nil, fmt.Errorf("region %s listed twice in Replicas", region)
		}
		t.units[region] = r
		t.replicas = append(t.replicas, region)
	}
	return t, nil
}

// decode converts one property into dst, so that a property of the wrong
// shape is reported instead of silently read as empty.
func decode(props map[string]any, key string, dst any) error {
	v, ok := props[key]
	if !ok || v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, dst)
	}
	if err != nil {
		return fmt.Errorf("%s is not the CloudFormation shape: %v", key, err)
	}
	return nil
}

func parseIndexes(p map[string]any, key string, types map[string]string) (map[string]index, error) {
	var specs []indexSpec
	if err := decode(p, key, &specs); err != nil {
		return nil, err
	}
	var raws []map[string]any
	if err := decode(p, key, &raws); err != nil {
		return nil, err
	}
	out := map[string]index{}
	for i, s := range specs {
		if s.IndexName == "" {
			return nil, fmt.Errorf("%s[%d] has no IndexName", key, i)
		}
		if _, dup := out[s.IndexName]; dup {
			return nil, fmt.Errorf("%s: index %s listed twice", key, s.IndexName)
		}
		rest := maps.Clone(raws[i])
		delete(rest, "IndexName")
		delete(rest, "KeySchema")
		delete(rest, "Projection")
		delete(rest, "WarmThroughput") // checkWarmThroughput judges it
		proj := s.Projection.ProjectionType
		if len(s.Projection.NonKeyAttributes) > 0 {
			// The order of non-key attributes means nothing to DynamoDB.
			proj += " [" + strings.Join(slices.Sorted(slices.Values(s.Projection.NonKeyAttributes)), " ") + "]"
		}
		out[s.IndexName] = index{
			name:       s.IndexName,
			keys:       renderKeys(s.KeySchema, types),
			projection: proj,
			settings:   render(rest),
		}
	}
	return out, nil
}

// renderKeys renders a key schema as "HASH pk(S), RANGE sk(S)"; with nil
// types it renders the attribute names only.
func renderKeys(keys []keyElement, types map[string]string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k.KeyType + " " + k.AttributeName
		if types != nil {
			t := types[k.AttributeName]
			if t == "" {
				t = "?"
			}
			parts[i] += "(" + t + ")"
		}
	}
	return strings.Join(parts, ", ")
}

// regionOf names a replica's region; the usual {"Ref": "AWS::Region"} is the
// stack's own region.
func regionOf(v any) string {
	if m, ok := v.(map[string]any); ok && len(m) == 1 && m["Ref"] == "AWS::Region" {
		return "${AWS::Region}"
	}
	return render(v)
}

// boolish reads a CloudFormation boolean; absent means false, and anything
// that is not a literal (an intrinsic) is reported as unknown.
func boolish(v any) (value, known bool) {
	switch v := v.(type) {
	case nil:
		return false, true
	case bool:
		return v, true
	case string:
		switch strings.ToLower(v) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	return false, false
}

func (t *table) displayName() string {
	if t.name == "" {
		return "(unnamed)"
	}
	return t.name
}

// retains reports whether a DeletionPolicy/UpdateReplacePolicy value keeps
// the table's data when CloudFormation lets go of the resource.
func retains(policy string) bool {
	switch policy {
	case "Retain", "RetainExceptOnCreate", "Snapshot":
		return true
	}
	return false
}

func policyText(policy string) string {
	if policy == "" {
		return "(default Delete)"
	}
	return policy
}

// protectionOn reports deletion protection for one unit (the table, or one
// replica of a global table).
func protectionOn(unit map[string]any) bool {
	on, _ := boolish(unit["DeletionProtectionEnabled"])
	return on
}

func pitr(unit map[string]any) (on bool, spec string) {
	s, _ := unit["PointInTimeRecoverySpecification"].(map[string]any)
	on, _ = boolish(s["PointInTimeRecoveryEnabled"])
	return on, render(s)
}

func anyProtection(t *table) bool {
	for _, u := range t.units {
		if protectionOn(u) {
			return true
		}
	}
	return false
}
