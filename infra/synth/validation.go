package synth

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/infra/checkcache"
)

// validationPluginName is CDK's name for its CloudFormation validation,
// kept by the cached form so the report, and acknowledgements of its rules
// ("CloudFormation-Validate::F3002"), read the same.
const validationPluginName = "CloudFormation Validate"

// addCachedValidation adds CDK's CloudFormation validation to app — the same
// validator with the same default rules (awscdk.CloudFormationValidatePlugin)
// — behind a per-template cache in cacheDir (infra/checkcache): a synth
// validates only the templates that changed since the last one, which is
// most of the time a synth takes when nothing did. Create app with
// BuiltinCloudFormationValidation false, or every template is validated
// twice. ran, when not nil, is told how long each validation took and over
// how many of the templates the validator ran.
//
// A verdict is kept per template, keyed by its bytes, the stack's account
// and region (the validator's pseudo parameters) and the validator's
// version, which comes with aws-cdk-lib. CDK_VALIDATION=false turns it off,
// as it turns off the built-in validation.
func addCachedValidation(app awscdk.App, cacheDir string, ran func(d time.Duration, validated, total int)) {
	inner := awscdk.NewCloudFormationValidatePlugin(nil)
	salt := "cloudformation-validate " + *inner.Version() + " aws-cdk-lib " + cdkVersion()
	awscdk.Validations_Of(app).AddPlugins(&cachedValidation{
		inner: inner,
		cache: checkcache.Open(cacheDir, salt),
		ran:   ran,
	})
}

type cachedValidation struct {
	inner awscdk.CloudFormationValidatePlugin
	cache *checkcache.Cache
	ran   func(time.Duration, int, int)
}

func (p *cachedValidation) Name() *string { return jsii.String(validationPluginName) }

func (p *cachedValidation) RuleIds() *[]*string { return p.inner.RuleIds() }

func (p *cachedValidation) Version() *string { return p.inner.Version() }

// validationVerdict is what the cache keeps of one template: its violations,
// each naming only resources of that template.
type validationVerdict struct {
	Violations []cachedViolation
}

type cachedViolation struct {
	RuleName, Description, Severity, Fix string
	RuleMetadata                         map[string]string
	Resources                            []cachedResource
}

type cachedResource struct {
	LogicalID, ConstructPath string
	Locations                []string
}

func (p *cachedValidation) Validate(ctx awscdk.IPolicyValidationContext) *awscdk.PolicyValidationPluginReport {
	start := time.Now()
	var violations []*awscdk.PolicyViolation
	var misses []*awscdk.PolicyValidationStack
	stacks := *ctx.StackTemplates()
	for _, st := range stacks {
		var v validationVerdict
		if p.cache.Verdict(*st.TemplatePath, &v, str(st.AccountId), str(st.Region)) {
			violations = append(violations, v.violations(*st.TemplatePath)...)
		} else {
			misses = append(misses, st)
		}
	}
	if len(misses) > 0 {
		rep := p.inner.Validate(&validationContext{stacks: misses, app: ctx.AppConstruct()})
		byTemplate := map[string]*validationVerdict{}
		for _, st := range misses {
			byTemplate[*st.TemplatePath] = &validationVerdict{}
		}
		for _, v := range *rep.Violations {
			// A violation lists resources of every template that has it:
			// each template keeps its own.
			for _, r := range *v.ViolatingResources {
				verdict, ok := byTemplate[str(r.TemplatePath)]
				if !ok {
					continue
				}
				verdict.add(v, r)
			}
		}
		for path, v := range byTemplate {
			violations = append(violations, v.violations(path)...)
			p.cache.Keep(path, v)
		}
	}
	_ = p.cache.Prune()
	success := true
	for _, v := range violations {
		if s := str(v.Severity); s == "error" || s == "fatal" {
			success = false
		}
	}
	if p.ran != nil {
		p.ran(time.Since(start), len(misses), len(stacks))
	}
	if violations == nil {
		violations = []*awscdk.PolicyViolation{}
	}
	return &awscdk.PolicyValidationPluginReport{Success: jsii.Bool(success), Violations: &violations}
}

