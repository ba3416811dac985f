package iameval

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// EncryptionContextKeys is KMS's multivalued condition key holding the
// keys of a request's encryption context.
const EncryptionContextKeys = "kms:EncryptionContextKeys"

// WithEncryptionContext returns req with the condition keys KMS sets for
// an encryption context: kms:EncryptionContext:<key> for each pair and
// the keys in the multivalued EncryptionContextKeys. A nil or empty ec is
// a request without a context: none of those keys is present.
func WithEncryptionContext(req Request, ec map[string]string) Request {
	out := req
	out.Context = maps.Clone(req.Context)
	if out.Context == nil {
		out.Context = map[string]string{}
	}
	out.Sets = maps.Clone(req.Sets)
	if out.Sets == nil {
		out.Sets = map[string][]string{}
	}
	delete(out.Sets, EncryptionContextKeys)
	for _, k := range slices.Sorted(maps.Keys(ec)) {
		out.Context["kms:EncryptionContext:"+k] = ec[k]
		out.Sets[EncryptionContextKeys] = append(out.Sets[EncryptionContextKeys], k)
	}
	return out
}

// KMSDecision is a request's evaluation as KMS authorizes it.
type KMSDecision struct {
	// Identity is the decision of the caller's identity policies
	// together (an explicit deny in one wins, else an allow in one).
	Identity Decision
	// Key is the key policy's decision for the caller itself: Allow
	// when a statement names it (or everyone).
	Key Decision
	// Account is the key policy's decision for the caller's account (its
	// root ARN): Allow means the key policy delegates the request to the
	// account's IAM policies.
	Account Decision
	// Outcome is what KMS answers: ExplicitDeny when any policy denies;
	// Allow when the key policy allows the caller, or delegates to IAM
	// and the identity policies allow; else ImplicitDeny.
	Outcome Decision
}

// EvaluateKMS evaluates req, a call by an IAM principal (req.Principal, a
// role's ARN) to a KMS key of its own account (req.Resource), as KMS
// does: the key policy must allow it, by a statement naming the
// principal or by one allowing the account's root, which delegates to
// IAM and so needs the identity policies to allow it too; an explicit
// deny anywhere wins. identity are the principal's policy documents
// (nil: a principal whose own policies allow nothing). Grants, SCPs and
// permission boundaries are not modelled. Documents are resolved (see
// Resolve); what Evaluate cannot read is an error.
func EvaluateKMS(keyPolicy any, identity []any, req Request) (KMSDecision, error) {
	var d KMSDecision
	root, err := accountRoot(req.Principal)
	if err != nil {
		return d, err
	}
	for i, doc := range identity {
		got, err := Evaluate(doc, req)
		if err != nil {
			return d, fmt.Errorf("identity policy %d: %w", i, err)
		}
		d.Identity = max(d.Identity, got) // ExplicitDeny > Allow > ImplicitDeny
	}
	if d.Key, err = Evaluate(keyPolicy, req); err != nil {
		return d, fmt.Errorf("key policy: %w", err)
	}
	asAccount := req
	asAccount.Principal = root
	if d.Account, err = Evaluate(keyPolicy, asAccount); err != nil {
		return d, fmt.Errorf("key policy (the account %s): %w", root, err)
	}
	switch {
	case d.Identity == ExplicitDeny || d.Key == ExplicitDeny || d.Account == ExplicitDeny:
		d.Outcome = ExplicitDeny
	case d.Key == Allow || (d.Account == Allow && d.Identity == Allow):
		d.Outcome = Allow
	}
	return d, nil
}

// accountRoot is the root ARN of an IAM principal's account.
func accountRoot(principal string) (string, error) {
	p := strings.SplitN(principal, ":", 6)
	if len(p) != 6 || p[0] != "arn" || p[2] != "iam" || p[4] == "" {
		return "", fmt.Errorf("principal %q is no IAM principal's ARN (arn:<partition>:iam::<account>:role/<name>): KMS's evaluation needs its account", principal)
	}
	return "arn:" + p[1] + ":iam::" + p[4] + ":root", nil
}
