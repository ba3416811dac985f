package iamcalls

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A grant is one action a function's role allows on one resource.
type grant struct {
	Action string
	// Resource names what the action is allowed on, the same in every
	// stage: a table's logical id ("InboxA8E05DC3"), one of its indexes
	// ("InboxA8E05DC3/index/GSI1", "…/index/*"), its stream
	// ("InboxA8E05DC3 stream"), or "*".
	Resource string
}

func (g grant) String() string { return g.Action + " on " + g.Resource }

// stage is what the check needs of a stage's templates: each function's
// DynamoDB grants, and the tables by name.
type stage struct {
	name string
	// functions maps DYNASTACK_SERVICE → its role's DynamoDB grants.
	functions map[string][]grant
	// tables maps each template's TableName → logical id.
	tables map[string]string
}

// loadStages reads every stage of dir (test/snapshots).
func loadStages(dir string) ([]stage, error) {
	dirs, err := filepath.Glob(filepath.Join(dir, "*", "*.template.json"))
	if err != nil {
		return nil, err
	}
	var stages []stage
	for _, d := range dirs {
		d = filepath.Dir(d)
		if slices.ContainsFunc(stages, func(s stage) bool { return s.name == filepath.Base(d) }) {
			continue
		}
		st, err := loadStage(d)
		if err != nil {
			return nil, err
		}
		stages = append(stages, st)
	}
	if len(stages) == 0 {
		return nil, fmt.Errorf("no stages in %s", dir)
	}
	return stages, nil
}

type resource struct {
	Type       string
	Properties json.RawMessage
}

// loadStage reads every template of dir (test/snapshots/<stage>, which
// TestGolden proves equal to the synthesized stage).
func loadStage(dir string) (stage, error) {
	st := stage{name: filepath.Base(dir), functions: map[string][]grant{}, tables: map[string]string{}}
	paths, err := filepath.Glob(filepath.Join(dir, "*.template.json"))
	if err != nil || len(paths) == 0 {
		return st, fmt.Errorf("no templates in %s (%v)", dir, err)
	}
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			return st, err
		}
		var tmpl struct{ Resources map[string]resource }
		if err := json.Unmarshal(raw, &tmpl); err != nil {
			return st, fmt.Errorf("%s: %w", path, err)
		}
		if err := st.add(tmpl.Resources); err != nil {
			return st, fmt.Errorf("%s: %w", path, err)
		}
	}
	return st, nil
}

