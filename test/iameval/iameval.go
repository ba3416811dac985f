// Package iameval evaluates IAM policy documents as a synthesized template
// holds them, for tests that must prove what a policy allows rather than
// what it spells: a resource policy that only denies (SNS's default policy
// replaced by a TLS-only one) or a resource pattern whose * spans a '/'
// reads right and is wrong.
//
// It implements the part of IAM's evaluation logic dynastack's policies
// use: Allow and Deny statements (an explicit deny wins, nothing allowed is
// an implicit deny), Principal ("*", AWS "*" or an IAM principal's ARN,
// Service, Federated: an identity provider's ARN), Action/NotAction and Resource/NotResource with * and ? wildcards (an ARN is matched segment
// by segment, the resource segment whole, so * spans '/'), and the
// condition operators below with their ...IfExists forms and, for
// multivalued keys, their ForAllValues: and ForAnyValue: forms. A statement it
// does not understand (an unknown element or operator, a value that is not
// a plain string after intrinsic functions are resolved) is an error, never
// a silent match or miss.
package iameval

import (
	"fmt"
	"slices"
	"strings"
)

// Request is one API call to evaluate.
type Request struct {
	// Service is the calling service principal, e.g.
	// cloudwatch.amazonaws.com; "" for an IAM principal (whose identity
	// policy is being evaluated, so Principal is absent).
	Service string
	// Principal is the calling IAM principal's ARN (a role's
	// arn:aws:iam::<account>:role/<name>), for a resource policy that
	// names it. It matches a Principal AWS value equal to it, and "*".
	// An account's root ARN is matched only by itself: in a key policy
	// that statement delegates to the account's IAM policies rather than
	// naming the role; EvaluateKMS evaluates that delegation.
	Principal string
	// Action, e.g. sns:Publish.
	Action string
	// Resource is the ARN acted on.
	Resource string
	// Context holds the request's condition keys, e.g. aws:SourceAccount.
	Context map[string]string
	// Sets holds its multivalued condition keys, e.g.
	// kms:EncryptionContextKeys; only ForAllValues: and ForAnyValue:
	// operators test them (a plain operator on one is an error, as IAM's
	// policy validator warns).
	Sets map[string][]string
}

// Decision is the outcome of an evaluation.
type Decision int

// Decisions.
const (
	ImplicitDeny Decision = iota
	Allow
	ExplicitDeny
)

func (d Decision) String() string {
	return [...]string{"implicit deny", "allow", "explicit deny"}[d]
}

// Evaluate evaluates req against the statements of a policy document
// (decoded JSON, intrinsic functions already resolved; see Resolve).
// Principals are matched when the document is a resource policy (its
// statements carry Principal); an identity policy's statements carry none
// and apply to the identity holding them.
func Evaluate(doc any, req Request) (Decision, error) {
	m, ok := doc.(map[string]any)
	if !ok {
		return ImplicitDeny, fmt.Errorf("policy document %v is not an object", doc)
	}
	var stmts []any
	switch s := m["Statement"].(type) {
	case []any:
		stmts = s
	case map[string]any:
		stmts = []any{s}
	default:
		return ImplicitDeny, fmt.Errorf("policy document has no Statement")
	}
	out := ImplicitDeny
	for i, s := range stmts {
		st, ok := s.(map[string]any)
		if !ok {
			return ImplicitDeny, fmt.Errorf("statement %d is not an object", i)
		}
		applies, err := statementApplies(st, req)
		if err != nil {
			return ImplicitDeny, fmt.Errorf("statement %d (%v): %w", i, st["Sid"], err)
		}
		if !applies {
			continue
		}
		switch st["Effect"] {
		case "Deny":
			return ExplicitDeny, nil
		case "Allow":
			out = Allow
		default:
			return ImplicitDeny, fmt.Errorf("statement %d: Effect %v", i, st["Effect"])
		}
	}
	return out, nil
}

var known = []string{"Sid", "Effect", "Principal", "Action", "NotAction", "Resource", "NotResource", "Condition"}

