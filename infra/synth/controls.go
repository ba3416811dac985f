package synth

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/infra/checkcache"
	"github.com/dynastack/dynastack/infra/controls"
)

// controlsPluginName is the name CDK's validation report gives the Control
// Tower controls.
const controlsPluginName = "AWS Control Tower proactive controls (cfn-guard)"

// controlsOptions locate cfn-guard and the rules.
type controlsOptions struct {
	// Package is the installed npm package @cdklabs/cdk-validator-cfnguard
	// (the cfn-guard binary and Control Tower's rules).
	Package string
	// Rules is the folder of dynastack's own rules (infra/controls/rules).
	Rules string
	// Suppressions are the accepted findings.
	//
	// Default: controls.Suppressions.
	Suppressions []controls.Suppression
	// CacheDir keeps each template's verdict between synths
	// (infra/checkcache): a synth runs cfn-guard only over the templates
	// that changed.
	//
	// Default: none, every synth checks every template.
	CacheDir string
	// Ran, when set, is told how long each check took and how many
	// templates it ran cfn-guard over (make bench-synth).
	//
	// Default: none.
	Ran func(d time.Duration, checked, total int)
}

// addControls makes every synth of app — cdk synth, cdk deploy — run AWS
// Control Tower's proactive controls (infra/controls) over the templates it
// wrote, as a CDK validation plugin: a finding no suppression covers is a
// violation in CDK's validation report, naming the control, what it
// requires, the resource and its construct path, and fails the synth
// (validationErrors). The plugin sits on the app, so it sees the stacks of
// every stage.
//
// A suppression that covers nothing is reported by `make controls` over the
// golden files, not here: at synth it is no risk, only clutter.
func addControls(app awscdk.App, opts controlsOptions) error {
	binary, shipped, err := controls.Guard(opts.Package)
	if err != nil {
		return err
	}
	if opts.Suppressions == nil {
		opts.Suppressions = controls.Suppressions
	}
	p := &controlsPlugin{binary: binary, rules: []string{shipped, opts.Rules}, suppressions: opts.Suppressions, ran: opts.Ran}
	// What each control requires: read once, for every synth's report.
	if p.describe, err = controls.Descriptions(p.rules); err != nil {
		return err
	}
	if opts.CacheDir != "" {
		fp, err := controls.Fingerprint(binary, p.rules)
		if err != nil {
			return err
		}
		p.cache = checkcache.Open(opts.CacheDir, "controls "+fp)
	}
	awscdk.Validations_Of(app).AddPlugins(p)
	return nil
}

// controlsVerdict is what the cache keeps of one template.
type controlsVerdict struct {
	Applied  []string           // the controls that applied to it
	Findings []controls.Finding // its failing resources, suppressed or not
}

// controlsPlugin is an awscdk.IPolicyValidationPlugin.
type controlsPlugin struct {
	binary       string
	rules        []string
	suppressions []controls.Suppression
	describe     map[string]string // control → what it requires
	cache        *checkcache.Cache
	ran          func(time.Duration, int, int)
}

func (p *controlsPlugin) Name() *string { return jsii.String(controlsPluginName) }

func (p *controlsPlugin) RuleIds() *[]*string { return nil }

// Version is the plugin's own (CDK records it only for analytics); what
// changes verdicts, the binary and the rules, keys the cache.
func (p *controlsPlugin) Version() *string { return jsii.String("1.0.0") }

