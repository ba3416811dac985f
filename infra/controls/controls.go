// Package controls runs AWS Control Tower's proactive controls over
// synthesized templates: the cfn-guard binary and rules shipped by the npm
// package @cdklabs/cdk-validator-cfnguard (pinned in package.json), plus
// dynastack's own rules in rules/ for the resource types Control Tower's
// rules do not inspect (the AWS::DynamoDB::GlobalTable that TableV2
// synthesizes). Every finding is fixed in the stacks or suppressed, with a
// reason, in Suppressions — the one reviewed place, as cdk-nag's
// suppressions are in infra/stacks.
package controls

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Template is one synthesized stack template.
type Template struct {
	// Path of the template file.
	Path string
	// Stage and Stack name it (dev, itsm).
	Stage, Stack string
	// Types maps each logical id to its resource type.
	Types map[string]string
}

// Finding is one resource failing one control.
type Finding struct {
	Control  string // CT.LAMBDA.PR.3, DYNASTACK.GLOBALTABLE.PR.2
	Stage    string
	Stack    string
	Resource string // logical id
	Type     string // AWS::Lambda::Function
}

func (f Finding) String() string {
	return fmt.Sprintf("%s %s/%s %s (%s)", f.Control, f.Stage, f.Stack, f.Resource, f.Type)
}

// Report is the outcome of a run.
type Report struct {
	// Ran lists the controls that applied to at least one template
	// (compliant or not), sorted.
	Ran []string
	// Findings are every failing resource, suppressed or not.
	Findings []Finding
	// Files are the rule files that ran; Skipped, those that select only
	// resource types no template has (applicableRules).
	Files, Skipped []string
	// Descriptions say what each control requires, from its rule's message.
	Descriptions map[string]string
	// Applied lists, by template path as given, the controls that applied to
	// that template (so a verdict can be kept per template).
	Applied map[string][]string
}

// Guard locates the shipped cfn-guard binary and Control Tower rules in
// the installed npm package directory pkg.
func Guard(pkg string) (binary, rules string, err error) {
	osName := map[string]string{"linux": "ubuntu", "darwin": "macos"}[runtime.GOOS]
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
	if osName == "" || arch == "" {
		return "", "", fmt.Errorf("controls: %s ships no cfn-guard for %s/%s", pkg, runtime.GOOS, runtime.GOARCH)
	}
	binary = filepath.Join(pkg, "bin", osName, arch, "cfn-guard")
	rules = filepath.Join(pkg, "rules", "control-tower", "cfn-guard")
	for _, p := range []string{binary, rules} {
		if _, err := os.Stat(p); err != nil {
			return "", "", fmt.Errorf("controls: %s missing: run make deps (npm ci installs @cdklabs/cdk-validator-cfnguard)", p)
		}
	}
	return binary, rules, nil
}

// Templates finds every stack template under dir: a cloud assembly
// (cdk.out, stages in assembly-<stage>/) or the golden files
// (test/snapshots/<stage>/<stack>.template.json).
func Templates(dir string) ([]Template, error) {
	var out []Template
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), "asset.") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".template.json") {
			return nil
		}
		t, err := LoadTemplate(path)
		if err != nil {
			return err
		}
		out = append(out, t)
		return nil
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("controls: no *.template.json under %s: synthesize first (make synth)", dir)
	}
	return out, err
}

// LoadTemplate reads one stack template, named as in a cloud assembly
// (assembly-<stage>/<stage><stack><8 hex>.template.json) or as a golden
// file (<stage>/<stack>.template.json).
func LoadTemplate(path string) (Template, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Template{}, err
	}
	var doc struct {
		Resources map[string]struct{ Type string } `json:"Resources"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return Template{}, fmt.Errorf("controls: %s: %w", path, err)
	}
	t := Template{Path: path, Types: map[string]string{}}
	for id, r := range doc.Resources {
		t.Types[id] = r.Type
	}
	parent := filepath.Base(filepath.Dir(path))
	t.Stage = strings.TrimPrefix(parent, "assembly-")
	t.Stack = strings.TrimSuffix(filepath.Base(path), ".template.json")
	// A cloud assembly names a stack <stage><stack><8 hex>.
	if strings.HasPrefix(parent, "assembly-") {
		t.Stack = assemblyStack.ReplaceAllString(strings.TrimPrefix(t.Stack, t.Stage), "")
	}
	return t, nil
}

var assemblyStack = regexp.MustCompile(`[0-9A-F]{8}$`)

var (
	resourceType = regexp.MustCompile(`AWS::[A-Za-z0-9]+::[A-Za-z0-9]+`)
	// typeDeclaration is how Control Tower's files name the type they select:
	// `let S3_BUCKET_TYPE = "AWS::S3::Bucket"`, then `Type == %S3_BUCKET_TYPE`.
	typeDeclaration = regexp.MustCompile(`^\s*let\s+[A-Za-z0-9_]+\s*=\s*["']AWS::`)
	// typeFilter is a selection written inline: `Resources.*[ Type == "AWS::…" ]`.
	typeFilter = regexp.MustCompile(`\bType\s*(==|in)\s*[\["']`)
)

// SelectedTypes lists the resource types a rule file selects: those of its
// type declarations and inline Type filters. Types named elsewhere — in
// comments, in messages, as the target of a reference check such as
// check_local_references(%INPUT_DOCUMENT, KmsKeyId, "AWS::KMS::Key") — do
// not make a rule fire: an AppSync rule that checks its log role's
// reference stays silent on a template with roles and no AppSync API.
func SelectedTypes(rules string) []string {
	var out []string
	for line := range strings.Lines(rules) {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "#") {
			continue
		}
		if typeDeclaration.MatchString(line) || typeFilter.MatchString(line) {
			for _, typ := range resourceType.FindAllString(line, -1) {
				if !slices.Contains(out, typ) {
					out = append(out, typ)
				}
			}
		}
	}
	return out
}