func statementApplies(st map[string]any, req Request) (bool, error) {
	for k := range st {
		if !slices.Contains(known, k) {
			return false, fmt.Errorf("element %s is not understood", k)
		}
	}
	if p, ok := st["Principal"]; ok {
		match, err := principalMatches(p, req)
		if err != nil || !match {
			return false, err
		}
	} else if _, ok := st["NotPrincipal"]; ok {
		return false, fmt.Errorf("NotPrincipal is not understood")
	}
	match, err := listMatches(st, "Action", "NotAction", req.Action, matchAction)
	if err != nil || !match {
		return false, err
	}
	// A role's trust policy names no resource: the role itself is it.
	_, hasResource := st["Resource"]
	_, hasNotResource := st["NotResource"]
	if _, trust := st["Principal"]; !trust || hasResource || hasNotResource || !strings.HasPrefix(strings.ToLower(req.Action), "sts:assumerole") {
		match, err = listMatches(st, "Resource", "NotResource", req.Resource, MatchARN)
		if err != nil || !match {
			return false, err
		}
	}
	if c, ok := st["Condition"]; ok {
		return conditionsHold(c, req)
	}
	return true, nil
}

func principalMatches(p any, req Request) (bool, error) {
	if p == "*" {
		return true, nil
	}
	m, ok := p.(map[string]any)
	if !ok {
		return false, fmt.Errorf("principal %v is not understood", p)
	}
	for kind, v := range m {
		vals, err := strs(v)
		if err != nil {
			return false, fmt.Errorf("principal %s: %w", kind, err)
		}
		switch kind {
		case "AWS":
			// "*" is everyone, services included; an account or role
			// ARN is never a service principal.
			if slices.Contains(vals, "*") || (req.Principal != "" && slices.Contains(vals, req.Principal)) {
				return true, nil
			}
			if req.Service == "" && req.Principal == "" {
				return false, fmt.Errorf("principal AWS %v: the request names no principal (Request.Principal)", vals)
			}
		case "Federated":
			// An identity provider's ARN: the caller of
			// AssumeRoleWithWebIdentity names it as Principal.
			if req.Principal != "" && slices.Contains(vals, req.Principal) {
				return true, nil
			}
		case "Service":
			if req.Service != "" && slices.Contains(vals, req.Service) {
				return true, nil
			}
		default:
			return false, fmt.Errorf("principal kind %s is not understood", kind)
		}
	}
	return false, nil
}

func listMatches(st map[string]any, pos, neg, value string, match func(pattern, value string) bool) (bool, error) {
	key, negate := pos, false
	if _, ok := st[pos]; !ok {
		if _, ok := st[neg]; !ok {
			return false, fmt.Errorf("neither %s nor %s", pos, neg)
		}
		key, negate = neg, true
	}
	vals, err := strs(st[key])
	if err != nil {
		return false, fmt.Errorf("%s: %w", key, err)
	}
	hit := slices.ContainsFunc(vals, func(p string) bool { return match(p, value) })
	return hit != negate, nil
}

// matchAction matches an action pattern: case-insensitive, * and ?.
func matchAction(pattern, action string) bool {
	return Glob(strings.ToLower(pattern), strings.ToLower(action))
}

// MatchARN matches an ARN pattern as IAM does: "*" alone matches
// anything; otherwise both split into the six colon-separated segments
// (the last one keeps any further colons) and each segment matches with *
// and ? wildcards, so a * in the resource segment spans '/'.
func MatchARN(pattern, arn string) bool {
	if pattern == "*" {
		return true
	}
	p, a := strings.SplitN(pattern, ":", 6), strings.SplitN(arn, ":", 6)
	if len(p) != 6 || len(a) != 6 {
		return Glob(pattern, arn)
	}
	for i := range p {
		if !Glob(p[i], a[i]) {
			return false
		}
	}
	return true
}