func (p *controlsPlugin) Validate(ctx awscdk.IPolicyValidationContext) *awscdk.PolicyValidationPluginReport {
	start := time.Now()
	var templates, misses []controls.Template
	rep := controls.Report{Applied: map[string][]string{}}
	ran := map[string]bool{}
	merge := func(t controls.Template, v controlsVerdict) {
		for _, c := range v.Applied {
			ran[c] = true
		}
		for _, f := range v.Findings {
			f.Stage, f.Stack = t.Stage, t.Stack // the same bytes may be another stack's
			rep.Findings = append(rep.Findings, f)
		}
	}
	for _, path := range *ctx.TemplatePaths() {
		t, err := controls.LoadTemplate(*path)
		if err != nil {
			return controlsReport(controls.Report{}, err, nil, nil)
		}
		templates = append(templates, t)
		var v controlsVerdict
		if p.cache.Verdict(t.Path, &v) {
			merge(t, v)
		} else {
			misses = append(misses, t)
		}
	}
	if len(misses) > 0 {
		fresh, err := controls.Run(p.binary, p.rules, misses)
		if err != nil {
			return controlsReport(controls.Report{}, err, nil, nil)
		}
		rep.Files, rep.Skipped = fresh.Files, fresh.Skipped
		for _, t := range misses {
			v := controlsVerdict{Applied: fresh.Applied[t.Path]}
			for _, f := range fresh.Findings {
				if f.Stage == t.Stage && f.Stack == t.Stack {
					v.Findings = append(v.Findings, f)
				}
			}
			merge(t, v)
			p.cache.Keep(t.Path, v)
		}
	}
	_ = p.cache.Prune()
	rep.Ran = slices.Sorted(maps.Keys(ran))
	rep.Descriptions = p.describe
	if p.ran != nil {
		p.ran(time.Since(start), len(misses), len(templates))
	}
	return controlsReport(rep, nil, p.suppressions, templates)
}

// controlsReport turns the findings no suppression covers into violations,
// one per control, each listing its resources.
func controlsReport(rep controls.Report, err error, suppressions []controls.Suppression, templates []controls.Template) *awscdk.PolicyValidationPluginReport {
	fix := "Fix the resource, or suppress the control for it with a reason in infra/controls/suppressions.go."
	if err != nil {
		// The plugin could not check: that fails the synth, on no resource.
		return &awscdk.PolicyValidationPluginReport{Success: jsii.Bool(false), Violations: &[]*awscdk.PolicyViolation{{
			RuleName:           jsii.String("controls-not-run"),
			Description:        jsii.String(err.Error()),
			Fix:                jsii.String("run make deps (npm ci installs @cdklabs/cdk-validator-cfnguard)"),
			Severity:           jsii.String("error"),
			ViolatingResources: &[]*awscdk.PolicyViolatingResource{},
		}}}
	}
	open, _ := controls.Suppressed(rep.Findings, suppressions)
	byPath := map[string]string{} // "<stage>/<stack>" → template path CDK gave
	for _, t := range templates {
		byPath[t.Stage+"/"+t.Stack] = t.Path
	}
	byControl := map[string][]controls.Finding{}
	for _, f := range open {
		byControl[f.Control] = append(byControl[f.Control], f)
	}
	violations := []*awscdk.PolicyViolation{}
	for _, control := range slices.Sorted(maps.Keys(byControl)) {
		var resources []*awscdk.PolicyViolatingResource
		for _, f := range byControl[control] {
			resources = append(resources, &awscdk.PolicyViolatingResource{
				ResourceLogicalId: jsii.String(f.Resource),
				TemplatePath:      jsii.String(byPath[f.Stage+"/"+f.Stack]),
				Locations:         jsii.Strings("Resources/" + f.Resource),
			})
		}
		desc := rep.Descriptions[control]
		if desc == "" {
			desc = control
		}
		violations = append(violations, &awscdk.PolicyViolation{
			RuleName:           jsii.String(control),
			Description:        jsii.String(desc),
			Fix:                jsii.String(fix),
			Severity:           jsii.String("error"),
			ViolatingResources: &resources,
		})
	}
	return &awscdk.PolicyValidationPluginReport{
		Success:    jsii.Bool(len(violations) == 0),
		Violations: &violations,
		Metadata: &map[string]*string{
			"controls": jsii.String(strings.Join(rep.Ran, " ")),
			"findings": jsii.String(fmt.Sprintf("%d, %d suppressed with a reason", len(rep.Findings), len(rep.Findings)-len(open))),
			"rules":    jsii.String(fmt.Sprintf("%d rule files run, %d skipped (no resource type they select)", len(rep.Files), len(rep.Skipped))),
		},
	}
}

// controlsPackage is where make deps installs cfn-guard and Control Tower's
// rules, under the repository root.
func controlsPackage(root string) controlsOptions {
	return controlsOptions{
		Package: filepath.Join(root, "node_modules", "@cdklabs", "cdk-validator-cfnguard"),
		Rules:   filepath.Join(root, "infra", "controls", "rules"),
	}
}