func (st stage) add(resources map[string]resource) error {
	names := map[string]string{} // logical id → TableName, this template's
	for id, r := range resources {
		if r.Type != "AWS::DynamoDB::Table" && r.Type != "AWS::DynamoDB::GlobalTable" {
			continue
		}
		var p struct{ TableName string }
		if err := json.Unmarshal(r.Properties, &p); err != nil || p.TableName == "" {
			return fmt.Errorf("table %s has no literal TableName (%v)", id, err)
		}
		names[id], st.tables[p.TableName] = p.TableName, id
	}
	roles := map[string]string{} // role logical id → function's service
	for id, r := range resources {
		if r.Type != "AWS::Lambda::Function" {
			continue
		}
		var p struct {
			Role        map[string][]string `json:"Role"`
			Environment struct{ Variables map[string]any }
		}
		if err := json.Unmarshal(r.Properties, &p); err != nil {
			return fmt.Errorf("function %s: %w", id, err)
		}
		service, _ := p.Environment.Variables["DYNASTACK_SERVICE"].(string)
		if service == "" {
			continue
		}
		if att := p.Role["Fn::GetAtt"]; len(att) == 2 {
			roles[att[0]] = service
		}
		if _, ok := st.functions[service]; !ok {
			st.functions[service] = nil
		}
	}
	for id, r := range resources {
		if r.Type != "AWS::IAM::Policy" {
			continue
		}
		var p struct {
			Roles          []map[string]string
			PolicyDocument struct{ Statement []statement }
		}
		if err := json.Unmarshal(r.Properties, &p); err != nil {
			return fmt.Errorf("policy %s: %w", id, err)
		}
		for _, role := range p.Roles {
			service, ok := roles[role["Ref"]]
			if !ok {
				continue
			}
			for _, s := range p.PolicyDocument.Statement {
				if s.Effect != "Allow" {
					// A Deny of another service's actions (Nucleus's
					// sts:AssumeRole of roles under a path) leaves the
					// DynamoDB grants as they are; one that could name a
					// DynamoDB action would change them, which the check
					// does not compute.
					for _, rawAction := range list(s.Action) {
						var a string
						if err := json.Unmarshal(rawAction, &a); err != nil || !strings.Contains(a, ":") || strings.HasPrefix(a, "dynamodb:") || strings.HasPrefix(a, "*") {
							return fmt.Errorf("policy %s: a %s statement on %s: the check knows Allow only for DynamoDB", id, s.Effect, rawAction)
						}
					}
					continue
				}
				for _, rawAction := range list(s.Action) {
					var a string
					if err := json.Unmarshal(rawAction, &a); err != nil {
						return fmt.Errorf("policy %s: action %s: %w", id, rawAction, err)
					}
					if !strings.HasPrefix(a, "dynamodb:") {
						continue
					}
					for _, res := range list(s.Resource) {
						name, err := describe(res, names)
						if err != nil {
							return fmt.Errorf("policy %s: %w", id, err)
						}
						st.functions[service] = append(st.functions[service], grant{a, name})
					}
				}
			}
		}
	}
	for fn, gs := range st.functions {
		slices.SortFunc(gs, func(a, b grant) int { return strings.Compare(a.String(), b.String()) })
		st.functions[fn] = slices.Compact(gs)
	}
	return nil
}

type statement struct {
	Effect   string
	Action   json.RawMessage
	Resource json.RawMessage
}

// list reads a policy field that is one value or a list of them.
func list(raw json.RawMessage) []json.RawMessage {
	var many []json.RawMessage
	if json.Unmarshal(raw, &many) == nil {
		return many
	}
	return []json.RawMessage{raw}
}

// describe names a statement resource the way grant.Resource does; it
// fails on a form it does not know, rather than pass it.
func describe(raw json.RawMessage, tables map[string]string) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "*" {
			return "*", nil
		}
		return "", fmt.Errorf("resource %q: want a table's GetAtt, an index Join or *", s)
	}
	var att struct {
		GetAtt []string `json:"Fn::GetAtt"`
		Join   []json.RawMessage
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", err
	}
	if v, ok := obj["Fn::GetAtt"]; ok && json.Unmarshal(v, &att.GetAtt) == nil && len(att.GetAtt) == 2 {
		id := att.GetAtt[0]
		_, ok := tables[id]
		switch {
		case !ok:
			return "", fmt.Errorf("resource %s: not a table of this template", raw)
		case att.GetAtt[1] == "Arn":
			return id, nil
		case att.GetAtt[1] == "StreamArn":
			return id + " stream", nil
		}
	}
	if v, ok := obj["Fn::Join"]; ok && json.Unmarshal(v, &att.Join) == nil && len(att.Join) == 2 {
		var parts []json.RawMessage
		if json.Unmarshal(att.Join[1], &parts) == nil && len(parts) == 2 {
			var suffix string
			table, err := describe(parts[0], tables)
			if err == nil && json.Unmarshal(parts[1], &suffix) == nil && strings.HasPrefix(suffix, "/index/") && !strings.Contains(table, " ") {
				return table + suffix, nil
			}
		}
	}
	return "", fmt.Errorf("resource %s: want a table's GetAtt, an index Join or *", raw)
}

// allows reports whether g lets a call with action on table (a logical
// id) and index ("" for the table itself) through.
func (g grant) allows(action, table, index string) bool {
	if g.Action != action && g.Action != "dynamodb:*" {
		return false
	}
	switch {
	case g.Resource == "*":
		return true
	case index == "":
		return g.Resource == table
	default:
		return g.Resource == table+"/index/"+index || g.Resource == table+"/index/*"
	}
}