// Glob matches s against pattern, where * matches any run of characters
// (none included, '/' included) and ? exactly one character.
func Glob(pattern, s string) bool {
	p, v := []rune(pattern), []rune(s)
	// Iterative matching with backtracking to the last *.
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(v) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == v[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// conditionsHold evaluates a Condition block: every operator, every key
// of it, must hold; a key's values are alternatives.
func conditionsHold(c any, req Request) (bool, error) {
	block, ok := c.(map[string]any)
	if !ok {
		return false, fmt.Errorf("condition %v is not an object", c)
	}
	for op, keys := range block {
		km, ok := keys.(map[string]any)
		if !ok {
			return false, fmt.Errorf("condition %s: %v is not an object", op, keys)
		}
		set, base := "", op
		for _, prefix := range []string{"ForAllValues:", "ForAnyValue:"} {
			if rest, ok := strings.CutPrefix(op, prefix); ok {
				set, base = prefix, rest
			}
		}
		base, ifExists := strings.CutSuffix(base, "IfExists")
		test, ok := operators[base]
		if !ok {
			return false, fmt.Errorf("condition operator %s is not understood", op)
		}
		for key, v := range km {
			want, err := strs(v)
			if err != nil {
				return false, fmt.Errorf("condition %s %s: %w", op, key, err)
			}
			if set != "" {
				got := values(req, key)
				if len(got) == 0 && ifExists {
					continue
				}
				if !setHolds(set, test, got, want) {
					return false, nil
				}
				continue
			}
			if _, multi := lookupSet(req.Sets, key); multi {
				return false, fmt.Errorf("condition %s %s: a multivalued key needs a ForAllValues or ForAnyValue qualifier", op, key)
			}
			got, present := lookup(req.Context, key)
			if !present {
				// A missing key satisfies ...IfExists; every other
				// operator fails on it, the negated ones included (IAM:
				// "the condition returns false" when the key is absent,
				// except for IfExists).
				if ifExists {
					continue
				}
				return false, nil
			}
			if !test(got, want) {
				return false, nil
			}
		}
	}
	return true, nil
}

// setHolds tests a multivalued key's values: ForAllValues: holds when
// every value passes, so also when the key is absent or empty (IAM's
// documented trap, which policies close with a second, single-valued
// condition); ForAnyValue: when at least one does.
func setHolds(set string, test func(string, []string) bool, got, want []string) bool {
	pass := func(v string) bool { return test(v, want) }
	if set == "ForAllValues:" {
		return !slices.ContainsFunc(got, func(v string) bool { return !pass(v) })
	}
	return slices.ContainsFunc(got, pass)
}

// values are a key's values for a set operator: a multivalued key's, or
// a single-valued key's one value, or none.
func values(req Request, key string) []string {
	if vs, ok := lookupSet(req.Sets, key); ok {
		return vs
	}
	if v, ok := lookup(req.Context, key); ok {
		return []string{v}
	}
	return nil
}

func lookupSet(sets map[string][]string, key string) ([]string, bool) {
	for k, v := range sets {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return nil, false
}

// lookup finds a condition key; IAM's keys are case-insensitive.
func lookup(ctx map[string]string, key string) (string, bool) {
	for k, v := range ctx {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return "", false
}

var operators = map[string]func(got string, want []string) bool{
	"StringEquals": func(got string, want []string) bool { return slices.Contains(want, got) },
	"StringNotEquals": func(got string, want []string) bool {
		return !slices.Contains(want, got)
	},
	"StringEqualsIgnoreCase": func(got string, want []string) bool {
		return slices.ContainsFunc(want, func(w string) bool { return strings.EqualFold(w, got) })
	},
	"StringLike": func(got string, want []string) bool {
		return slices.ContainsFunc(want, func(w string) bool { return Glob(w, got) })
	},
	"StringNotLike": func(got string, want []string) bool {
		return !slices.ContainsFunc(want, func(w string) bool { return Glob(w, got) })
	},
	"ArnEquals": func(got string, want []string) bool {
		return slices.ContainsFunc(want, func(w string) bool { return MatchARN(w, got) })
	},
	"ArnLike": func(got string, want []string) bool {
		return slices.ContainsFunc(want, func(w string) bool { return MatchARN(w, got) })
	},
	"ArnNotLike": func(got string, want []string) bool {
		return !slices.ContainsFunc(want, func(w string) bool { return MatchARN(w, got) })
	},
	"Bool": func(got string, want []string) bool {
		return slices.ContainsFunc(want, func(w string) bool { return strings.EqualFold(w, got) })
	},
}

// strs reads a policy element that is one string or a list of strings;
// anything else (an unresolved intrinsic function) is an error.
func strs(v any) ([]string, error) {
	switch v := v.(type) {
	case string:
		return []string{v}, nil
	case bool:
		return []string{fmt.Sprint(v)}, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			s, err := strs(x)
			if err != nil {
				return nil, err
			}
			out = append(out, s...)
		}
		return out, nil
	}
	return nil, fmt.Errorf("value %v is not a string (an unresolved intrinsic function?)", v)
}
