//lint:file-ignore SA1019 aws-cdk-go has no binding of @aws-cdk/cloud-assembly-api yet; cxapi is the type App.Synth returns.

// Package synth is the app's synth pipeline around the stacks that
// infra/stacks builds: the checks every synth runs over the templates it
// wrote (CDK's CloudFormation validation behind a per-template cache, AWS
// Control Tower's proactive controls as a validation plugin), cdk-nag's
// optional CSV reports, and the verdict the app exits with. app/main.go
// wires it:
//
//	synth.RemoveStaleNagReports(app)   // before the stacks
//	stacks.Build(app, config.Stages())
//	synth.AddChecks(app, root, nil)    // validation plugins
//	asm := app.Synth(nil)
//	synth.Failures(asm)                // annotations and validation report
//
// It builds no resource and imports no stack; infra/stacks reads only
// NagReports from it.
package synth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/cxapi"
)

// AnnotationErrors lists the error annotations of every stack, stages
// included: cdk-nag's findings and those of table.CheckPolicies. The CLI
// does not fail a synth on errors inside nested stage assemblies, so the app
// checks them itself.
func AnnotationErrors(asm cxapi.CloudAssembly) []string {
	var out []string
	for _, stack := range *asm.StacksRecursively() {
		for _, m := range *stack.Messages() {
			if m.Level == cxapi.SynthesisMessageLevel_ERROR {
				out = append(out, fmt.Sprintf("%s: %v", *m.Id, m.Entry.Data))
			}
		}
	}
	return out
}

// annotationsPlugin is the report CDK builds from construct annotations
// (@aws-cdk/core:annotationsInValidationReport): AnnotationErrors reports
// those.
const annotationsPlugin = "Construct Annotations"

// validationErrors lists the error and fatal violations of CDK's validation
// report in the cloud assembly at dir: the built-in CloudFormation
// validation and the plugins (addControls). The CLI runs the app with
// @aws-cdk/core:failSynthOnValidationErrors=false and then reports only the
// violations of the stacks it selected, which for `cdk synth` without a
// selector are the top-level ones: in an app whose stacks all sit in
// stages it would pass a failed validation silently, so the app checks.
func validationErrors(dir string) ([]string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "validation-report.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // nothing was validated
	}
	if err != nil {
		return nil, err
	}
	var report struct {
		PluginReports []struct {
			PluginName string `json:"pluginName"`
			Violations []struct {
				RuleName            string `json:"ruleName"`
				Description         string `json:"description"`
				Severity            string `json:"severity"`
				Fix                 string `json:"suggestedFix"`
				ViolatingConstructs []struct {
					ConstructPath string `json:"constructPath"`
					Resource      struct {
						TemplatePath string `json:"templatePath"`
						LogicalID    string `json:"logicalId"`
					} `json:"cloudFormationResource"`
				} `json:"violatingConstructs"`
			} `json:"violations"`
		} `json:"pluginReports"`
	}
	if err := json.Unmarshal(raw, &report); err != nil {
		return nil, fmt.Errorf("validation report %s: %w", dir, err)
	}
	var out []string
	for _, p := range report.PluginReports {
		if p.PluginName == annotationsPlugin {
			continue
		}
		for _, v := range p.Violations {
			if v.Severity != "error" && v.Severity != "fatal" {
				continue
			}
			var where []string
			for _, c := range v.ViolatingConstructs {
				w := c.ConstructPath
				if w == "" {
					w = c.Resource.TemplatePath + " " + c.Resource.LogicalID
				}
				where = append(where, w)
			}
			msg := fmt.Sprintf("%s: %s: %s", p.PluginName, v.RuleName, v.Description)
			if len(where) > 0 {
				msg += " (" + strings.Join(where, ", ") + ")"
			}
			if v.Fix != "" {
				msg += ": " + v.Fix
			}
			out = append(out, msg)
		}
	}
	return out, nil
}

// AddChecks adds the checks that run over the templates every synth of app
// writes, as validation plugins, so cdk deploy is gated by them too:
// CDK's CloudFormation validation (addCachedValidation; off with
// CDK_VALIDATION=false, as CDK's built-in one) and the Control Tower
// controls (addControls, with the npm package under the repository root).
// Each keeps its verdict per template in the cloud assembly
// (<outdir>/.dynastack-checks), so a synth checks only the templates that
// changed. Create app with BuiltinCloudFormationValidation false. ran, when
// set, is told each check's time and how many templates it checked.
func AddChecks(app awscdk.App, root string, ran func(check string, d time.Duration, checked, total int)) error {
	dir := filepath.Join(*app.Outdir(), ".dynastack-checks")
	report := func(check string) func(time.Duration, int, int) {
		if ran == nil {
			return nil
		}
		return func(d time.Duration, n, total int) { ran(check, d, n, total) }
	}
	if os.Getenv("CDK_VALIDATION") != "false" {
		addCachedValidation(app, filepath.Join(dir, "cloudformation-validate"), report("CloudFormation validation"))
	}
	opts := controlsPackage(root)
	opts.CacheDir = filepath.Join(dir, "controls")
	opts.Ran = report("Control Tower controls")
	return addControls(app, opts)
}

// Failures lists why the synth of asm failed: the error annotations
// (AnnotationErrors) and the error violations of the validation report
// (validationErrors).
func Failures(asm cxapi.CloudAssembly) []string {
	out := AnnotationErrors(asm)
	verrs, err := validationErrors(*asm.Directory())
	if err != nil {
		verrs = append(verrs, err.Error())
	}
	return append(out, verrs...)
}
