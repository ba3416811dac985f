// Package secretscan recognises values that look like secrets: bearer
// tokens and JWTs, ntfy access tokens, AWS access key ids, URLs that carry
// credentials (user information, a credential in the query, a chat or
// paging webhook whose path is its secret) and randomly generated
// strings. infra/config refuses such a value as a literal setting of a
// deployed stage, and the secret-scanning tests run it over every golden
// template and the config source (docs/stage-policy.md, "Secrets").
//
// It errs towards finding: a false positive is fixed by naming the field
// that may hold such a value (Template's allow), never by weakening a
// pattern. No function here returns or prints the secret itself beyond a
// short redacted prefix.
package secretscan

import (
	"fmt"
	"maps"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// pattern is one kind of secret recognised anywhere in a string.
type pattern struct {
	kind string
	re   *regexp.Regexp
}

// credentialParam is a query parameter name that carries a credential
// (token=, access_token=, key=, apiKey=, sig=, signature=, code=,
// password=, X-Amz-Signature=, X-Amz-Security-Token=, …).
const credentialParam = `(?:[A-Za-z_-]*(?:token|key|sig|signature|secret|passw(?:or)?d|pwd|auth|code|credential)[A-Za-z_-]*)`

var patterns = []pattern{
	{"a JWT", regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`)},
	{"a base64 JSON token (eyJ…)", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{16,}`)},
	{"a bearer token", regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/-]{16,}=*`)},
	{"an ntfy access token (tk_…)", regexp.MustCompile(`\btk_[A-Za-z0-9]{20,}\b`)},
	{"an AWS access key id", regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)},
	{"a URL with user information (user:password@)", regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s@"'?#]+@`)},
	{"a URL with a credential in its query", regexp.MustCompile(`(?i)://[^\s"']*[?&]` + credentialParam + `=[^&\s"']+`)},
}

var credentialName = regexp.MustCompile(`(?i)^` + credentialParam + `$`)

// hooks are webhook URLs whose path (or query) is their secret: whoever
// has the URL posts to the channel or pages the on-call.
var hooks = []pattern{
	{"a Slack webhook URL", regexp.MustCompile(`(?i)\bhooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+`)},
	{"a Discord webhook URL", regexp.MustCompile(`(?i)\bdiscord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]+`)},
	{"a Microsoft Teams webhook URL", regexp.MustCompile(`(?i)(?:\.webhook\.office\.com|outlook\.office(?:365)?\.com)/webhook[A-Za-z0-9]*/[^\s"']+`)},
	{"an Azure Logic Apps / Power Automate trigger URL", regexp.MustCompile(`(?i)\.logic\.azure\.com[^\s"']*[?&]sig=`)},
	{"a PagerDuty integration URL", regexp.MustCompile(`(?i)\bevents\.pagerduty\.com/integration/[A-Za-z0-9]+`)},
	{"a Google Chat webhook URL", regexp.MustCompile(`(?i)\bchat\.googleapis\.com/v1/spaces/[^\s"']+/messages\?`)},
	{"a Zapier webhook URL", regexp.MustCompile(`(?i)\bhooks\.zapier\.com/hooks/catch/[0-9]+/[A-Za-z0-9]+`)},
	{"an IFTTT webhook URL", regexp.MustCompile(`(?i)\bmaker\.ifttt\.com/trigger/[^\s"']+/key/[A-Za-z0-9_-]+`)},
}

// Find names the first kind of secret s holds, "" when none: a pattern
// above, a known webhook URL, or a random-looking run of token characters.
func Find(s string) string {
	for _, ps := range [][]pattern{patterns, hooks} {
		for _, p := range ps {
			if p.re.MatchString(s) {
				return p.kind
			}
		}
	}
	if Random(s) {
		return "a random-looking string"
	}
	return ""
}

var (
	tokenRun = regexp.MustCompile(`[A-Za-z0-9+/=_.:-]{16,}`)
	wordSep  = regexp.MustCompile(`[-_.:]`)
	hexOnly  = regexp.MustCompile(`^[0-9a-fA-F]+$`)
)