// applicableRules lists the rule files under ruleDirs that can fire on
// templates: a file whose selected types (SelectedTypes) are all absent
// from every template cannot. Leaving those out is most of the speed of a
// run: cfn-guard evaluates every file against every template, and Control
// Tower ships 237 files, for every service. A file selecting no type is
// always kept. TestSkippedRulesStaySilent proves the cut loses nothing on
// the golden files.
func applicableRules(ruleDirs []string, templates []Template) (keep, skip []string, err error) {
	present := map[string]bool{}
	for _, t := range templates {
		for _, typ := range t.Types {
			present[typ] = true
		}
	}
	for _, dir := range ruleDirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".guard") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			types := SelectedTypes(string(b))
			applies := len(types) == 0
			for _, typ := range types {
				applies = applies || present[typ]
			}
			if applies {
				keep = append(keep, path)
			} else {
				skip = append(skip, path)
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("controls: rules %s: %w", dir, err)
		}
	}
	if len(keep) == 0 {
		return nil, nil, fmt.Errorf("controls: no rule file under %v applies to these templates", ruleDirs)
	}
	return keep, skip, nil
}

// Run validates every template against every rule file under ruleDirs
// that can apply to it (applicableRules) with the cfn-guard binary.
func Run(binary string, ruleDirs []string, templates []Template) (Report, error) {
	controlOf, describe, err := ruleControls(ruleDirs)
	if err != nil {
		return Report{}, err
	}
	files, skipped, err := applicableRules(ruleDirs, templates)
	if err != nil {
		return Report{}, err
	}
	byPath := map[string]Template{}
	var paths []string
	for _, t := range templates {
		abs, err := filepath.Abs(t.Path)
		if err != nil {
			return Report{}, err
		}
		byPath[abs] = t
		paths = append(paths, abs)
	}
	results, err := guardParallel(binary, files, paths)
	if err != nil {
		return Report{}, err
	}
	if len(results) != len(templates) {
		return Report{}, fmt.Errorf("controls: cfn-guard reported on %d of %d templates", len(results), len(templates))
	}
	rep := Report{Files: files, Skipped: skipped, Descriptions: describe, Applied: map[string][]string{}}
	ran := map[string]bool{}
	seen := map[Finding]bool{}
	for _, r := range results {
		t, ok := byPath[r.Name]
		if !ok {
			return Report{}, fmt.Errorf("controls: cfn-guard reported on %s, which was not given", r.Name)
		}
		applied := map[string]bool{}
		for _, name := range r.Compliant {
			applied[controlOf[name]] = true
		}
		for _, nc := range r.NotCompliant {
			var head struct {
				Rule struct {
					Name string `json:"name"`
				} `json:"Rule"`
			}
			if err := json.Unmarshal(nc, &head); err != nil {
				return Report{}, err
			}
			control, ok := controlOf[head.Rule.Name]
			if !ok {
				return Report{}, fmt.Errorf("controls: rule %q is in no rule file", head.Rule.Name)
			}
			applied[control] = true
			ids := resourcePaths.FindAllStringSubmatch(string(nc), -1)
			if len(ids) == 0 {
				return Report{}, fmt.Errorf("controls: %s failed %s without naming a resource", t.Path, control)
			}
			for _, m := range ids {
				f := Finding{Control: control, Stage: t.Stage, Stack: t.Stack, Resource: m[1], Type: t.Types[m[1]]}
				if f.Type != "" && !seen[f] {
					seen[f] = true
					rep.Findings = append(rep.Findings, f)
				}
			}
		}
		delete(applied, "")
		for c := range applied {
			ran[c] = true
			rep.Applied[t.Path] = append(rep.Applied[t.Path], c)
		}
		slices.Sort(rep.Applied[t.Path])
	}
	for c := range ran {
		rep.Ran = append(rep.Ran, c)
	}
	slices.Sort(rep.Ran)
	slices.SortFunc(rep.Findings, func(a, b Finding) int { return strings.Compare(a.String(), b.String()) })
	return rep, nil
}