func (v *validationVerdict) add(pv *awscdk.PolicyViolation, r *awscdk.PolicyViolatingResource) {
	res := cachedResource{LogicalID: str(r.ResourceLogicalId), ConstructPath: str(r.ConstructPath)}
	for _, l := range *r.Locations {
		res.Locations = append(res.Locations, *l)
	}
	for i := range v.Violations {
		c := &v.Violations[i]
		if c.RuleName == *pv.RuleName && c.Description == *pv.Description && c.Severity == str(pv.Severity) {
			c.Resources = append(c.Resources, res)
			return
		}
	}
	c := cachedViolation{RuleName: *pv.RuleName, Description: *pv.Description, Severity: str(pv.Severity), Fix: str(pv.Fix), Resources: []cachedResource{res}}
	if pv.RuleMetadata != nil {
		c.RuleMetadata = map[string]string{}
		for k, m := range *pv.RuleMetadata {
			c.RuleMetadata[k] = str(m)
		}
	}
	v.Violations = append(v.Violations, c)
}

// violations are the verdict's violations for the template at path.
func (v *validationVerdict) violations(path string) []*awscdk.PolicyViolation {
	var out []*awscdk.PolicyViolation
	for _, c := range v.Violations {
		var resources []*awscdk.PolicyViolatingResource
		for _, r := range c.Resources {
			res := &awscdk.PolicyViolatingResource{TemplatePath: jsii.String(path), Locations: jsii.Strings(r.Locations...)}
			if r.LogicalID != "" {
				res.ResourceLogicalId = jsii.String(r.LogicalID)
			}
			if r.ConstructPath != "" {
				res.ConstructPath = jsii.String(r.ConstructPath)
			}
			resources = append(resources, res)
		}
		pv := &awscdk.PolicyViolation{RuleName: jsii.String(c.RuleName), Description: jsii.String(c.Description), ViolatingResources: &resources}
		if c.Severity != "" {
			pv.Severity = jsii.String(c.Severity)
		}
		if c.Fix != "" {
			pv.Fix = jsii.String(c.Fix)
		}
		if c.RuleMetadata != nil {
			m := map[string]*string{}
			for k, s := range c.RuleMetadata {
				m[k] = jsii.String(s)
			}
			pv.RuleMetadata = &m
		}
		out = append(out, pv)
	}
	return out
}

// validationContext is the part of a synth's validation context handed to
// the validator: the templates the cache has no verdict for.
type validationContext struct {
	stacks []*awscdk.PolicyValidationStack
	app    constructs.IConstruct
}

func (c *validationContext) StackTemplates() *[]*awscdk.PolicyValidationStack { return &c.stacks }

func (c *validationContext) TemplatePaths() *[]*string {
	out := make([]*string, len(c.stacks))
	for i, s := range c.stacks {
		out[i] = s.TemplatePath
	}
	return &out
}

func (c *validationContext) AppConstruct() constructs.IConstruct { return c.app }

// AccountId and Region are deprecated in the interface; the validator reads
// them per stack.
func (c *validationContext) AccountId() *string { return nil }

func (c *validationContext) Region() *string { return nil }

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// cdkVersion is the version of aws-cdk-go linked into the app: its
// aws-cdk-lib ships the validator's default rules and their configuration.
// A binary without module data (a test binary in a workspace) is named by
// the hash of its own file instead, which changes with any upgrade.
func cdkVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == "github.com/aws/aws-cdk-go/awscdk/v2" {
				return m.Version
			}
		}
	}
	if exe, err := os.Executable(); err == nil {
		if f, err := os.Open(exe); err == nil {
			defer f.Close()
			h := sha256.New()
			if _, err := io.Copy(h, f); err == nil {
				return "binary " + hex.EncodeToString(h.Sum(nil))
			}
		}
	}
	return "unknown " + time.Now().String() // never a hit
}