// Random reports whether s holds a randomly generated secret. Words
// between separators (- _ . : and, outside base64, /) are no secret:
// rez-agent-prod, message_type-created_date-index,
// /cdk-bootstrap/hnb659fds/version and nucleus-executor-lookback-2024
// pass. A secret is a part without separators that is
//   - base64 (mixed case, digits, + or / allowed): at least 20
//     characters, two upper and two lower case letters and a digit, and
//     4.0 bits of entropy per character (CamelCase names stay below);
//   - or at least 16 letters and digits, two of each, with 3.5 bits per
//     character (3.0 for hex): a digest, a tk_… body, an API key.
func Random(s string) bool {
	for _, run := range tokenRun.FindAllString(s, -1) {
		for _, seg := range wordSep.Split(run, -1) {
			upper, lower, digits := countFunc(seg, isUpper), countFunc(seg, isLower), countFunc(seg, isDigit)
			if len(seg) >= 20 && upper >= 2 && lower >= 2 && digits >= 1 && entropy(seg) >= 4.0 {
				return true
			}
			for _, part := range strings.FieldsFunc(seg, func(r rune) bool { return r == '/' || r == '+' || r == '=' }) {
				digits := countFunc(part, isDigit)
				if len(part) < 16 || digits < 2 || len(part)-digits < 2 {
					continue
				}
				limit := 3.5
				if hexOnly.MatchString(part) {
					limit = 3.0
				}
				if entropy(part) >= limit {
					return true
				}
			}
		}
	}
	return false
}

// URL names why a URL carries a credential, "" when it does not: user
// information, a credential-named or random-looking query parameter, a
// known webhook whose path is its secret, or a random-looking path
// segment. The reason names no part of the secret.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if Find(raw) != "" {
			return "an unparsable URL holding " + Find(raw)
		}
		return ""
	}
	if u.User != nil {
		return "user information (user:password@)"
	}
	q := u.Query()
	for _, name := range slices.Sorted(maps.Keys(q)) {
		values := q[name]
		if credentialName.MatchString(name) {
			return fmt.Sprintf("a credential in the query (%s=…)", name)
		}
		if slices.ContainsFunc(values, Random) {
			return fmt.Sprintf("a random-looking query value (%s=…)", name)
		}
	}
	for _, h := range hooks {
		if h.re.MatchString(raw) {
			return h.kind + ", whose path is its secret"
		}
	}
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		if Random(seg) {
			return "a random-looking path segment (a token in the path)"
		}
	}
	if u.Fragment != "" && Random(u.Fragment) {
		return "a random-looking fragment"
	}
	return ""
}

// Redact shows a URL without anything that may be secret: scheme and
// host, then "/…" when it had more. A value that is no URL shows as
// "(a value of n characters)".
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Sprintf("(a value of %d characters)", len(raw))
	}
	out := u.Scheme + "://" + u.Host
	if u.User != nil || strings.TrimPrefix(u.EscapedPath(), "/") != "" || u.RawQuery != "" || u.Fragment != "" {
		out += "/…"
	}
	return out
}

func entropy(s string) float64 {
	counts := map[rune]int{}
	for _, r := range s {
		counts[r]++
	}
	h := 0.0
	n := float64(len(s))
	for _, c := range counts {
		p := float64(c) / n
		h -= p * math.Log2(p)
	}
	return h
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }
func isUpper(r rune) bool { return r >= 'A' && r <= 'Z' }
func isLower(r rune) bool { return r >= 'a' && r <= 'z' }

func countFunc(s string, f func(rune) bool) int {
	n := 0
	for _, r := range s {
		if f(r) {
			n++
		}
	}
	return n
}

// Finding is a secret-looking value of a template.
type Finding struct {
	// Path is where: Resources.<logical id>.Properties.…, list indexes in
	// brackets.
	Path string
	// Kind is what it looks like (Find's answer).
	Kind string
}

func (f Finding) String() string { return f.Path + ": " + f.Kind }

// notSecret are the template fields whose values look random by design
// and are no secret: logical ids (Ref, Fn::GetAtt, DependsOn, the keys of
// Resources and Outputs, which are keys and never scanned), asset hashes
// (Code.S3Key, the aws:asset:* metadata) and construct paths. A field is
// matched by its name, wherever it sits.
var notSecret = map[string]string{
	"Ref":                  "a logical id",
	"Fn::GetAtt":           "a logical id and attribute",
	"DependsOn":            "logical ids",
	"S3Key":                "an asset's content hash (<sha256>.zip)",
	"PolicyName":           "an IAM policy's name, which CDK makes from its logical id",
	"DeploymentConfigName": "a CodeDeploy deployment configuration (CodeDeployDefault.LambdaCanary10Percent5Minutes), a name AWS defines",
	"aws:asset:path":       "an asset's directory (asset.<sha256>)",
	"aws:asset:property":   "the property an asset fills",
	"aws:cdk:path":         "a construct path",
}

// Template scans a CloudFormation template (parsed JSON) and returns
// every string value that Find recognises, outside the fields of
// notSecret.
func Template(t map[string]any) []Finding {
	var out []Finding
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case string:
			if k := Find(v); k != "" {
				out = append(out, Finding{Path: path, Kind: k})
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				if _, skip := notSecret[k]; skip {
					continue
				}
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(p, v[k])
			}
		}
	}
	walk("", t)
	return out
}