// resourcePaths are the resources cfn-guard traversed to.
var resourcePaths = regexp.MustCompile(`"path":\s*"/Resources/([A-Za-z0-9]+)`)

var (
	ruleName = regexp.MustCompile(`(?m)^rule\s+([A-Za-z0-9_]+)\s+when\b`)
	// controlTag opens a rule's message: "[CT.SQS.PR.1]: Require an …".
	controlTag = regexp.MustCompile(`\[((?:CT|DYNASTACK)\.[A-Z0-9-]+\.PR\.[0-9]+)\](?::[ \t]*([^\n]*))?`)
)

// ruleControls maps each top-level rule to the control its messages name,
// and each control to what it requires (its message's first line).
func ruleControls(dirs []string) (map[string]string, map[string]string, error) {
	out, describe := map[string]string{}, map[string]string{}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".guard") {
				return err
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			// Each rule's control is the first tag from its declaration on
			// (a file may hold several rules, each with its own control).
			text := string(raw)
			rules := ruleName.FindAllStringSubmatchIndex(text, -1)
			if len(rules) == 0 {
				return fmt.Errorf("controls: %s declares no rule", path)
			}
			for _, m := range rules {
				tag := controlTag.FindStringSubmatch(text[m[0]:])
				if tag == nil {
					return fmt.Errorf("controls: %s: rule %s names no control ([CT.X.PR.N] in a message)", path, text[m[2]:m[3]])
				}
				out[text[m[2]:m[3]]] = tag[1]
				if describe[tag[1]] == "" {
					describe[tag[1]] = strings.TrimSpace(tag[2])
				}
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return out, describe, nil
}

// Suppressed splits findings into those a suppression covers and those it
// does not, and reports suppressions that covered nothing: a fixed finding
// must take its suppression with it.
func Suppressed(findings []Finding, list []Suppression) (open []Finding, unused []Suppression) {
	used := make([]bool, len(list))
	for _, f := range findings {
		hit := false
		for i, s := range list {
			if s.covers(f) {
				used[i], hit = true, true
			}
		}
		if !hit {
			open = append(open, f)
		}
	}
	for i, s := range list {
		if !used[i] {
			unused = append(unused, s)
		}
	}
	return open, unused
}

// guardResult is cfn-guard's structured JSON report on one template.
type guardResult struct {
	Name         string            `json:"name"`
	Compliant    []string          `json:"compliant"`
	NotCompliant []json.RawMessage `json:"not_compliant"`
	Skipped      []string          `json:"not_applicable"`
}

// guardParallel runs cfn-guard over the templates in as many processes as
// there are CPUs, each with every rule file and a share of the templates:
// one cfn-guard process is single-threaded, and a template's evaluation
// does not depend on the others (a rule sees one template at a time).
// Shares are balanced by file size, which is what evaluation time follows.
func guardParallel(binary string, rules, templates []string) ([]guardResult, error) {
	n := min(runtime.NumCPU(), len(templates))
	shares := make([][]string, n)
	load := make([]int64, n)
	sized := slices.Clone(templates)
	size := func(p string) int64 {
		if fi, err := os.Stat(p); err == nil {
			return fi.Size()
		}
		return 0
	}
	slices.SortFunc(sized, func(a, b string) int { return int(size(b) - size(a)) })
	for _, p := range sized { // largest first, to the lightest share
		i := slices.Index(load, slices.Min(load))
		shares[i] = append(shares[i], p)
		load[i] += size(p)
	}
	out := make([][]guardResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, share := range shares {
		wg.Go(func() { out[i], errs[i] = guard(binary, rules, share) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return slices.Concat(out...), nil
}

func guard(binary string, rules, templates []string) ([]guardResult, error) {
	args := []string{"validate", "--output-format", "json", "--show-summary", "none", "--structured"}
	for _, f := range rules {
		args = append(args, "--rules", f)
	}
	for _, t := range templates {
		args = append(args, "--data", t)
	}
	cmd := exec.Command(binary, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	// cfn-guard exits 19 when a rule fails: the findings are in the output.
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 19) {
		return nil, fmt.Errorf("controls: cfn-guard: %v: %s", err, stderr.String())
	}
	var results []guardResult
	if err := json.Unmarshal(raw, &results); err != nil {
		return nil, fmt.Errorf("controls: cfn-guard output: %w", err)
	}
	return results, nil
}

// Descriptions says what each control of the rule files under ruleDirs
// requires (Report.Descriptions, without a run).
func Descriptions(ruleDirs []string) (map[string]string, error) {
	_, describe, err := ruleControls(ruleDirs)
	return describe, err
}

// Fingerprint hashes what a run's verdicts depend on besides the templates:
// the cfn-guard binary and every rule file under ruleDirs.
func Fingerprint(binary string, ruleDirs []string) (string, error) {
	h := sha256.New()
	files := []string{binary}
	for _, dir := range ruleDirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".guard") {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			return "", err
		}
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(raw))
		h.Write(raw)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
