package cfntables

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/dynastack/dynastack/constructs/service"
)

// Function is an AWS::Lambda::Function of a template.
type Function struct {
	LogicalID string
	// Env holds the environment variables as written in the template.
	Env map[string]EnvValue
	// Timeout is the template's Timeout (Lambda's default of 3 s when the
	// template has none): how long one invocation may run.
	Timeout time.Duration
}

// defaultTimeout is Lambda's default function timeout.
const defaultTimeout = 3 * time.Second

// EnvValue is the value of one environment variable: a literal, or a Ref to
// another resource of the template (for a table, its name).
type EnvValue struct {
	Literal string
	Ref     string
	// Raw is set for anything else (Fn::GetAtt, Fn::Join…), kept for the
	// error message.
	Raw json.RawMessage
}

// Service is the function's DYNASTACK_SERVICE, or "" without one.
func (f Function) Service() string { return f.Env[service.EnvFunction].Literal }

// UnmarshalJSON implements json.Unmarshaler.
func (v *EnvValue) UnmarshalJSON(b []byte) error {
	*v = EnvValue{}
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte(`"`)) {
		return json.Unmarshal(b, &v.Literal)
	}
	var ref map[string]json.RawMessage
	if json.Unmarshal(b, &ref) == nil && len(ref) == 1 {
		if r, ok := ref["Ref"]; ok && json.Unmarshal(r, &v.Ref) == nil {
			return nil
		}
	}
	v.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// Functions returns the functions of t, sorted by logical id.
func (t *Template) Functions() ([]Function, error) {
	var out []Function
	for _, id := range t.logicalIDs(TypeFunction) {
		var p struct {
			Environment struct {
				Variables map[string]EnvValue `json:"Variables"`
			} `json:"Environment"`
			Timeout float64 `json:"Timeout"`
		}
		if raw := t.Resources[id].Properties; len(raw) > 0 {
			if err := json.Unmarshal(raw, &p); err != nil {
				return nil, fmt.Errorf("cfntables: function %s: %w", id, err)
			}
		}
		timeout := defaultTimeout
		if p.Timeout > 0 {
			timeout = time.Duration(p.Timeout * float64(time.Second))
		}
		out = append(out, Function{LogicalID: id, Env: p.Environment.Variables, Timeout: timeout})
	}
	return out, nil
}

// Environment resolves the function's variables. Refs are looked up in
// names (logical id → physical name, as returned by Create); a Ref to a
// resource without a local name, or any other intrinsic, is ErrUnsupported
// naming the variable, because silently passing "" would surface much later
// as a confusing runtime error.
func (f Function) Environment(names map[string]string) (map[string]string, error) {
	env := make(map[string]string, len(f.Env))
	keys := make([]string, 0, len(f.Env))
	for k := range f.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := f.Env[k]
		switch {
		case v.Raw != nil:
			return nil, fmt.Errorf("%w: function %s variable %s is %s", ErrUnsupported, f.LogicalID, k, v.Raw)
		case v.Ref != "":
			name, ok := names[v.Ref]
			if !ok {
				return nil, fmt.Errorf("%w: function %s variable %s refers to %s, which is not a table of the template", ErrUnsupported, f.LogicalID, k, v.Ref)
			}
			env[k] = name
		default:
			env[k] = v.Literal
		}
	}
	return env, nil
}
